//! The two text formats `/metrics` speaks. The registry encodes OpenMetrics; the Prometheus text
//! format (0.0.4), which scrapers get unless they ask for OpenMetrics, differs in three points
//! that matter here: a counter's `# TYPE` and `# HELP` name the `_total` series it has, there are
//! no `# UNIT` lines, and there is no `# EOF` line.

/// The content type of the Prometheus text format.
pub const PROMETHEUS: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The content type of OpenMetrics.
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Whether an `Accept` header asks for OpenMetrics.
pub fn wants_openmetrics(accept: Option<&str>) -> bool {
    accept.is_some_and(|accept| {
        accept.split(',').any(|part| {
            let mut pieces = part.split(';').map(str::trim);
            let asked = pieces.next() == Some("application/openmetrics-text");
            // A zero weight declines it (RFC 9110 §12.4.2).
            asked && !pieces.any(|parameter| matches!(parameter, "q=0" | "q=0.0" | "q=0.00" | "q=0.000"))
        })
    })
}

/// The Prometheus text format of an OpenMetrics exposition.
pub fn to_prometheus(openmetrics: &str) -> String {
    let counters: Vec<&str> =
        openmetrics.lines().filter_map(|line| line.strip_prefix("# TYPE ")?.strip_suffix(" counter")).collect();
    let mut text = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let described = ["# TYPE ", "# HELP "].into_iter().find_map(|prefix| {
            let rest = line.strip_prefix(prefix)?;
            let (name, tail) = rest.split_once(' ')?;
            counters.contains(&name).then(|| format!("{prefix}{name}_total {tail}"))
        });
        match described {
            Some(renamed) => text.push_str(&renamed),
            None => text.push_str(line),
        }
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_described_by_their_total_and_the_openmetrics_lines_go() {
        let openmetrics = "# HELP app_requests Requests served.\n# TYPE app_requests counter\n\
                           app_requests_total{route=\"/a\"} 3\n# HELP app_queue Waiting.\n# TYPE app_queue gauge\n\
                           app_queue 2\n# HELP app_wait_seconds Waited.\n# TYPE app_wait_seconds counter\n\
                           # UNIT app_wait_seconds seconds\napp_wait_seconds_total 0.5\n# EOF\n";
        assert_eq!(
            to_prometheus(openmetrics),
            "# HELP app_requests_total Requests served.\n# TYPE app_requests_total counter\n\
             app_requests_total{route=\"/a\"} 3\n# HELP app_queue Waiting.\n# TYPE app_queue gauge\napp_queue 2\n\
             # HELP app_wait_seconds_total Waited.\n# TYPE app_wait_seconds_total counter\n\
             app_wait_seconds_total 0.5\n"
        );
    }

    #[test]
    fn openmetrics_is_served_only_to_who_asks_for_it() {
        assert!(!wants_openmetrics(None));
        assert!(!wants_openmetrics(Some("text/plain")));
        assert!(!wants_openmetrics(Some("*/*")));
        assert!(wants_openmetrics(Some(
            "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
        )));
        assert!(!wants_openmetrics(Some("application/openmetrics-text; q=0, text/plain")));
    }
}

//! The process metrics Prometheus client libraries conventionally expose (`process_*`), read from
//! `/proc/self` at each scrape. Where `/proc` is absent the family is simply left out.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

/// Clock ticks a second, as `/proc/self/stat` counts CPU time (`getconf CLK_TCK`, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// Bytes of a memory page (4 KiB on the platforms the service runs on).
const PAGE_BYTES: f64 = 4096.0;

pub fn register(registry: &mut Registry) {
    registry.register_collector(Box::new(Process));
}

#[derive(Debug)]
struct Process;

/// What `/proc/self` tells at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub cpu_seconds: f64,
    pub resident_bytes: f64,
    pub virtual_bytes: f64,
    pub start_time_seconds: f64,
    pub open_fds: f64,
    pub max_fds: f64,
}

/// Reads `/proc/self/stat` (fields after the command name: 14 utime, 15 stime, 22 starttime,
/// 23 vsize, 24 rss) with the boot time of `/proc/stat`, and the open and allowed descriptors.
pub fn read() -> Option<Reading> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let boot = std::fs::read_to_string("/proc/stat").ok()?;
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let open_fds = std::fs::read_dir("/proc/self/fd").ok()?.count() as f64;
    parse(&stat, &boot, &limits, open_fds)
}

fn parse(stat: &str, boot: &str, limits: &str, open_fds: f64) -> Option<Reading> {
    // The command name is in parentheses and may hold spaces: count fields after its end.
    let after = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // `after` starts at field 3 (state), so field n is at index n - 3.
    let field = |n: usize| fields.get(n - 3).and_then(|value| value.parse::<f64>().ok());
    let boot_time = boot.lines().find_map(|line| line.strip_prefix("btime "))?.trim().parse::<f64>().ok()?;
    let max_fds = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .and_then(|line| line.split_whitespace().nth(3))
        .and_then(|soft| soft.parse::<f64>().ok())
        .unwrap_or(f64::INFINITY);
    Some(Reading {
        cpu_seconds: (field(14)? + field(15)?) / TICKS_PER_SECOND,
        resident_bytes: field(24)? * PAGE_BYTES,
        virtual_bytes: field(23)?,
        start_time_seconds: boot_time + field(22)? / TICKS_PER_SECOND,
        open_fds,
        max_fds,
    })
}

impl Collector for Process {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(reading) = read() else { return Ok(()) };
        let cpu = ConstCounter::new(reading.cpu_seconds);
        cpu.encode(encoder.encode_descriptor(
            "process_cpu_seconds",
            "User and system CPU time spent, in seconds",
            None,
            cpu.metric_type(),
        )?)?;
        let gauges = [
            ("process_resident_memory_bytes", "Resident memory size in bytes", reading.resident_bytes),
            ("process_virtual_memory_bytes", "Virtual memory size in bytes", reading.virtual_bytes),
            (
                "process_start_time_seconds",
                "Start time of the process since the Unix epoch",
                reading.start_time_seconds,
            ),
            ("process_open_fds", "Open file descriptors", reading.open_fds),
            ("process_max_fds", "The most file descriptors the process may open", reading.max_fds),
        ];
        for (name, help, value) in gauges {
            let gauge = ConstGauge::new(value);
            gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proc_files_are_read_field_by_field() {
        // A command name with a space and a parenthesis, as the kernel allows.
        let stat = "4242 (cast ell)an) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 9 0 12000 \
                    104857600 2560 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        let boot = "cpu  1 2 3\nbtime 1700000000\nprocesses 10\n";
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max open files            1024                 524288               files\n";
        let reading = parse(stat, boot, limits, 12.0).unwrap();
        assert_eq!(reading.cpu_seconds, 3.0);
        assert_eq!(reading.start_time_seconds, 1_700_000_120.0);
        assert_eq!(reading.virtual_bytes, 104_857_600.0);
        assert_eq!(reading.resident_bytes, 2560.0 * 4096.0);
        assert_eq!((reading.open_fds, reading.max_fds), (12.0, 1024.0));
    }

    #[test]
    fn this_process_is_read() {
        let reading = read().expect("/proc is there on Linux");
        assert!(reading.open_fds > 0.0 && reading.resident_bytes > 0.0 && reading.start_time_seconds > 1.6e9);
    }
}

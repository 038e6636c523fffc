//! An unusual rate of failed sign-ins in a realm, against its own last seven days: an hourly job
//! counts each realm's `login_failed` events of the past hour and of the week before it, and tells
//! the account (`sign_in_failures_unusual`, a warning posted to the notification webhook) when the
//! hour holds at least 20 and three times the week's hourly average. A realm is reported at most
//! once a day. Attack protection's own detections stay its own notifications; this one also sees
//! what no rule measures, such as a client sending a stale password or a broken sign-in page.

use std::collections::HashMap;

use chrono::{DateTime, TimeDelta, Utc};

use crate::operations::notifications::Raised;
use crate::store::events::{self, EventType};
use crate::store::notifications::{self as notification_store, Severity};
use crate::store::{Error, Store};

/// The notification's `type`.
pub const NOTIFICATION_TYPE: &str = "sign_in_failures_unusual";
/// How often the job counts, and the span it compares with the week.
pub const EVERY: TimeDelta = TimeDelta::hours(1);
/// The fewest failures in an hour that can be unusual.
pub const MIN_FAILURES: i64 = 20;
/// How many times the week's hourly average the hour must reach.
pub const FACTOR: i64 = 3;
/// A realm is reported at most once in this long.
const REPORTED_AGAIN_AFTER: TimeDelta = TimeDelta::days(1);

/// Whether `hour` failures are unusual after `week` failures in the 168 hours before.
pub fn unusual(hour: i64, week: i64) -> bool {
    hour >= MIN_FAILURES && hour * 168 >= FACTOR * week
}

/// Counts and reports at `now`; how many realms were reported.
pub async fn watch(store: &Store, now: DateTime<Utc>) -> Result<usize, Error> {
    let hour_start = now - EVERY;
    let recent = events::counts_by_realm(store.pool(), EventType::LoginFailed, hour_start, now).await?;
    let candidates: Vec<_> = recent.into_iter().filter(|(_, _, hour)| *hour >= MIN_FAILURES).collect();
    if candidates.is_empty() {
        return Ok(0);
    }
    let week =
        events::counts_by_realm(store.pool(), EventType::LoginFailed, hour_start - TimeDelta::days(7), hour_start)
            .await?;
    let week: HashMap<(String, String), i64> = week.into_iter().map(|(a, r, n)| ((a, r), n)).collect();
    let mut reported = 0;
    for (account_id, realm_id, hour) in candidates {
        let before = week.get(&(account_id.clone(), realm_id.clone())).copied().unwrap_or(0);
        if !unusual(hour, before) {
            continue;
        }
        let mut tx = store.begin().await?;
        let since = now - REPORTED_AGAIN_AFTER;
        let kind = NOTIFICATION_TYPE;
        if notification_store::raised_before(&mut *tx, &account_id, kind, &realm_id, Severity::Warning, since).await? {
            continue;
        }
        let average = before as f64 / 168.0;
        let notification = Raised {
            account_id: &account_id,
            notification_type: kind,
            severity: Severity::Warning,
            title: format!("Unusual sign-in failures in realm {realm_id}"),
            description: format!(
                "{hour} sign-ins failed in realm {realm_id} within the last hour, against {average:.1} an hour over the \
                 week before. Look at the realm's login_failed events for their reasons and sources."
            ),
            resource_id: Some(&realm_id),
            realm_id: Some(&realm_id),
            webhook: true,
        };
        crate::operations::notifications::raise(&mut tx, notification, now).await?;
        tx.commit().await?;
        reported += 1;
    }
    Ok(reported)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_hour_is_unusual_from_twenty_failures_and_three_times_the_week_s_average() {
        assert!(unusual(20, 0));
        assert!(!unusual(19, 0), "too few to tell");
        // 1,680 failures in the week: 10 an hour on average.
        assert!(unusual(30, 1_680));
        assert!(!unusual(29, 1_680), "under three times the average");
    }
}

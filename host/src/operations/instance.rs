//! The deployment as an account sees it (`/api/v1/dedicated/instance`): what serves it (public
//! address, version, region label, hosts, status) and what the account sets on it — a weekly
//! maintenance window, and the networks its admin API credentials may be used from, enforced on
//! every admin request before the request counts against the caller's limits.

use crate::authz::caller::Caller;
use crate::kernel::address_lists;
use crate::kernel::ids::AccountId;
use crate::kernel::validate::{Body, Rule, integer, list_of, parsed};
use crate::runtime::changes::Author;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::runtime::shutdown::Draining;
use crate::store::changes::Invalidation;
use crate::store::instance_settings::{self, InstanceSettings, MaintenanceWindow};
use crate::store::trail::{Change, ChangeAction, Place, ResourceKind};
use crate::store::{Store, changes};
use chrono::{DateTime, Datelike, Duration, Timelike, Utc};
use serde::Serialize;
use std::net::IpAddr;
use std::sync::Arc;
use utoipa::ToSchema;

/// The days of a window, in `chrono`'s order (Monday first).
pub const WEEKDAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
/// The shortest and longest maintenance window, in minutes.
pub const WINDOW_MINUTES: (u32, u32) = (30, 12 * 60);
/// The most entries an account's admin networks hold.
pub const MAX_ADMIN_NETWORKS: usize = 100;
const MINUTES_A_WEEK: i64 = 7 * 24 * 60;

/// What the answering host says of the deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Serving, outside the account's maintenance window.
    Running,
    /// Serving, inside the account's maintenance window.
    InMaintenanceWindow,
    /// The answering host was told to stop and is being taken out of the balancer.
    Draining,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "Running",
            Self::InMaintenanceWindow => "InMaintenanceWindow",
            Self::Draining => "Draining",
        }
    }
}

/// The minute of the week (from Monday 00:00 UTC) a window starts at.
fn start_of_week_minute(window: &MaintenanceWindow) -> i64 {
    let day = WEEKDAYS.iter().position(|d| *d == window.weekday).unwrap_or_default();
    i64::try_from(day).unwrap_or_default() * 24 * 60 + i64::from(window.start_minute)
}

/// How many minutes into the week (from Monday 00:00 UTC) `at` is.
fn minute_of_week(at: DateTime<Utc>) -> i64 {
    i64::from(at.weekday().num_days_from_monday()) * 24 * 60 + i64::from(at.hour() * 60 + at.minute())
}

/// Whether `at` falls in the window (which may run over midnight and over the week's end).
pub fn in_window(window: &MaintenanceWindow, at: DateTime<Utc>) -> bool {
    (minute_of_week(at) - start_of_week_minute(window)).rem_euclid(MINUTES_A_WEEK) < i64::from(window.duration_minutes)
}

/// When the window next starts after `at` (a window under way started before `at`).
pub fn next_start(window: &MaintenanceWindow, at: DateTime<Utc>) -> DateTime<Utc> {
    let this_minute = at.with_second(0).and_then(|t| t.with_nanosecond(0)).unwrap_or(at);
    let mut ahead = (start_of_week_minute(window) - minute_of_week(at)).rem_euclid(MINUTES_A_WEEK);
    if ahead == 0 && this_minute < at {
        ahead = MINUTES_A_WEEK;
    }
    this_minute + Duration::minutes(ahead)
}

/// `HH:MM` of minutes after midnight.
pub fn clock_time(minutes: u32) -> String {
    format!("{:02}:{:02}", minutes / 60, minutes % 60)
}

/// Minutes after midnight of `HH:MM` (00:00 to 23:59).
pub fn parse_clock_time(text: &str) -> Option<u32> {
    let (hours, minutes) = text.split_once(':')?;
    if hours.len() != 2 || minutes.len() != 2 {
        return None;
    }
    let (hours, minutes): (u32, u32) = (hours.parse().ok()?, minutes.parse().ok()?);
    (hours < 24 && minutes < 60).then_some(hours * 60 + minutes)
}

/// The answering host's status for an account with `settings`.
pub fn status(draining: &Draining, settings: &InstanceSettings, now: DateTime<Utc>) -> Status {
    if draining.is_on() {
        Status::Draining
    } else if settings.maintenance_window.as_ref().is_some_and(|window| in_window(window, now)) {
        Status::InMaintenanceWindow
    } else {
        Status::Running
    }
}

/// The networks the account's admin credentials may be used from, from this host's cache when it
/// holds them.
async fn admin_networks(context: &Context, account_id: &AccountId) -> Result<Arc<Vec<String>>, Error> {
    if let Some(networks) = context.caches.admin_networks(account_id) {
        return Ok(networks);
    }
    let networks = Arc::new(instance_settings::find(context.store.pool(), account_id).await?.admin_networks);
    context.caches.keep_admin_networks(account_id, networks.clone());
    Ok(networks)
}

/// Whether a credential of the account may call the admin API from `address`.
pub async fn admits_admin_call(context: &Context, account_id: &AccountId, address: IpAddr) -> Result<bool, Error> {
    Ok(address_lists::admits(&admin_networks(context, account_id).await?, address))
}

/// Empties the admin networks of `account` (of every account without one), so that its
/// credentials work from anywhere again: the way back in when the addresses an account allowed
/// are no longer its own. Announced to every running host on PostgreSQL; on SQLite the serving
/// host's cache keeps the old list for up to a minute. The accounts whose list was emptied.
pub async fn open_admin_networks(
    store: &Store,
    account: Option<&AccountId>,
    now: DateTime<Utc>,
) -> Result<Vec<AccountId>, Error> {
    let mut tx = store.begin().await?;
    let opened = instance_settings::open_admin_networks(&mut *tx, account, now).await?;
    for account in &opened {
        // No host waits on this command's changes: it only tells them.
        drop(changes::announce(store, &mut tx, &Invalidation::Account(account.clone())).await?);
    }
    tx.commit().await?;
    Ok(opened)
}

/// What the trail keeps of a change of the settings: the settings alone.
fn settings_record(settings: &InstanceSettings) -> serde_json::Value {
    serde_json::json!({
        "maintenanceWindow": settings.maintenance_window.as_ref().map(|window| serde_json::json!({
            "weekday": window.weekday,
            "startTime": clock_time(window.start_minute),
            "durationMinutes": window.duration_minutes,
        })),
        "adminNetworks": settings.admin_networks,
    })
}

/// Puts the account's settings on the deployment in force on every host: `current` becomes `next`,
/// trailed as a change of the instance.
pub async fn change_settings(
    context: &Context,
    account_id: &AccountId,
    current: &InstanceSettings,
    mut next: InstanceSettings,
    by: Author<'_>,
) -> Result<InstanceSettings, Error> {
    let now = context.clock.now();
    next.updated_at = Some(now);
    let mut tx = context.store.begin().await?;
    instance_settings::save(&mut *tx, account_id, &next, now).await?;
    let place = Place::outside_realms(ResourceKind::DedicatedInstance, account_id);
    let change =
        Change::of(ChangeAction::Update, place, 200).before(settings_record(current)).after(settings_record(&next));
    crate::runtime::changes::commit(context, by, tx, change).await?;
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).map(|t| t.with_timezone(&Utc)).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn window(weekday: &str, start: &str, duration_minutes: u32) -> MaintenanceWindow {
        let start_minute = parse_clock_time(start).unwrap_or_else(|| panic!("{start}"));
        MaintenanceWindow { weekday: weekday.to_owned(), start_minute, duration_minutes }
    }

    #[test]
    fn a_window_holds_its_own_minutes_also_over_midnight_and_the_weeks_end() {
        // 2030-01-06 is a Sunday.
        let sunday_night = window("Sunday", "23:00", 120);
        assert!(!in_window(&sunday_night, at("2030-01-06T22:59:59Z")));
        assert!(in_window(&sunday_night, at("2030-01-06T23:00:00Z")));
        assert!(in_window(&sunday_night, at("2030-01-07T00:59:00Z")), "Monday morning, a new week");
        assert!(!in_window(&sunday_night, at("2030-01-07T01:00:00Z")));
        assert!(!in_window(&sunday_night, at("2030-01-09T23:30:00Z")), "another day at the same hour");
    }

    #[test]
    fn the_next_start_is_the_coming_one() {
        let tuesday = window("Tuesday", "02:30", 60);
        // 2030-01-07 is a Monday.
        assert_eq!(next_start(&tuesday, at("2030-01-07T12:00:00Z")), at("2030-01-08T02:30:00Z"));
        assert_eq!(next_start(&tuesday, at("2030-01-08T02:30:00Z")), at("2030-01-08T02:30:00Z"));
        assert_eq!(next_start(&tuesday, at("2030-01-08T02:30:10Z")), at("2030-01-15T02:30:00Z"));
        assert_eq!(next_start(&tuesday, at("2030-01-08T03:00:00Z")), at("2030-01-15T02:30:00Z"));
    }

    #[test]
    fn clock_times_read_and_write_as_hours_and_minutes() {
        assert_eq!(parse_clock_time("02:30"), Some(150));
        assert_eq!(parse_clock_time("23:59"), Some(1439));
        assert_eq!(clock_time(150), "02:30");
        for refused in ["24:00", "2:30", "02:60", "0230", "ab:cd", ""] {
            assert_eq!(parse_clock_time(refused), None, "{refused}");
        }
    }
}

/// The deployment, and what the account set on it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstanceView {
    /// The address every issuer, page and API of the deployment is under.
    pub public_url: String,
    /// The Castellan version of the host that answered.
    pub version: String,
    /// The deployment's region label (setting `region`); omitted when none is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// `Running`, `InMaintenanceWindow` (inside the account's window) or `Draining` (the
    /// answering host is stopping).
    pub status: String,
    /// The hosts serving the deployment together (1 on SQLite).
    pub hosts: usize,
    /// `SQLite` or `PostgreSQL`.
    pub database: String,
    /// Whether the admin limits and attack-protection counters are shared by every host (Redis).
    pub shared_counters: bool,
    /// The weekly window, in UTC, in which the account expects maintenance; omitted when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maintenance_window: Option<WindowView>,
    /// Addresses and CIDR networks the account's admin credentials may be used from; empty:
    /// anywhere.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub admin_networks: Vec<String>,
    /// The address this request came from, as the deployment sees it: what `adminNetworks` must
    /// admit.
    pub caller_address: String,
    /// When the account last changed its settings; omitted when it never did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

/// A weekly maintenance window in UTC.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WindowView {
    /// `Monday` … `Sunday`.
    pub weekday: String,
    /// `HH:MM`, UTC.
    pub start_time: String,
    pub duration_minutes: u32,
    /// When the window next starts (a window under way started earlier).
    pub next_start_at: String,
}

/// The body of a change: each field omitted keeps its value.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct InstanceInput {
    /// `{weekday, startTime ("HH:MM", UTC), durationMinutes (30–720)}`; `null` removes the window.
    #[schema(value_type = Option<Value>)]
    pub(crate) maintenance_window: Option<Option<MaintenanceWindow>>,
    /// Up to 100 addresses or CIDR networks, which must admit the caller's own address; `[]`:
    /// anywhere.
    pub(crate) admin_networks: Option<Vec<String>>,
}

impl InstanceInput {
    /// The fields `body` gives; networks that would shut `caller` out are refused.
    pub(crate) fn read(body: &mut Body, caller: &Caller) -> Self {
        let maintenance_window = body.has("maintenanceWindow").then(|| match body.nested("maintenanceWindow") {
            Some(nested) => window(body, nested),
            None => None,
        });
        let networks = body.optional("adminNetworks", list_of(MAX_ADMIN_NETWORKS, address_lists::entry));
        let admin_networks = networks.and_then(|networks| match shuts_out(&networks, caller) {
            Some(problem) => {
                body.refuse("adminNetworks", Rule::Conflict, problem);
                None
            }
            None => Some(networks),
        });
        Self { maintenance_window, admin_networks }
    }

    /// Changes the settings given on `settings`.
    pub(crate) fn apply(self, settings: &mut InstanceSettings) {
        settings.maintenance_window = self.maintenance_window.unwrap_or(settings.maintenance_window.take());
        settings.admin_networks = self.admin_networks.unwrap_or(std::mem::take(&mut settings.admin_networks));
    }
}

/// The window a body's `maintenanceWindow` object describes.
pub(crate) fn window(body: &mut Body, mut nested: Body) -> Option<MaintenanceWindow> {
    let weekday = nested.required(
        "weekday",
        parsed(|text| {
            let named = WEEKDAYS.iter().find(|day| **day == text);
            named.ok_or_else(|| (Rule::OneOf, format!("must be one of {}", WEEKDAYS.join(", "))))
        }),
    );
    let start = nested.required(
        "startTime",
        parsed(|text| {
            parse_clock_time(text).ok_or((Rule::Format, "must be a time of day as HH:MM, in UTC".to_owned()))
        }),
    );
    let (shortest, longest) = WINDOW_MINUTES;
    let duration = nested.required("durationMinutes", integer(shortest.into(), longest.into()));
    body.absorb(nested);
    Some(MaintenanceWindow {
        weekday: (*weekday?).to_owned(),
        start_minute: start?,
        duration_minutes: u32::try_from(duration?).ok()?,
    })
}

/// Why `networks` cannot be set by this caller, if they cannot: they would shut it out.
pub(crate) fn shuts_out(networks: &[String], caller: &Caller) -> Option<String> {
    let address: Option<IpAddr> = caller.actor.ip_address.parse().ok();
    let admitted = networks.is_empty() || address.is_some_and(|address| address_lists::admits(networks, address));
    (!admitted).then(|| {
        format!(
            "adminNetworks must admit the address this request comes from ({}), or the account would shut itself out",
            caller.actor.ip_address
        )
    })
}

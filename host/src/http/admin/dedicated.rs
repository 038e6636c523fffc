//! `/dedicated/instance`: the deployment serving the caller's account — its public address,
//! version, region label, hosts and status — with the account's maintenance window and the
//! networks its admin credentials may be used from. Reading needs `account:read`, changing
//! `account:update`. Served at `/api/v1/dedicated/instance` and under the admin API's base.

use std::net::IpAddr;

use axum::extract::State;
use axum::response::Response;
use serde::Serialize;
use utoipa::ToSchema;

use crate::authz::permission;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::address_lists;
use crate::kernel::clock::iso;
use crate::kernel::validate::{Body, Rule, integer, list_of, parsed};
use crate::operations::instance::{self, MAX_ADMIN_NETWORKS, WEEKDAYS, WINDOW_MINUTES};
use crate::runtime::error::Error;
use crate::store::changes;
use crate::store::instance_settings::{self, InstanceSettings, MaintenanceWindow};

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
    maintenance_window: Option<Option<MaintenanceWindow>>,
    /// Up to 100 addresses or CIDR networks, which must admit the caller's own address; `[]`:
    /// anywhere.
    admin_networks: Option<Vec<String>>,
}

impl InstanceInput {
    /// The fields `body` gives; networks that would shut `caller` out are refused.
    fn read(body: &mut Body, caller: &Caller) -> Self {
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
    fn apply(self, settings: &mut InstanceSettings) {
        settings.maintenance_window = self.maintenance_window.unwrap_or(settings.maintenance_window.take());
        settings.admin_networks = self.admin_networks.unwrap_or(std::mem::take(&mut settings.admin_networks));
    }
}

fn view(state: &AppState, caller: &Caller, settings: InstanceSettings, hosts: usize) -> InstanceView {
    let now = state.clock.now();
    InstanceView {
        public_url: state.public_url.clone(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        region: state.settings.region.clone(),
        status: instance::status(&state.draining, &settings, now).as_str().to_owned(),
        hosts,
        database: state.store.product().to_owned(),
        shared_counters: state.settings.redis_url.is_some(),
        maintenance_window: settings.maintenance_window.map(|window| WindowView {
            start_time: instance::clock_time(window.start_minute),
            duration_minutes: window.duration_minutes,
            next_start_at: iso(instance::next_start(&window, now)),
            weekday: window.weekday,
        }),
        admin_networks: settings.admin_networks,
        caller_address: caller.actor.ip_address.clone(),
        updated_at: settings.updated_at.map(iso),
    }
}

#[utoipa::path(get, path = "/dedicated/instance", tag = "Dedicated environment",
    responses((status = 200, description = "The deployment serving the account and the account's settings on it, in `data`", body = InstanceView),
              (status = 403)),
    security(("apiKey" = [])))]
pub async fn read(State(state): State<AppState>, caller: Caller) -> Result<Response, Error> {
    caller.require_account(&state, permission::ACCOUNT_READ)?;
    let settings = instance_settings::find(state.store.pool(), caller.account_id()).await?;
    let hosts = changes::hosts(&state.store).await?;
    Ok(envelope::ok(view(&state, &caller, settings, hosts)))
}

/// The window a body's `maintenanceWindow` object describes.
fn window(body: &mut Body, mut nested: Body) -> Option<MaintenanceWindow> {
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
            instance::parse_clock_time(text).ok_or((Rule::Format, "must be a time of day as HH:MM, in UTC".to_owned()))
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
fn shuts_out(networks: &[String], caller: &Caller) -> Option<String> {
    let address: Option<IpAddr> = caller.actor.ip_address.parse().ok();
    let admitted = networks.is_empty() || address.is_some_and(|address| address_lists::admits(networks, address));
    (!admitted).then(|| {
        format!(
            "adminNetworks must admit the address this request comes from ({}), or the account would shut itself out",
            caller.actor.ip_address
        )
    })
}

#[utoipa::path(put, path = "/dedicated/instance", tag = "Dedicated environment",
    request_body = InstanceInput,
    responses((status = 200, description = "The deployment and the account's settings now in force on every host, in `data`", body = InstanceView),
              (status = 400, description = "ValidationFailed: a bad window or network, or networks that do not admit the caller's own address"),
              (status = 403)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    caller.require_account(&state, permission::ACCOUNT_UPDATE)?;
    let current = instance_settings::find(state.store.pool(), caller.account_id()).await?;
    let mut next = current.clone();
    let input = InstanceInput::read(&mut body, &caller);
    body.finish()?;
    input.apply(&mut next);
    let next = instance::change_settings(&state, caller.account_id(), &current, next, caller.author()).await?;
    let hosts = changes::hosts(&state.store).await?;
    Ok(envelope::ok(view(&state, &caller, next, hosts)))
}

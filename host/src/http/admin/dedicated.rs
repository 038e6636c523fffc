//! `/dedicated/instance`: the deployment serving the caller's account — its public address,
//! version, region label, hosts and status — with the account's maintenance window and the
//! networks its admin credentials may be used from. Reading needs `account:read`, changing
//! `account:update`. Served at `/api/v1/dedicated/instance` and under the admin API's base.

use axum::extract::State;
use axum::response::Response;

use crate::authz::permission;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::clock::iso;
use crate::operations::instance::{self};
use crate::operations::instance::{InstanceInput, InstanceView, WindowView};
use crate::runtime::error::Error;
use crate::store::changes;
use crate::store::instance_settings::{self, InstanceSettings};

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
    caller.require_account(&state.authz, permission::ACCOUNT_READ)?;
    let settings = instance_settings::find(state.store.pool(), caller.account_id()).await?;
    let hosts = changes::hosts(&state.store).await?;
    Ok(envelope::ok(view(&state, &caller, settings, hosts)))
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
    caller.require_account(&state.authz, permission::ACCOUNT_UPDATE)?;
    let current = instance_settings::find(state.store.pool(), caller.account_id()).await?;
    let mut next = current.clone();
    let input = InstanceInput::read(&mut body, &caller);
    body.finish()?;
    input.apply(&mut next);
    let next = instance::change_settings(&state, caller.account_id(), &current, next, caller.author()).await?;
    let hosts = changes::hosts(&state.store).await?;
    Ok(envelope::ok(view(&state, &caller, next, hosts)))
}

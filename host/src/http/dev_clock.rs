//! `GET/POST /_dev/clock`, present only with `--manual-clock`: read, set or advance time. An
//! advance runs every job, webhook delivery and notification post that became due before it
//! answers, and runs to its end whether or not the caller waits for the answer.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use chrono::TimeDelta;
use serde::Serialize;

use super::body::JsonBody;
use super::envelope::{self, Unrouted};
use crate::http::AppState;
use crate::kernel::clock::{Clock, iso};
use crate::kernel::validate::{Rule, instant, integer};
use crate::runtime::error::Error;

#[derive(Debug, Serialize)]
struct ClockView {
    now: String,
}

pub async fn read(State(state): State<AppState>) -> Response {
    envelope::ok(ClockView { now: iso(state.clock.now()) })
}

/// Body: `{"advanceSeconds": n}` (n ≥ 0) or `{"set": "2030-01-01T00:00:00Z"}` (not backwards).
pub async fn change(State(state): State<AppState>, JsonBody(mut body): JsonBody) -> Result<Response, Error> {
    let Some(clock) = state.manual_clock.clone() else {
        return Ok(Unrouted::NoRoute.into_response());
    };
    let advance = body.optional("advanceSeconds", integer(0, 10 * 365 * 86_400));
    let set = body.optional("set", instant);
    let now = clock.now();
    if advance.is_some() == set.is_some() {
        body.refuse("advanceSeconds", Rule::Required, "send either advanceSeconds or set");
    }
    if set.is_some_and(|to| to < now) {
        body.refuse("set", Rule::Range, "time does not run backwards");
    }
    body.finish()?;
    let target = match (advance, set) {
        (Some(seconds), _) => now + TimeDelta::seconds(seconds),
        (_, Some(to)) => to,
        _ => now,
    };
    // The advance runs to its end even when the caller goes away (a proxy's timeout, a client
    // giving up): cut halfway, it would leave webhook attempts claimed and never recorded, held
    // by their lease on a clock that no longer moves by itself.
    let (advancing, moved) = (state.clone(), clock.clone());
    tokio::spawn(async move { crate::application::jobs::advance_manual_clock(&advancing, &moved, target).await })
        .await
        .map_err(|error| anyhow::anyhow!("advancing the clock failed: {error}"))?;
    Ok(envelope::ok(ClockView { now: iso(clock.now()) }))
}

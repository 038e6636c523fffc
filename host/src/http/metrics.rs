//! `GET /metrics` serves the registry (`crate::runtime::metrics`) once the gauges read at scrape time are
//! set: in the Prometheus text format, or in OpenMetrics when the `Accept` header asks for it.
//! Requests are observed in `http::observe`.

use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};

use crate::http::AppState;
use crate::runtime::metrics::{readings, text};

pub async fn render(State(state): State<AppState>, headers: HeaderMap) -> Response {
    readings::refresh(&state, &state.access_log).await;
    let openmetrics = state.metrics.render();
    let accept = headers.get(header::ACCEPT).and_then(|value| value.to_str().ok());
    if text::wants_openmetrics(accept) {
        ([(header::CONTENT_TYPE, text::OPENMETRICS)], openmetrics).into_response()
    } else {
        ([(header::CONTENT_TYPE, text::PROMETHEUS)], text::to_prometheus(&openmetrics)).into_response()
    }
}

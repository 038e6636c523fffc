//! The metrics edge: every request is observed by route template and status, and `GET /metrics`
//! serves the registry (`crate::metrics`).

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::metrics::HttpLabels;

pub async fn observe(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let _in_flight = state.metrics.request_started();
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    let response = next.run(request).await;
    let labels = HttpLabels { method, route, status: response.status().as_u16() };
    state.metrics.http_request(&labels, started.elapsed().as_secs_f64());
    response
}

pub async fn render(State(state): State<AppState>) -> Response {
    ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], state.metrics.render())
        .into_response()
}

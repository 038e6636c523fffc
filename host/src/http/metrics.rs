//! `GET /metrics` serves the registry (`crate::metrics`); requests are observed in `http::observe`.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::AppState;

pub async fn render(State(state): State<AppState>) -> Response {
    ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], state.metrics.render())
        .into_response()
}

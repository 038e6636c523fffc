//! The HTTP edge: routing, middleware, and the mapping of domain errors to responses.

pub mod address;
pub mod admin;
pub mod auth;
pub mod body;
pub mod capture;
pub mod connections;
pub mod console;
pub mod dev_clock;
pub mod envelope;
pub mod metrics;
pub mod nul;
pub mod observe;
pub mod openapi;
pub mod protocol;
pub mod qr;
pub mod request_id;

use axum::Router;
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};

use crate::Services;
use crate::http::envelope::Unrouted;
use crate::runtime::error::Error;

/// The admin API: `/api/v1/admin`, and the dedicated-environment operations at their own address.
fn admin_api(state: &AppState) -> Router<AppState> {
    let admin = admin::routes()
        .route_layer(from_fn(nul::refuse_in_admin))
        .route_layer(from_fn_with_state(state.clone(), auth::authenticate))
        .route("/openapi.json", get(openapi::document))
        // The invitation token is the credential here.
        .route("/account/invitations/accept", post(admin::account::accept_invitation))
        .fallback(|| async { Unrouted::NoRoute })
        .method_not_allowed_fallback(|| async { Unrouted::MethodNotAllowed });

    // The dedicated-environment operations at their own address, as under the admin API.
    let dedicated = Router::new()
        .route("/api/v1/dedicated/instance", get(admin::dedicated::read).put(admin::dedicated::update))
        .route_layer(from_fn(nul::refuse_in_admin))
        .route_layer(from_fn_with_state(state.clone(), auth::authenticate));

    Router::new().nest("/api/v1/admin", admin).merge(dedicated)
}

/// What every handler holds: the host's services. Cloning it is one reference count.
#[derive(Debug, Clone)]
pub struct AppState(pub Arc<Services>);

impl std::ops::Deref for AppState {
    type Target = Services;
    fn deref(&self) -> &Services {
        &self.0
    }
}

impl AppState {
    /// What the admin operations work with: the context and the policies.
    pub fn admin(&self) -> crate::directory::reach::Admin<'_> {
        crate::directory::reach::Admin { context: self, authz: &self.authz }
    }
}

/// Serves the edges on `listener`, behind the connection limits, until `stopped` completes; the
/// requests in flight then finish.
pub async fn serve(
    listener: tokio::net::TcpListener,
    services: Arc<Services>,
    stopped: crate::application::Stopped,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let state = AppState(services);
    let settings = &state.settings;
    let limits = connections::Limits {
        header_read: chrono::TimeDelta::seconds(settings.header_read_timeout_seconds.into()),
        idle: chrono::TimeDelta::seconds(settings.idle_timeout_seconds.into()),
        max_connections: usize::try_from(settings.max_connections).unwrap_or(usize::MAX),
    };
    let listener = connections::Guarded::new(listener, limits, state.clock.clone(), state.metrics.clone());
    let router = router(state.clone());
    axum::serve(listener, router.into_make_service_with_connect_info::<connections::Peer>())
        .with_graceful_shutdown(stopped)
        .await
        .context("server failed")
}

/// The whole service: admin API, console, operations endpoints and, with the manual clock,
/// `/_dev/clock`.
pub fn router(state: AppState) -> Router {
    let console = console::routes(&state);
    let mut app = admin_api(&state)
        .merge(console)
        .merge(protocol::routes())
        .merge(
            Router::new()
                .route("/captures/{token}", any(capture::receive))
                .route("/captures/{token}/{*rest}", any(capture::receive))
                .route_layer(from_fn(nul::refuse_in_admin)),
        )
        .route("/favicon.ico", get(favicon))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(ready))
        .route("/metrics", get(metrics::render));
    if state.manual_clock.is_some() {
        app = app.route("/_dev/clock", get(dev_clock::read).post(dev_clock::change));
    }
    app.fallback(|| async { Unrouted::NoRoute })
        .method_not_allowed_fallback(|| async { Unrouted::MethodNotAllowed })
        .layer(DefaultBodyLimit::max(state.settings.max_body_bytes))
        .layer(from_fn_with_state(state.clone(), observe::observe))
        .layer(from_fn_with_state(state.clone(), address::attach))
        .layer(from_fn(request_id::assign))
        .with_state(state)
}

/// Ready when the database answers.
async fn ready(State(state): State<AppState>) -> Response {
    if state.draining.is_on() {
        return (StatusCode::SERVICE_UNAVAILABLE, "draining").into_response();
    }
    match state.store.ping().await {
        Ok(()) => "ready".into_response(),
        Err(error) => Error::Unavailable(error.into()).into_response(),
    }
}

/// The service's icon, which browsers ask for on every page: a tower in 16 and 32 pixels.
async fn favicon() -> impl axum::response::IntoResponse {
    const ICON: &[u8] = include_bytes!("../../assets/favicon.ico");
    (
        [
            (axum::http::header::CONTENT_TYPE, "image/x-icon"),
            (axum::http::header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        ICON,
    )
}

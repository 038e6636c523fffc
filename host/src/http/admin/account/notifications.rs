//! The account's notification preferences and its operational notifications.

use axum::extract::{RawQuery, State};

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::operations::admin::notifications as admin;
use crate::operations::notifications::{NotificationView, PreferencesInput, PreferencesView};
use crate::runtime::error::Error;

#[utoipa::path(get, path = "/account/notification-preferences", tag = "Account",
    responses((status = 200, description = "The account's notification preferences, in `data`", body = PreferencesView)),
    security(("apiKey" = [])))]
pub async fn preferences(State(state): State<AppState>, caller: Caller) -> Result<Answer<PreferencesView>, Error> {
    admin::preferences(&state.admin(), caller).await
}

#[utoipa::path(put, path = "/account/notification-preferences", tag = "Account", request_body = PreferencesInput,
    responses((status = 200, description = "The preferences as stored, in `data`", body = PreferencesView), (status = 400)),
    security(("apiKey" = [])))]
pub async fn update_preferences(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<Answer<PreferencesView>, Error> {
    admin::update_preferences(&state.admin(), caller, body).await
}

#[utoipa::path(get, path = "/account/notifications", tag = "Account",
    params(("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query, description = "Matched against title, description and type"),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query)),
    responses((status = 200, description = "A page of the account's operational notifications, newest first, in `pagination`", body = [NotificationView])),
    security(("apiKey" = [])))]
pub async fn notifications(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer<NotificationView>, Error> {
    admin::notifications(&state.admin(), caller, query).await
}

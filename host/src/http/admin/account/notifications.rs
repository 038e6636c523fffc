//! The account's notification preferences and its operational notifications.

use crate::operations::notifications;
use axum::extract::{RawQuery, State};

use crate::authz::permission;
use crate::http::AppState;
use crate::http::admin::ListQuery;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::operations::notifications::{NotificationView, PreferencesInput, PreferencesView};
use crate::runtime::error::Error;
use crate::store::notifications::{self as notification_store};

#[utoipa::path(get, path = "/account/notification-preferences", tag = "Account",
    responses((status = 200, description = "The account's notification preferences, in `data`", body = PreferencesView)),
    security(("apiKey" = [])))]
pub async fn preferences(State(state): State<AppState>, caller: Caller) -> Result<Answer<PreferencesView>, Error> {
    caller.require_account(&state.authz, permission::ACCOUNT_READ)?;
    let preferences = notification_store::preferences(state.store.pool(), caller.account_id()).await?;
    Ok(Answer::Ok(PreferencesView::of(preferences)))
}

#[utoipa::path(put, path = "/account/notification-preferences", tag = "Account", request_body = PreferencesInput,
    responses((status = 200, description = "The preferences as stored, in `data`", body = PreferencesView), (status = 400)),
    security(("apiKey" = [])))]
pub async fn update_preferences(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<PreferencesView>, Error> {
    caller.require_account(&state.authz, permission::ACCOUNT_UPDATE)?;
    let input = PreferencesInput::read(&state, &mut body).await;
    body.finish()?;
    Ok(Answer::Ok(notifications::change_preferences(&state, caller.account_id(), input, caller.author()).await?))
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
    caller.require_account(&state.authz, permission::ACCOUNT_READ)?;
    let list = ListQuery::parse(query, &[])?;
    let found = notification_store::page(&state.store, caller.account_id(), &list.page).await?;
    Ok(Answer::Paged(found.map(NotificationView::of)))
}

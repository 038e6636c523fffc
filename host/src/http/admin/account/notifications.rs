//! The account's notification preferences and its operational notifications.

use axum::extract::{RawQuery, State};
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::authz::permission;
use crate::http::AppState;
use crate::http::admin::webhooks::check_url;
use crate::http::admin::{ListQuery, commit};
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::kernel::clock::iso;
use crate::kernel::validate::{Body, one_of};
use crate::runtime::error::Error;
use crate::store::notifications::{self as notification_store, AttacksDetected, Notification, Preferences};
use crate::store::trail::{Change, ChangeAction, Place, ResourceKind};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreferencesView {
    /// Where operational notifications are posted, unsigned; absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook_url: Option<String>,
    /// `InConsole` (the default), `EmailAndWebhook` (also e-mailed to the team's Owners and posted
    /// to the webhook URL) or `Off` (not raised at all).
    pub attacks_detected: AttacksDetected,
}

impl PreferencesView {
    fn of(preferences: Preferences) -> Self {
        Self { webhook_url: preferences.webhook_url, attacks_detected: preferences.attacks_detected }
    }
}

#[utoipa::path(get, path = "/account/notification-preferences", tag = "Account",
    responses((status = 200, description = "The account's notification preferences, in `data`", body = PreferencesView)),
    security(("apiKey" = [])))]
pub async fn preferences(State(state): State<AppState>, caller: Caller) -> Result<Answer<PreferencesView>, Error> {
    caller.require_account(&state, permission::ACCOUNT_READ)?;
    let preferences = notification_store::preferences(state.store.pool(), caller.account_id()).await?;
    Ok(Answer::Ok(PreferencesView::of(preferences)))
}

#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct PreferencesInput {
    /// Absolute `https://` address resolving to public addresses only (as webhook URLs); `null`
    /// stops the posts. Omitted keeps the current one.
    #[schema(value_type = Option<String>)]
    webhook_url: Option<Option<String>>,
    /// `InConsole`, `EmailAndWebhook` or `Off`. Omitted keeps the current choice.
    attacks_detected: Option<AttacksDetected>,
}

impl PreferencesInput {
    /// The fields `body` gives; an address is checked as a webhook's is.
    async fn read(state: &AppState, body: &mut Body) -> Self {
        let limit = crate::http::admin::webhooks::MAX_URL_LENGTH + 1;
        let webhook_url = body.nullable("webhookUrl", crate::kernel::validate::text(1, limit));
        if let Some(Some(url)) = &webhook_url {
            check_url(state, body, "webhookUrl", url).await;
        }
        let attacks_detected = body.optional("attacksDetected", one_of(AttacksDetected::NAMES));
        Self { webhook_url, attacks_detected }
    }

    /// Changes the preferences given on `preferences`.
    fn apply(self, preferences: &mut Preferences) {
        preferences.webhook_url = self.webhook_url.unwrap_or(preferences.webhook_url.take());
        preferences.attacks_detected = self.attacks_detected.unwrap_or(preferences.attacks_detected);
    }
}

#[utoipa::path(put, path = "/account/notification-preferences", tag = "Account", request_body = PreferencesInput,
    responses((status = 200, description = "The preferences as stored, in `data`", body = PreferencesView), (status = 400)),
    security(("apiKey" = [])))]
pub async fn update_preferences(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<PreferencesView>, Error> {
    caller.require_account(&state, permission::ACCOUNT_UPDATE)?;
    let current = notification_store::preferences(state.store.pool(), caller.account_id()).await?;
    let mut next = current.clone();
    let input = PreferencesInput::read(&state, &mut body).await;
    body.finish()?;
    input.apply(&mut next);
    next.updated_at = state.clock.now();
    let mut tx = state.store.begin().await?;
    notification_store::save_preferences(&mut *tx, &next).await?;
    let view = PreferencesView::of(next);
    let before = json!(PreferencesView::of(current));
    let change = Change::of(
        ChangeAction::Update,
        Place::outside_realms(ResourceKind::NotificationPreferences, caller.account_id()),
        200,
    )
    .before(before)
    .after(&view);
    commit(&state, &caller, tx, change).await?;
    Ok(Answer::Ok(view))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotificationView {
    pub id: String,
    /// What happened, such as `webhook_disabled`.
    #[serde(rename = "type")]
    pub notification_type: String,
    /// Info, Warning or Critical.
    pub severity: String,
    pub title: String,
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub realm_id: Option<String>,
    pub created_at: String,
    /// The post to the notification webhook: None (no URL was set), Pending, Sent or Failed.
    pub webhook_post: String,
    /// Posts tried so far (at most 3: at once, a minute later, five minutes after that).
    pub webhook_post_attempts: i64,
}

impl NotificationView {
    fn of(n: Notification) -> Self {
        Self {
            webhook_post: n.post_status.as_str().to_owned(),
            webhook_post_attempts: n.post_attempts,
            id: n.id.into(),
            notification_type: n.notification_type,
            severity: n.severity.as_str().to_owned(),
            title: n.title,
            description: n.description,
            resource_id: n.resource_id,
            realm_id: n.realm_id.map(String::from),
            created_at: iso(n.created_at),
        }
    }
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
    caller.require_account(&state, permission::ACCOUNT_READ)?;
    let list = ListQuery::parse(query, &[])?;
    let found = notification_store::page(&state.store, caller.account_id(), &list.page).await?;
    Ok(Answer::Paged(found.map(NotificationView::of)))
}

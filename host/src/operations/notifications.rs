//! The account's operational notifications: raised inside the
//! transaction of what caused them, shown in the console, and posted unsigned to the webhook URL of
//! the account's notification preferences by a worker of their own, apart from the delivery
//! history of event webhooks.

use crate::kernel::backoff::{Backoff, WORKER_CEILING};
use crate::kernel::clock::iso;
use crate::kernel::ids::{AccountId, NotificationId, RealmId};
use crate::kernel::validate::{Body, one_of};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Error as StoreError;
use crate::store::notifications::{
    self as store, self as notification_store, AttacksDetected, Notification, PostStatus, Preferences, Severity,
};
use crate::store::trail::{Change, ChangeAction, Place, ResourceKind};
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use utoipa::ToSchema;

/// How often an idle worker looks for posts that fell due.
const IDLE_POLL: Duration = Duration::from_millis(100);
/// How long a claimed post is this worker's before another may take it.
const LEASE: TimeDelta = TimeDelta::minutes(1);
/// Posts claimed per round.
const BATCH: i64 = 20;
/// Waits before the second and third attempt; after the third failure the post is Failed.
const RETRY_DELAYS: [TimeDelta; 2] = [TimeDelta::minutes(1), TimeDelta::minutes(5)];

/// What raised a notification.
#[derive(Debug, Clone)]
pub struct Raised<'a> {
    pub account_id: &'a str,
    pub notification_type: &'a str,
    pub severity: Severity,
    pub title: String,
    pub description: String,
    pub resource_id: Option<&'a str>,
    pub realm_id: Option<&'a str>,
    /// Posted to the notification webhook URL, when the preferences set one.
    pub webhook: bool,
}

/// Stores the notification in the transaction of what caused it; unless told otherwise it is posted
/// to the webhook URL the preferences name at this moment, if any.
pub async fn raise(
    tx: &mut crate::store::Connection,
    raised: Raised<'_>,
    now: DateTime<Utc>,
) -> Result<String, StoreError> {
    let preferences = store::preferences(&mut *tx, raised.account_id).await?;
    let notification = Notification {
        id: NotificationId::fresh(),
        account_id: AccountId::known(raised.account_id),
        notification_type: raised.notification_type.to_owned(),
        severity: raised.severity,
        title: raised.title,
        description: raised.description,
        resource_id: raised.resource_id.map(str::to_owned),
        realm_id: raised.realm_id.map(RealmId::known),
        created_at: now,
        post_status: if raised.webhook && preferences.webhook_url.is_some() {
            PostStatus::Pending
        } else {
            PostStatus::None
        },
        post_url: preferences.webhook_url.filter(|_| raised.webhook),
        post_attempts: 0,
        post_last_error: None,
    };
    store::insert(&mut *tx, &notification).await?;
    Ok(notification.id.into())
}

/// The body posted for a notification (the documented field names).
fn body(n: &Notification) -> serde_json::Value {
    json!({
        "id": n.id,
        "type": n.notification_type,
        "severity": n.severity.as_str(),
        "title": n.title,
        "description": n.description,
        "resource_id": n.resource_id,
        "realm_id": n.realm_id,
        "created_at": iso(n.created_at),
    })
}

/// Posts due notifications until the service stops; failures are logged and retried.
pub async fn run(context: Arc<Context>) {
    let mut backoff = Backoff::new("account notifications", IDLE_POLL, WORKER_CEILING);
    loop {
        match post_due(&context).await {
            Ok(posted) => {
                backoff.succeeded();
                if posted == 0 {
                    tokio::time::sleep(IDLE_POLL).await;
                }
            }
            Err(error) => tokio::time::sleep(backoff.failed(&format!("{error:#}"))).await,
        }
    }
}

/// Posts every notification due at the clock's time, and those that fell due meanwhile: the
/// manual clock's step.
pub async fn settle(context: &Context) -> anyhow::Result<()> {
    while post_due(context).await? > 0 {}
    Ok(())
}

async fn post_due(context: &Context) -> anyhow::Result<usize> {
    let now = context.clock.now();
    let due = store::claim_due(&context.store, now, now + LEASE, BATCH).await?;
    let count = due.len();
    let posts = due.into_iter().map(|n| async move {
        let outcome = post(context, &n).await;
        (n, outcome)
    });
    for (n, outcome) in futures_util::future::join_all(posts).await {
        let now = context.clock.now();
        let (status, next_at) = match &outcome {
            Ok(()) => (PostStatus::Sent, None),
            Err(_) => match usize::try_from(n.post_attempts).ok().and_then(|a| RETRY_DELAYS.get(a)) {
                Some(delay) => (PostStatus::Pending, Some(now + *delay)),
                None => (PostStatus::Failed, None),
            },
        };
        if let Err(error) = &outcome {
            tracing::warn!(notification = %n.id, %error, "posting an account notification failed");
        }
        store::record_post(context.store.writer(), &n.id, status, outcome.err().as_deref(), next_at).await?;
    }
    Ok(count)
}

/// One unsigned POST; any 2xx is success. The address rules of webhooks apply to every send.
async fn post(context: &Context, n: &Notification) -> Result<(), String> {
    let Some(url) = &n.post_url else { return Err("no webhook URL".to_owned()) };
    let url = url::Url::parse(url).map_err(|error| format!("the webhook URL is invalid: {error}"))?;
    if let Some(refused) = context.outbound.web.addresses.refuses_literal(&url) {
        return Err(refused);
    }
    let response = context
        .outbound
        .web
        .http
        .post(url)
        .header("Content-Type", "application/json")
        .header("X-Service-Notification", &n.notification_type)
        .body(body(n).to_string())
        .send()
        .await
        .map_err(|error| crate::operations::webhooks::delivery::describe(&error))?;
    if response.status().is_success() { Ok(()) } else { Err(format!("answered {}", response.status().as_u16())) }
}

/// The notification's `type` for a caller near its admin rate limit.
pub const NEAR_RATE_LIMIT: &str = "rate_limit_near";

/// Tells the account that one of its callers (`caller`: a credential or a person, by id) kept
/// near its limit of `per_minute` requests a minute for five minutes; once an hour per caller,
/// whichever host sees it.
pub async fn near_rate_limit(
    store: &crate::store::Store,
    account_id: &str,
    caller: &str,
    per_minute: f64,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let mut tx = store.begin().await?;
    let since = now - TimeDelta::hours(1);
    if store::raised_before(&mut *tx, account_id, NEAR_RATE_LIMIT, caller, Severity::Warning, since).await? {
        return Ok(());
    }
    let raised = Raised {
        account_id,
        notification_type: NEAR_RATE_LIMIT,
        severity: Severity::Warning,
        title: "A caller is near its rate limit".into(),
        description: format!(
            "{caller} has used nine tenths or more of its {per_minute} admin API requests a minute for five \
             minutes; beyond them its requests are refused with 429. Spread its calls, or give the work to \
             another credential."
        ),
        resource_id: Some(caller),
        realm_id: None,
        webhook: true,
    };
    raise(&mut tx, raised, now).await?;
    tx.commit().await?;
    Ok(())
}

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
    pub(crate) fn of(preferences: Preferences) -> Self {
        Self { webhook_url: preferences.webhook_url, attacks_detected: preferences.attacks_detected }
    }
}

#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct PreferencesInput {
    /// Absolute `https://` address resolving to public addresses only (as webhook URLs); `null`
    /// stops the posts. Omitted keeps the current one.
    #[schema(value_type = Option<String>)]
    pub(crate) webhook_url: Option<Option<String>>,
    /// `InConsole`, `EmailAndWebhook` or `Off`. Omitted keeps the current choice.
    pub(crate) attacks_detected: Option<AttacksDetected>,
}

impl PreferencesInput {
    /// The fields `body` gives; an address is checked as a webhook's is.
    pub(crate) async fn read(context: &Context, body: &mut Body) -> Self {
        let limit = crate::operations::webhooks::endpoints::MAX_URL_LENGTH + 1;
        let webhook_url = body.nullable("webhookUrl", crate::kernel::validate::text(1, limit));
        if let Some(Some(url)) = &webhook_url {
            crate::operations::webhooks::endpoints::check_url(context, body, "webhookUrl", url).await;
        }
        let attacks_detected = body.optional("attacksDetected", one_of(AttacksDetected::NAMES));
        Self { webhook_url, attacks_detected }
    }

    /// Changes the preferences given on `preferences`.
    pub(crate) fn apply(self, preferences: &mut Preferences) {
        preferences.webhook_url = self.webhook_url.unwrap_or(preferences.webhook_url.take());
        preferences.attacks_detected = self.attacks_detected.unwrap_or(preferences.attacks_detected);
    }
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
    pub(crate) fn of(n: Notification) -> Self {
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

/// Changes the account's notification preferences as `input` says.
pub async fn change_preferences(
    context: &Context,
    account_id: &AccountId,
    input: PreferencesInput,
    by: Author<'_>,
) -> Result<PreferencesView, Error> {
    let current = notification_store::preferences(context.store.pool(), account_id).await?;
    let mut next = current.clone();
    input.apply(&mut next);
    next.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    notification_store::save_preferences(&mut *tx, &next).await?;
    let view = PreferencesView::of(next);
    let before = json!(PreferencesView::of(current));
    let place = Place::outside_realms(ResourceKind::NotificationPreferences, account_id);
    changes::commit(context, by, tx, Change::of(ChangeAction::Update, place, 200).before(before).after(&view)).await?;
    Ok(view)
}

//! The account's operational notifications: raised inside the
//! transaction of what caused them, shown in the console, and posted unsigned to the webhook URL of
//! the account's notification preferences by a worker of their own, apart from the delivery
//! history of event webhooks.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::json;

use crate::kernel::backoff::{Backoff, WORKER_CEILING};
use crate::kernel::clock::iso;
use crate::kernel::ids::{AccountId, NotificationId, RealmId};
use crate::runtime::context::Context;
use crate::store::Error as StoreError;
use crate::store::notifications::{self as store, Notification, PostStatus, Severity};

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

//! The account's notification preferences and its operational notifications, with the state of
//! their posts to the preferences' webhook URL.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::text_enum;
use super::{Error, Store};
use crate::kernel::ids::{AccountId, NotificationId, RealmId};

text_enum! {
    /// Whether the Attacks detected notification is raised, and where it goes.
    pub enum AttacksDetected {
        /// Raised in the console only.
        InConsole,
        /// Raised in the console, and also sent by e-mail and to the notification webhook.
        EmailAndWebhook,
        /// Not raised at all.
        Off,
    }
}

text_enum! {
    pub enum Severity {
        Info,
        Warning,
        Critical,
    }
}

text_enum! {
    /// Where the post of a notification to the webhook URL stands.
    pub enum PostStatus {
        /// No webhook URL was set when the notification was raised.
        None,
        Pending,
        Sent,
        Failed,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Preferences {
    pub account_id: AccountId,
    pub webhook_url: Option<String>,
    #[sqlx(try_from = "String")]
    pub attacks_detected: AttacksDetected,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
}

impl Preferences {
    /// What an account that never chose has.
    pub fn default_for(account_id: &str) -> Self {
        Self {
            account_id: AccountId::known(account_id),
            webhook_url: None,
            attacks_detected: AttacksDetected::InConsole,
            updated_at: DateTime::UNIX_EPOCH,
        }
    }
}

pub async fn preferences<'c>(db: impl Executor<'c, Database = Any>, account_id: &str) -> Result<Preferences, Error> {
    let found: Option<Preferences> = sqlx::query_as(
        "SELECT account_id, webhook_url, attacks_detected, updated_at FROM account_notification_preferences \
         WHERE account_id = $1",
    )
    .bind(account_id)
    .fetch_optional(db)
    .await?;
    Ok(found.unwrap_or_else(|| Preferences::default_for(account_id)))
}

pub async fn save_preferences<'c>(
    db: impl Executor<'c, Database = Any>,
    preferences: &Preferences,
) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO account_notification_preferences (account_id, webhook_url, attacks_detected, updated_at) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (account_id) DO UPDATE SET webhook_url = excluded.webhook_url, \
         attacks_detected = excluded.attacks_detected, updated_at = excluded.updated_at",
    )
    .bind(&preferences.account_id)
    .bind(&preferences.webhook_url)
    .bind(preferences.attacks_detected.as_str())
    .bind(super::millis(preferences.updated_at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// One operational notification.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Notification {
    pub id: NotificationId,
    pub account_id: AccountId,
    #[sqlx(rename = "type")]
    pub notification_type: String,
    #[sqlx(try_from = "String")]
    pub severity: Severity,
    pub title: String,
    pub description: String,
    pub resource_id: Option<String>,
    pub realm_id: Option<RealmId>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "String")]
    pub post_status: PostStatus,
    pub post_url: Option<String>,
    pub post_attempts: i64,
    pub post_last_error: Option<String>,
}

const COLUMNS: &str = "id, account_id, type, severity, title, description, resource_id, realm_id, created_at, \
     post_status, post_url, post_attempts, post_last_error";

pub const LISTING: Listing = Listing {
    table: "account_notifications",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["title", "description", "type"],
    status: None,
    sortable: &[("createdAt", "created_at")],
};

/// Stores a notification; it is posted when `post_url` is set (status Pending, due at once).
/// Whether the account was already told of this cause at this severity about this resource
/// after `since`.
pub async fn raised_before<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    notification_type: &str,
    resource_id: &str,
    severity: Severity,
    since: DateTime<Utc>,
) -> Result<bool, Error> {
    let found: Option<(String,)> = sqlx::query_as(
        "SELECT id FROM account_notifications WHERE account_id = $1 AND type = $2 AND resource_id = $3 AND severity = $4 \
         AND created_at > $5 LIMIT 1",
    )
    .bind(account_id)
    .bind(notification_type)
    .bind(resource_id)
    .bind(severity.as_str())
    .bind(super::millis(since))
    .fetch_optional(db)
    .await?;
    Ok(found.is_some())
}

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, n: &Notification) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO account_notifications (id, account_id, type, severity, title, description, resource_id, \
         realm_id, created_at, post_status, post_url, post_attempts, post_next_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 0, $9)",
    )
    .bind(&n.id)
    .bind(&n.account_id)
    .bind(&n.notification_type)
    .bind(n.severity.as_str())
    .bind(&n.title)
    .bind(&n.description)
    .bind(&n.resource_id)
    .bind(&n.realm_id)
    .bind(super::millis(n.created_at))
    .bind(n.post_status.as_str())
    .bind(&n.post_url)
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// Claims up to `limit` posts due at `now` for `lease_ms`: no other worker takes them meanwhile.
pub async fn claim_due(
    store: &super::Store,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<Notification>, Error> {
    let mut tx = store.begin().await?;
    let lock = if store.is_shared() { " FOR UPDATE SKIP LOCKED" } else { "" };
    let due: Vec<Notification> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM account_notifications WHERE post_status = 'Pending' AND post_next_at <= $1 \
         AND (post_claimed_until IS NULL OR post_claimed_until <= $1) ORDER BY post_next_at LIMIT $2{lock}"
    )))
    .bind(super::millis(now))
    .bind(limit)
    .fetch_all(&mut *tx)
    .await?;
    for notification in &due {
        sqlx::query("UPDATE account_notifications SET post_claimed_until = $1 WHERE id = $2")
            .bind(super::millis(until))
            .bind(&notification.id)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(due)
}

/// Records a post's outcome: Sent, Failed for good, or Pending again at `next_at`.
pub async fn record_post<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
    status: PostStatus,
    error: Option<&str>,
    next_at: Option<DateTime<Utc>>,
) -> Result<(), Error> {
    sqlx::query(
        "UPDATE account_notifications SET post_status = $1, post_attempts = post_attempts + 1, \
         post_last_error = $2, post_next_at = $3, post_claimed_until = NULL WHERE id = $4",
    )
    .bind(status.as_str())
    .bind(error)
    .bind(super::millis(next_at))
    .bind(id)
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// A page of an account's notifications.
pub async fn page(store: &Store, account_id: &str, request: &PageRequest) -> Result<Page<Notification>, Error> {
    page::fetch(store.pool(), &LISTING, &Scope::of("account_id", account_id), request).await
}

//! A client's consumers: the callers of the client's own API, each with a key the client's API
//! checks at introspection. A consumer's key is minted here and shown once; the store keeps its
//! digest.

use crate::kernel::clock::iso;
use crate::kernel::crypto::{generate_secret, last_four};
use crate::kernel::validate::{Body, Notification, Rule, instant, list_of, one_of, text};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::clients::Client;
use crate::store::consumers::{self as consumer_store, Consumer, ConsumerType};
use crate::store::trail::{Change, ChangeAction, Placed};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// The prefix of a consumer's key.
pub const CONSUMER_KEY_PREFIX: &str = "cstl_ck_";

/// A consumer with the key it was just given, shown once.
#[derive(Debug)]
pub struct Keyed {
    pub consumer: Consumer,
    pub key: String,
}

/// Creates `consumer` with a fresh key.
pub async fn create(context: &Context, mut consumer: Consumer, by: Author<'_>) -> Result<Keyed, Error> {
    let key = generate_secret(CONSUMER_KEY_PREFIX);
    consumer.value_hash = context.hasher.hash(&key);
    consumer.value_last_four = last_four(&key);
    let mut tx = context.store.begin().await?;
    consumer_store::insert(&mut *tx, &consumer).await?;
    let change = Change::of(ChangeAction::Create, consumer.place(), 201).after(ConsumerView::of(&consumer));
    changes::commit(context, by, tx, change).await?;
    Ok(Keyed { consumer, key })
}

/// Changes `before` into `consumer`.
pub async fn update(
    context: &Context,
    before: &Consumer,
    mut consumer: Consumer,
    by: Author<'_>,
) -> Result<Consumer, Error> {
    consumer.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    consumer_store::update(&mut *tx, &consumer).await?;
    let change = Change::of(ChangeAction::Update, consumer.place(), 200)
        .before(ConsumerView::of(before))
        .after(ConsumerView::of(&consumer));
    changes::commit(context, by, tx, change).await?;
    Ok(consumer)
}

/// Deletes `consumer`: its key is inactive from the next introspection on.
pub async fn delete(context: &Context, consumer: &Consumer, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    consumer_store::delete(&mut *tx, &consumer.id).await?;
    let change = Change::of(ChangeAction::Delete, consumer.place(), 200).before(ConsumerView::of(consumer));
    changes::commit(context, by, tx, change).await
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsumerView {
    pub id: String,
    pub realm_id: String,
    pub client_id: String,
    #[serde(rename = "type")]
    pub consumer_type: ConsumerType,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub status: Status,
    /// Scopes among the client's allowed scopes, given at introspection.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Shown once, in the creation answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub value_last_four: String,
    pub created_at: String,
    pub updated_at: String,
}

impl ConsumerView {
    pub(crate) fn of(consumer: &Consumer) -> Self {
        Self {
            id: consumer.id.clone().into(),
            realm_id: consumer.realm_id.to_string(),
            client_id: consumer.client_id.to_string(),
            consumer_type: consumer.consumer_type,
            name: consumer.name.clone(),
            description: consumer.description.clone(),
            status: consumer.status,
            scopes: consumer.scopes.clone(),
            expires_at: consumer.expires_at.map(iso),
            value: None,
            value_last_four: consumer.value_last_four.clone(),
            created_at: iso(consumer.created_at),
            updated_at: iso(consumer.updated_at),
        }
    }
}

/// The body of a consumer creation; an update takes the same fields, each optional, and `type` only
/// if it repeats the current one.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct ConsumerInput {
    /// 1–128 characters.
    #[schema(value_type = String, required = true)]
    pub(crate) name: Option<String>,
    /// Up to 1,000 characters; null clears it.
    #[schema(value_type = Option<String>)]
    pub(crate) description: Option<Option<String>>,
    /// ApiKey (the default); cannot change.
    #[schema(rename = "type")]
    pub(crate) consumer_type: Option<ConsumerType>,
    /// Active (default) or Disabled; a Disabled consumer's key is inactive at introspection.
    pub(crate) status: Option<Status>,
    /// Scopes among the client's allowed scopes.
    pub(crate) scopes: Option<Vec<String>>,
    /// ISO 8601 instant in the future; null clears it.
    #[schema(value_type = Option<String>)]
    pub(crate) expires_at: Option<Option<DateTime<Utc>>>,
}

impl ConsumerInput {
    /// The fields `body` gives (a creation must name the consumer); scopes must be among the
    /// client's, an expiry after `now`.
    pub(crate) fn read(body: &mut Body, client: &Client, now: DateTime<Utc>, creating: bool) -> Self {
        let consumer_type = body.optional("type", one_of(ConsumerType::NAMES));
        if creating && !body.has("name") {
            body.refuse("name", Rule::Required, "name is required");
        }
        let name = body.optional("name", text(1, 128));
        let description = body.nullable("description", text(0, 1000));
        let status = body.optional("status", one_of(Status::NAMES));
        let allowed = client.allowed_scopes.clone();
        let scope = |path: &str, value: &Value| {
            let scope = text(1, 128)(path, value)?;
            if allowed.contains(&scope) {
                Ok(scope)
            } else {
                Err(vec![Notification::new(
                    path,
                    Rule::NotFound,
                    format!("{path}: {scope} is not among the client's scopes"),
                )])
            }
        };
        let scopes = body.optional("scopes", list_of(100, scope));
        let expires_at = body.nullable("expiresAt", instant);
        if expires_at.flatten().is_some_and(|at| at <= now) {
            body.refuse("expiresAt", Rule::Range, "expiresAt must be in the future");
        }
        Self { name, description, consumer_type, status, scopes, expires_at }
    }

    /// Changes the fields given on `consumer`, but its type.
    pub(crate) fn apply(self, consumer: &mut Consumer) {
        consumer.name = self.name.unwrap_or(std::mem::take(&mut consumer.name));
        consumer.description = self.description.unwrap_or(consumer.description.take());
        consumer.status = self.status.unwrap_or(consumer.status);
        consumer.scopes = self.scopes.unwrap_or(std::mem::take(&mut consumer.scopes));
        consumer.expires_at = self.expires_at.unwrap_or(consumer.expires_at);
    }
}

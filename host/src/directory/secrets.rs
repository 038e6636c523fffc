//! The account's secrets (API keys, personal access tokens, account client secrets): issued,
//! rotated and deleted here, each change trailed. A value is shown once, when it is made; only its
//! keyed hash and last four characters are kept.

use super::account_roles::grantable_roles;
use crate::authz::Authorizer;
use crate::authz::caller::Caller;
use crate::directory::rotation::{Rotation, RotationView};
use crate::kernel::clock::iso;
use crate::kernel::crypto::{generate_secret, last_four};
use crate::kernel::validate::{Body, Notification, Rule, instant, list_of, one_of, text};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::secrets::{self as secret_store, Secret, SecretType};
use crate::store::trail::{Change, ChangeAction, Placed};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// A secret just given a value: the value, shown once.
#[derive(Debug)]
pub struct Valued {
    pub secret: Secret,
    pub value: String,
}

/// Fresh value of the secret's kind, set on `secret` as kept: its keyed hash and last four.
fn fresh_value(context: &Context, secret: &mut Secret) -> String {
    let value = generate_secret(secret.secret_type.value_prefix());
    secret.value_hash = context.hasher.hash(&value);
    secret.value_last_four = last_four(&value);
    value
}

/// Issues `secret` with a fresh value of its kind.
pub async fn issue(context: &Context, mut secret: Secret, by: Author<'_>) -> Result<Valued, Error> {
    let value = fresh_value(context, &mut secret);
    let mut tx = context.store.begin().await?;
    secret_store::insert(&mut *tx, &secret).await?;
    changes::commit(
        context,
        by,
        tx,
        Change::of(ChangeAction::Create, secret.place(), 201).after(SecretView::of(&secret, context.clock.now())),
    )
    .await?;
    Ok(Valued { secret, value })
}

/// Deletes `secret`: it is refused from the next call on.
pub async fn delete(context: &Context, secret: &Secret, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    secret_store::delete(&mut *tx, &secret.account_id, &secret.id).await?;
    changes::commit(
        context,
        by,
        tx,
        Change::of(ChangeAction::Delete, secret.place(), 200).before(SecretView::of(secret, context.clock.now())),
    )
    .await
}

/// Gives `before` a fresh value, the previous one treated as `rotation` says.
pub async fn rotate(context: &Context, before: &Secret, rotation: &Rotation, by: Author<'_>) -> Result<Valued, Error> {
    let now = context.clock.now();
    let mut secret = before.clone();
    let value = fresh_value(context, &mut secret);
    secret.rotated_at = Some(now);
    secret.previous_value_hash = rotation.previous_hash(Some(&before.value_hash));
    secret.previous_value_valid_until = rotation.previous_value_valid_until;
    secret.issued_tokens_revoked_before = rotation.revoked_before(before.issued_tokens_revoked_before);
    secret.updated_at = now;
    let mut tx = context.store.begin().await?;
    secret_store::rotate(&mut *tx, &secret).await?;
    let change = Change::of(ChangeAction::Update, secret.place(), 200)
        .before(SecretView::of(before, context.clock.now()))
        .after(SecretView::of(&secret, context.clock.now()))
        .details(rotation.details());
    changes::commit(context, by, tx, change).await?;
    Ok(Valued { secret, value })
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretView {
    pub id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub secret_type: SecretType,
    /// Account roles: the most the secret can ever do.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// Permission names bounding the secret further; absent when only the roles bound it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// The person the secret acts for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acts_for_user_id: Option<String>,
    /// Shown once, in the answer to its creation or rotation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub value_last_four: String,
    /// Filled only while the previous value still authenticates; compare with the current time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_value_valid_until: Option<String>,
    /// Tokens issued with an earlier value before this instant are revoked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issued_tokens_revoked_before: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotated_at: Option<String>,
    pub created_at: String,
}

impl SecretView {
    /// The secret as it reads at `now`, without its value.
    pub(crate) fn of(secret: &Secret, now: DateTime<Utc>) -> Self {
        let instant = |at: Option<DateTime<Utc>>| at.map(iso);
        Self {
            id: secret.id.clone().into(),
            name: secret.name.clone(),
            secret_type: secret.secret_type,
            roles: secret.roles.clone(),
            scopes: secret.scopes.clone(),
            expires_at: instant(secret.expires_at),
            acts_for_user_id: secret.acts_for_user_id.clone().map(String::from),
            value: None,
            value_last_four: secret.value_last_four.clone(),
            previous_value_valid_until: instant(secret.previous_value_valid_until.filter(|until| *until > now)),
            issued_tokens_revoked_before: instant(secret.issued_tokens_revoked_before),
            rotated_at: instant(secret.rotated_at),
            created_at: iso(secret.created_at),
        }
    }
}

/// The answer to a rotation: the secret with its new value, and what became of the previous one.
#[derive(Debug, Serialize, ToSchema)]
pub struct RotatedSecret {
    #[serde(flatten)]
    pub secret: SecretView,
    pub rotation: RotationView,
}

#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct SecretInput {
    /// Up to 128 characters.
    #[schema(value_type = String, required = true)]
    pub(crate) name: Option<String>,
    /// `ApiKey` (the default; sent as `x-api-key`), `PersonalAccessToken` (sent as `x-api-key`,
    /// acts for the person who made it and never beyond the account roles that person holds at the
    /// time of each call; only a person, or a credential acting for one, can make one) or
    /// `ClientSecret` (exchanged at the platform realm's token endpoint for a bearer token).
    #[schema(rename = "type")]
    pub(crate) secret_type: Option<SecretType>,
    /// At least one account role (built-in or custom); only roles the caller holds itself,
    /// unless the caller is an Owner.
    #[schema(value_type = Vec<String>, required = true)]
    pub(crate) roles: Option<Vec<String>>,
    /// Permission names that bound the secret further.
    pub(crate) scopes: Option<Vec<String>>,
    /// ISO 8601 instant in the future.
    #[schema(value_type = Option<String>)]
    pub(crate) expires_at: Option<DateTime<Utc>>,
}

impl SecretInput {
    /// The fields `body` gives: the roles the caller may give, permissions the policies know, an
    /// expiry after `now`.
    pub(crate) async fn read(
        context: &Context,
        authz: &Authorizer,
        caller: &Caller,
        body: &mut Body,
        now: DateTime<Utc>,
    ) -> Result<Self, Error> {
        let name = body.required("name", text(1, 128));
        let secret_type = body.optional("type", one_of(SecretType::NAMES));
        if secret_type == Some(SecretType::PersonalAccessToken) && caller.actor.user_id.is_none() {
            body.refuse(
                "type",
                Rule::Conflict,
                "a personal access token acts for a person; this credential acts for no one",
            );
        }
        let roles = body.required("roles", grantable_roles(context, caller).await?);
        let known = authz.permissions();
        let scopes = body.optional(
            "scopes",
            list_of(200, |path: &str, value: &Value| {
                let scope = text(1, 64)(path, value)?;
                if known.contains(&scope) {
                    Ok(scope)
                } else {
                    Err(vec![Notification::new(path, Rule::OneOf, format!("{path}: unknown permission {scope}"))])
                }
            }),
        );
        let expires_at = body.optional("expiresAt", instant);
        if expires_at.is_some_and(|at| at <= now) {
            body.refuse("expiresAt", Rule::Range, "expiresAt must be in the future");
        }
        Ok(Self { name, secret_type, roles, scopes, expires_at })
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RotationPolicy {
    /// The longest `previousValueValidForMinutes` a rotation accepts.
    pub max_previous_value_valid_for_minutes: i64,
}

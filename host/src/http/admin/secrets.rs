//! `/secrets`: the account's credentials for the admin API, and their rotation.

use super::reach::{Owned, SecretDelete, SecretRead, SecretUpdate};
use axum::extract::{RawQuery, State};
use axum::response::Response;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::ListQuery;
use crate::authz::{BUILTIN_ROLES, permission};
use crate::directory::rotation::{MAX_PREVIOUS_VALUE_VALID_FOR_MINUTES, Rotation, RotationInput, RotationView};
use crate::directory::secrets;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::kernel::clock::iso;
use crate::kernel::ids::CredentialId;
use crate::kernel::validate::{Body, Notification, Refusals, Rule, instant, list_of, one_of, text};
use crate::runtime::error::Error;
use crate::store::roles as role_store;
use crate::store::secrets::{self as secret_store, Secret, SecretType};

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
    fn of(secret: &Secret, now: DateTime<Utc>) -> Self {
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
    name: Option<String>,
    /// `ApiKey` (the default; sent as `x-api-key`), `PersonalAccessToken` (sent as `x-api-key`,
    /// acts for the person who made it and never beyond the account roles that person holds at the
    /// time of each call; only a person, or a credential acting for one, can make one) or
    /// `ClientSecret` (exchanged at the platform realm's token endpoint for a bearer token).
    #[schema(rename = "type")]
    secret_type: Option<SecretType>,
    /// At least one account role (built-in or custom); only roles the caller holds itself,
    /// unless the caller is an Owner.
    #[schema(value_type = Vec<String>, required = true)]
    roles: Option<Vec<String>>,
    /// Permission names that bound the secret further.
    scopes: Option<Vec<String>>,
    /// ISO 8601 instant in the future.
    #[schema(value_type = Option<String>)]
    expires_at: Option<DateTime<Utc>>,
}

impl SecretInput {
    /// The fields `body` gives: the roles the caller may give, permissions the policies know, an
    /// expiry after `now`.
    async fn read(state: &AppState, caller: &Caller, body: &mut Body, now: DateTime<Utc>) -> Result<Self, Error> {
        let name = body.required("name", text(1, 128));
        let secret_type = body.optional("type", one_of(SecretType::NAMES));
        if secret_type == Some(SecretType::PersonalAccessToken) && caller.actor.user_id.is_none() {
            body.refuse(
                "type",
                Rule::Conflict,
                "a personal access token acts for a person; this credential acts for no one",
            );
        }
        let roles = body.required("roles", grantable_roles(state, caller).await?);
        let known = state.authz.permissions();
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

#[utoipa::path(post, path = "/secrets", tag = "Secrets", request_body = SecretInput,
    responses((status = 201, description = "The created secret with its `value` (shown once), in `data`", body = SecretView),
              (status = 400)),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<SecretView>, Error> {
    caller.require_account(&state, permission::SECRET_CREATE)?;
    let now = state.clock.now();
    let input = SecretInput::read(&state, &caller, &mut body, now).await?;
    body.finish()?;
    let SecretInput { name: Some(name), secret_type, roles: Some(roles), scopes, expires_at } = input else {
        return Err(Error::invalid("", Rule::Required, "name and roles are required"));
    };

    let secret = Secret {
        id: CredentialId::fresh(),
        account_id: caller.account_id().clone(),
        secret_type: secret_type.unwrap_or(SecretType::ApiKey),
        name,
        value_hash: String::new(),
        value_last_four: String::new(),
        roles: roles.clone(),
        scopes,
        expires_at,
        acts_for_user_id: caller.actor.user_id.clone(),
        created_at: now,
        updated_at: now,
        rotated_at: None,
        previous_value_hash: None,
        previous_value_valid_until: None,
        issued_tokens_revoked_before: None,
    };
    let issued = secrets::issue(&state, secret, caller.author(), |secret| SecretView::of(secret, now)).await?;
    let mut view = SecretView::of(&issued.secret, now);
    view.value = Some(issued.value);
    Ok(Answer::Created(view))
}

/// Checks a list of account roles the caller gives to a credential or a person: at least one, each
/// a built-in role or a custom role of the account, and never more than the caller holds (an Owner
/// may give any).
pub(super) async fn grantable_roles(
    state: &AppState,
    caller: &Caller,
) -> Result<impl Fn(&str, &Value) -> Result<Vec<String>, Refusals> + use<>, Error> {
    let custom: Vec<String> = role_store::all_of_account(state.store.pool(), caller.account_id())
        .await?
        .into_iter()
        .map(|r| r.name)
        .collect();
    let caller = caller.clone();
    Ok(move |path: &str, value: &Value| {
        let role_name = |path: &str, value: &Value| -> Result<String, Refusals> {
            let role = text(1, 64)(path, value)?;
            let builtin = BUILTIN_ROLES.contains(&role.as_str());
            if !builtin && !custom.contains(&role) {
                return Err(vec![Notification::new(path, Rule::NotFound, format!("{path}: no role named {role}"))]);
            }
            if !(caller.holds_role("Owner") || builtin && caller.holds_role(&role)) {
                return Err(vec![Notification::new(
                    path,
                    Rule::Escalation,
                    format!("{path}: only roles you hold can be given"),
                )]);
            }
            Ok(role)
        };
        let roles = list_of(16, &role_name)(path, value)?;
        if roles.is_empty() {
            return Err(vec![Notification::new(path, Rule::MinLength, format!("{path} must list at least one role"))]);
        }
        Ok(roles)
    })
}

#[utoipa::path(get, path = "/secrets", tag = "Secrets",
    params(("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query), ("searchTerm" = Option<String>, Query),
           ("status" = Option<String>, Query, description = "A secret type"), ("sortBy" = Option<String>, Query),
           ("sortDirection" = Option<String>, Query), ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query)),
    responses((status = 200, description = "A page of the account's secrets (never their values), in `pagination`", body = [SecretView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer<SecretView>, Error> {
    caller.require_account(&state, permission::SECRET_READ)?;
    let list = ListQuery::parse(query, &[])?;
    list.status_in(crate::store::secrets::SecretType::NAMES)?;
    let now = state.clock.now();
    let found = secret_store::page(&state.store, caller.account_id(), &list.page).await?;
    Ok(Answer::Paged(found.map(|secret| SecretView::of(&secret, now))))
}

#[utoipa::path(get, path = "/secrets/{id}", tag = "Secrets", params(("id" = String, Path)),
    responses((status = 200, description = "The secret without its value, in `data`", body = SecretView), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    State(state): State<AppState>,
    Owned { item: secret, .. }: Owned<Secret, SecretRead>,
) -> Result<Response, Error> {
    Ok(envelope::ok(SecretView::of(&secret, state.clock.now())))
}

#[utoipa::path(delete, path = "/secrets/{id}", tag = "Secrets", params(("id" = String, Path)),
    responses((status = 200, description = "Deleted; the secret gets 401 from the next call on"), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    Owned { item: secret, caller, .. }: Owned<Secret, SecretDelete>,
) -> Result<Response, Error> {
    let now = state.clock.now();
    secrets::delete(&state, &secret, caller.author(), |secret| SecretView::of(secret, now)).await?;
    Ok(envelope::done())
}

#[utoipa::path(post, path = "/secrets/{id}/rotate", tag = "Secrets", params(("id" = String, Path)),
    request_body(content = RotationInput, description = "Optional; an empty body rotates immediately"),
    responses((status = 200, description = "The secret with its new `value` (shown once) and `rotation`, in `data`", body = RotatedSecret),
              (status = 400), (status = 404)),
    security(("apiKey" = [])))]
pub async fn rotate(
    State(state): State<AppState>,
    Owned { item: before, caller, .. }: Owned<Secret, SecretUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<RotatedSecret>, Error> {
    let now = state.clock.now();
    let rotation = Rotation::read(body, now)?;
    let describe = |secret: &Secret| SecretView::of(secret, now);
    let rotated = secrets::rotate(&state, &before, &rotation, caller.author(), describe).await?;
    let mut view = SecretView::of(&rotated.secret, now);
    view.value = Some(rotated.value);
    Ok(Answer::Ok(RotatedSecret { secret: view, rotation: rotation.view() }))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RotationPolicy {
    /// The longest `previousValueValidForMinutes` a rotation accepts.
    pub max_previous_value_valid_for_minutes: i64,
}

#[utoipa::path(get, path = "/secrets/rotation-policy", tag = "Secrets",
    responses((status = 200, description = "The limits of rotation, in `data`", body = RotationPolicy), (status = 403)),
    security(("apiKey" = [])))]
pub async fn rotation_policy(State(state): State<AppState>, caller: Caller) -> Result<Response, Error> {
    // Open to whoever may read or change secrets (`secret:write` holds `secret:update`).
    if let Err(refused) = caller.require_account(&state, permission::SECRET_READ) {
        caller.require_account(&state, permission::SECRET_UPDATE).map_err(|_| refused)?;
    }
    Ok(envelope::ok(RotationPolicy { max_previous_value_valid_for_minutes: MAX_PREVIOUS_VALUE_VALID_FOR_MINUTES }))
}

//! Scopes: the account's catalogue, usable in each of its realms, and scopes exclusive to one
//! realm; and the scopes a client may request. Each change is written, trailed and announced here.

use crate::kernel::clock::iso;
use crate::kernel::validate::{Body, Notification, Rule, list_of, text};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::clients::{self as client_store, Client};
use crate::store::scopes::{self as scope_store, Scope};
use crate::store::trail::{Change, ChangeAction, Place, Placed, ResourceKind};
use serde::Serialize;
use utoipa::ToSchema;

/// Scopes of OpenID Connect that exist in every realm without being created.
pub const STANDARD_SCOPES: &[&str] = &["openid", "profile", "email"];

/// Refuses every scope that is neither standard nor in the catalogue or the realm; `field` names
/// the list in the notifications.
pub async fn check_exist(
    context: &Context,
    account_id: &str,
    realm_id: &str,
    scopes: &[String],
    field: &str,
) -> Result<(), Error> {
    let known = scope_store::names_in_realm(context.store.pool(), account_id, realm_id).await?;
    let refused: Vec<Notification> = scopes
        .iter()
        .enumerate()
        .filter(|(_, s)| !STANDARD_SCOPES.contains(&s.as_str()) && !known.contains(s))
        .map(|(i, s)| {
            Notification::new(
                format!("{field}[{i}]"),
                Rule::NotFound,
                format!("no scope named {s} in the catalogue or the realm"),
            )
        })
        .collect();
    if refused.is_empty() { Ok(()) } else { Err(Error::Validation(refused)) }
}

/// Creates `scope`; its name must be free in the catalogue, or in its realm.
pub async fn create(context: &Context, scope: Scope, by: Author<'_>) -> Result<Scope, Error> {
    let mut tx = context.store.begin().await?;
    if !scope_store::insert(&mut *tx, &scope).await? {
        return Err(Error::AlreadyExists("scope"));
    }
    let change = Change::of(ChangeAction::Create, scope.place(), 201).after(ScopeView::of(&scope));
    changes::commit(context, by, tx, change).await?;
    Ok(scope)
}

/// Changes `before` into `scope` (its name never changes).
pub async fn update(context: &Context, before: &Scope, mut scope: Scope, by: Author<'_>) -> Result<Scope, Error> {
    scope.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    scope_store::update(&mut *tx, &scope).await?;
    let change =
        Change::of(ChangeAction::Update, scope.place(), 200).before(ScopeView::of(before)).after(ScopeView::of(&scope));
    changes::commit(context, by, tx, change).await?;
    Ok(scope)
}

/// Deletes `scope`.
pub async fn delete(context: &Context, scope: &Scope, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    scope_store::delete(&mut *tx, &scope.id).await?;
    changes::commit(context, by, tx, Change::of(ChangeAction::Delete, scope.place(), 200).before(ScopeView::of(scope)))
        .await
}

/// Replaces the scopes `before` (a client of a realm of `account_id`) may request with `scopes`,
/// each of which must exist.
pub async fn allow(
    context: &Context,
    account_id: &str,
    before: &Client,
    scopes: Vec<String>,
    by: Author<'_>,
) -> Result<Client, Error> {
    check_exist(context, account_id, &before.realm_id, &scopes, "scopes").await?;
    let mut client = before.clone();
    client.allowed_scopes = scopes;
    client.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    client_store::update(&mut *tx, &client).await?;
    let place = Place::in_realm(ResourceKind::ClientScopes, &client.id, &client.realm_id).of_client(&client.id);
    let change =
        Change::of(ChangeAction::Update, place, 200).before(&before.allowed_scopes).after(&client.allowed_scopes);
    changes::commit(context, by, tx, change).await?;
    Ok(client)
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScopeView {
    pub id: String,
    /// Null for a catalogue scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub realm_id: Option<String>,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl ScopeView {
    pub(crate) fn of(scope: &Scope) -> Self {
        Self {
            id: scope.id.clone().into(),
            realm_id: scope.realm_id.clone().map(String::from),
            name: scope.name.clone(),
            description: scope.description.clone(),
            created_at: iso(scope.created_at),
            updated_at: iso(scope.updated_at),
        }
    }
}

/// The body of a scope creation; an update changes only the description (null removes it), and
/// may repeat the name unchanged.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct ScopeInput {
    /// A scope token (RFC 6749 §3.3), 1–128 printable ASCII characters without spaces, quotes or
    /// backslashes; unique in the catalogue, or in the realm. Cannot change.
    #[schema(value_type = String, required = true)]
    pub(crate) name: Option<String>,
    /// Up to 1024 characters.
    #[schema(value_type = Option<String>)]
    pub(crate) description: Option<Option<String>>,
}

impl ScopeInput {
    /// A creation's fields: the name is required, and no standard scope's.
    pub(crate) fn read_new(body: &mut Body) -> Self {
        let name = body.required("name", crate::directory::client_fields::scope_token);
        let description = body.nullable("description", text(0, 1024)).map(|d| d.filter(|d| !d.is_empty()));
        if name.as_deref().is_some_and(|n| STANDARD_SCOPES.contains(&n)) {
            body.refuse("name", Rule::Duplicate, "standard OpenID Connect scopes exist in every realm");
        }
        Self { name, description }
    }

    /// An update's fields: the name may only be repeated as it is.
    pub(crate) fn read_change(body: &mut Body, scope: &Scope) -> Self {
        body.unchanged("name", &scope.name);
        Self {
            name: None,
            description: body.nullable("description", text(0, 1024)).map(|d| d.filter(|d| !d.is_empty())),
        }
    }
}

/// The scopes a client may request.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct ClientScopesInput {
    /// Each a scope of the catalogue, of the realm, or a standard OpenID Connect scope.
    pub(crate) scopes: Vec<String>,
}

impl ClientScopesInput {
    pub(crate) fn read(body: &mut Body) -> Self {
        Self {
            scopes: body
                .required("scopes", list_of(100, crate::directory::client_fields::scope_token))
                .unwrap_or_default(),
        }
    }
}

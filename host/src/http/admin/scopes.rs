//! Scopes: the account's catalogue (`/scopes`), scopes exclusive to a realm
//! (`/realms/{realm}/scopes`), and the scopes a client may request
//! (`/realms/{realm}/clients/{client}/scopes`).

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use serde::Serialize;
use utoipa::ToSchema;

use super::{ListQuery, realm_in_reach};
use crate::authz::{Resource, permission};
use crate::directory::scopes::{self, STANDARD_SCOPES};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::kernel::clock::iso;
use crate::kernel::ids::{RealmId, ScopeId};
use crate::kernel::validate::{Body, Rule, list_of, text};
use crate::runtime::error::Error;
use crate::store::clients::{self as client_store, Client};
use crate::store::scopes::{self as scope_store, Scope};

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
    fn of(scope: &Scope) -> Self {
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
    name: Option<String>,
    /// Up to 1024 characters.
    #[schema(value_type = Option<String>)]
    description: Option<Option<String>>,
}

impl ScopeInput {
    /// A creation's fields: the name is required, and no standard scope's.
    fn read_new(body: &mut Body) -> Self {
        let name = body.required("name", super::clients::scope_token);
        let description = body.nullable("description", text(0, 1024)).map(|d| d.filter(|d| !d.is_empty()));
        if name.as_deref().is_some_and(|n| STANDARD_SCOPES.contains(&n)) {
            body.refuse("name", Rule::Duplicate, "standard OpenID Connect scopes exist in every realm");
        }
        Self { name, description }
    }

    /// An update's fields: the name may only be repeated as it is.
    fn read_change(body: &mut Body, scope: &Scope) -> Self {
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
    scopes: Vec<String>,
}

impl ClientScopesInput {
    fn read(body: &mut Body) -> Self {
        Self { scopes: body.required("scopes", list_of(100, super::clients::scope_token)).unwrap_or_default() }
    }
}

/// Checks the caller may act on the catalogue (no realm) or on the realm's scopes.
async fn require(state: &AppState, caller: &Caller, realm_id: Option<&str>, permission: &str) -> Result<(), Error> {
    match realm_id {
        None => caller.require_account(state, permission),
        Some(realm_id) => realm_in_reach(state, caller, realm_id, permission).await.map(|_| ()),
    }
}

pub(crate) async fn create(
    state: &AppState,
    caller: &Caller,
    realm_id: Option<&str>,
    mut body: Body,
) -> Result<Answer<ScopeView>, Error> {
    require(state, caller, realm_id, permission::SCOPE_CREATE).await?;
    let ScopeInput { name, description } = ScopeInput::read_new(&mut body);
    body.finish()?;
    let Some(name) = name else { return Err(Error::invalid("name", Rule::Required, "name is required")) };
    let now = state.clock.now();
    let scope = Scope {
        id: ScopeId::fresh(),
        account_id: caller.account_id().clone(),
        realm_id: realm_id.map(RealmId::known),
        name,
        description: description.flatten(),
        created_at: now,
        updated_at: now,
    };
    let scope = scopes::create(state, scope, caller.author(), ScopeView::of).await?;
    Ok(Answer::Created(ScopeView::of(&scope)))
}

pub(crate) async fn list(
    state: &AppState,
    caller: &Caller,
    realm_id: Option<&str>,
    query: Option<String>,
) -> Result<Answer<ScopeView>, Error> {
    require(state, caller, realm_id, permission::SCOPE_READ).await?;
    let list = ListQuery::parse(query, &[])?;
    let found = scope_store::page(&state.store, caller.account_id(), realm_id, &list.page).await?;
    Ok(Answer::Paged(found.map(|scope| ScopeView::of(&scope))))
}

async fn scope_in_reach(
    state: &AppState,
    caller: &Caller,
    realm_id: Option<&str>,
    id: &str,
    permission: &str,
) -> Result<Scope, Error> {
    require(state, caller, realm_id, permission).await?;
    scope_store::find(state.store.pool(), caller.account_id(), id)
        .await?
        .filter(|s| s.realm_id.as_deref() == realm_id)
        .ok_or(Error::unreached())
}

pub(crate) async fn update(
    state: &AppState,
    caller: &Caller,
    realm_id: Option<&str>,
    id: &str,
    mut body: Body,
) -> Result<Answer<ScopeView>, Error> {
    let before = scope_in_reach(state, caller, realm_id, id, permission::SCOPE_UPDATE).await?;
    let mut scope = before.clone();
    body.unchanged("id", &scope.id);
    let ScopeInput { description, .. } = ScopeInput::read_change(&mut body, &scope);
    body.finish()?;
    if let Some(description) = description {
        scope.description = description;
    }
    let scope = scopes::update(state, &before, scope, caller.author(), ScopeView::of).await?;
    Ok(Answer::Ok(ScopeView::of(&scope)))
}

async fn delete(state: &AppState, caller: &Caller, realm_id: Option<&str>, id: &str) -> Result<Answer<()>, Error> {
    let scope = scope_in_reach(state, caller, realm_id, id, permission::SCOPE_DELETE).await?;
    scopes::delete(state, &scope, caller.author(), ScopeView::of).await?;
    Ok(Answer::Done)
}

#[utoipa::path(post, path = "/scopes", tag = "Scopes", request_body = ScopeInput,
    responses((status = 201, description = "The created catalogue scope, usable in every realm of the account", body = ScopeView),
              (status = 400), (status = 403), (status = 409)),
    security(("apiKey" = [])))]
pub async fn create_catalogue_scope(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<Answer<ScopeView>, Error> {
    create(&state, &caller, None, body).await
}

#[utoipa::path(get, path = "/scopes", tag = "Scopes",
    params(("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query), ("searchTerm" = Option<String>, Query),
           ("sortBy" = Option<String>, Query), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the catalogue, in `pagination`", body = [ScopeView])),
    security(("apiKey" = [])))]
pub async fn list_catalogue(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer<ScopeView>, Error> {
    list(&state, &caller, None, query).await
}

#[utoipa::path(put, path = "/scopes/{scopeId}", tag = "Scopes", params(("scopeId" = String, Path)), request_body = ScopeInput,
    responses((status = 200, body = ScopeView), (status = 400), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update_catalogue_scope(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Answer<ScopeView>, Error> {
    update(&state, &caller, None, &id, body).await
}

#[utoipa::path(delete, path = "/scopes/{scopeId}", tag = "Scopes", params(("scopeId" = String, Path)),
    responses((status = 200, description = "Deleted"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete_catalogue_scope(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Answer<()>, Error> {
    delete(&state, &caller, None, &id).await
}

#[utoipa::path(post, path = "/realms/{realm}/scopes", tag = "Scopes", params(("realm" = String, Path)), request_body = ScopeInput,
    responses((status = 201, description = "The created realm-exclusive scope", body = ScopeView), (status = 400), (status = 403), (status = 409)),
    security(("apiKey" = [])))]
pub async fn create_realm_scope(
    State(state): State<AppState>,
    caller: Caller,
    Path(realm_id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Answer<ScopeView>, Error> {
    create(&state, &caller, Some(&realm_id), body).await
}

#[utoipa::path(get, path = "/realms/{realm}/scopes", tag = "Scopes",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query), ("sortBy" = Option<String>, Query), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's own scopes, in `pagination`", body = [ScopeView])),
    security(("apiKey" = [])))]
pub async fn list_realm_scopes(
    State(state): State<AppState>,
    caller: Caller,
    Path(realm_id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Answer<ScopeView>, Error> {
    list(&state, &caller, Some(&realm_id), query).await
}

#[utoipa::path(put, path = "/realms/{realm}/scopes/{scopeId}", tag = "Scopes",
    params(("realm" = String, Path), ("scopeId" = String, Path)), request_body = ScopeInput,
    responses((status = 200, body = ScopeView), (status = 400), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update_realm_scope(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, id)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Result<Answer<ScopeView>, Error> {
    update(&state, &caller, Some(&realm_id), &id, body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/scopes/{scopeId}", tag = "Scopes",
    params(("realm" = String, Path), ("scopeId" = String, Path)),
    responses((status = 200, description = "Deleted"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete_realm_scope(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, id)): Path<(String, String)>,
) -> Result<Answer<()>, Error> {
    delete(&state, &caller, Some(&realm_id), &id).await
}

async fn client_for_scopes(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    client_id: &str,
    permission: &str,
) -> Result<(String, Client), Error> {
    let realm = super::find_realm(state, realm_id).await?;
    let owner = realm.as_ref().map(|r| r.account_id.clone());
    let resource = Resource::Client { realm_id: realm_id.to_owned(), id: client_id.to_owned(), owner: owner.clone() };
    caller.require(state, permission, resource)?;
    let client = client_store::find(state.store.pool(), realm_id, client_id).await?.ok_or(Error::unreached())?;
    Ok((owner.map(String::from).unwrap_or_default(), client))
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/scopes", tag = "Scopes",
    params(("realm" = String, Path), ("client" = String, Path)),
    responses((status = 200, description = "The scopes the client may request, in `data`", body = [String]), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn client_scopes(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, client_id)): Path<(String, String)>,
) -> Result<Response, Error> {
    let (_, client) = client_for_scopes(&state, &caller, &realm_id, &client_id, permission::CLIENT_READ).await?;
    Ok(envelope::ok(client.allowed_scopes.clone()))
}

#[utoipa::path(put, path = "/realms/{realm}/clients/{client}/scopes", tag = "Scopes",
    params(("realm" = String, Path), ("client" = String, Path)), request_body = ClientScopesInput,
    responses((status = 200, description = "The scopes the client may now request, in `data`", body = [String]),
              (status = 400, description = "ValidationFailed: a scope that does not exist"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn replace_client_scopes(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, client_id)): Path<(String, String)>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    let (account, before) =
        client_for_scopes(&state, &caller, &realm_id, &client_id, permission::CLIENT_UPDATE).await?;
    let ClientScopesInput { scopes } = ClientScopesInput::read(&mut body);
    body.finish()?;
    let client = scopes::allow(&state, &account, &before, scopes, caller.author()).await?;
    Ok(envelope::ok(client.allowed_scopes))
}

//! `/realms/{realm}/connections` and `/realms/{realm}/users/{userId}/connections`: the accounts
//! people connected at the realm's connection providers. Reading needs `user:read`, removing
//! `user:update`. The upstream tokens are never shown: a connection tells its provider, the
//! scopes granted, when its token expires and when it was last used.

use axum::extract::{RawQuery, State};
use axum::response::Response;
use serde::Serialize;
use utoipa::ToSchema;

use super::reach::{Found, InRealm, UserRead, UserUpdate};
use super::{ListQuery, commit};
use crate::http::AppState;
use crate::http::envelope;
use crate::kernel::clock::iso;
use crate::runtime::error::Error;
use crate::store::connections::{self as store, Connection, ConnectionStatus};
use crate::store::trail::{Change, ChangeAction, Placed};
use crate::store::users::User;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionView {
    pub id: String,
    pub realm_id: String,
    pub user_id: String,
    pub provider_id: String,
    /// Active, or Revoked once the provider refused to renew its token.
    pub status: ConnectionStatus,
    /// The scopes the provider granted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// When the upstream access token expires, when the provider said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// The last exchange for its token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<&Connection> for ConnectionView {
    fn from(connection: &Connection) -> Self {
        Self {
            id: connection.id.to_string(),
            realm_id: connection.realm_id.to_string(),
            user_id: connection.user_id.to_string(),
            provider_id: connection.provider_id.clone(),
            status: connection.status,
            scopes: connection.scopes.clone(),
            expires_at: connection.expires_at.map(iso),
            last_used_at: connection.last_used_at.map(iso),
            created_at: iso(connection.created_at),
            updated_at: iso(connection.updated_at),
        }
    }
}

#[utoipa::path(get, path = "/realms/{realm}/connections", tag = "Connected accounts",
    params(("realm" = String, Path), ("userId" = Option<String>, Query), ("providerId" = Option<String>, Query),
           ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query), ("status" = Option<String>, Query),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query),
           ("sortBy" = Option<String>, Query, description = "createdAt, updatedAt, lastUsedAt"), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's connections, in `pagination`", body = [ConnectionView]), (status = 403)),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    InRealm { realm, .. }: InRealm<UserRead>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    let list = ListQuery::parse(query, &["userId", "providerId"])?;
    list.status_in(crate::store::connections::ConnectionStatus::NAMES)?;
    let found =
        store::page(&state.store, &realm.id, list.filter("userId"), list.filter("providerId"), &list.page).await?;
    Ok(envelope::paged(found.map(|connection| ConnectionView::from(&connection))))
}

#[utoipa::path(get, path = "/realms/{realm}/users/{userId}/connections", tag = "Connected accounts",
    params(("realm" = String, Path), ("userId" = String, Path), ("pageNumber" = Option<u32>, Query),
           ("pageSize" = Option<u32>, Query), ("status" = Option<String>, Query)),
    responses((status = 200, description = "A page of the person's connections, in `pagination`", body = [ConnectionView]),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn of_user(
    State(state): State<AppState>,
    Found { realm, item: user, .. }: Found<User, UserRead>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    let list = ListQuery::parse(query, &[])?;
    list.status_in(crate::store::connections::ConnectionStatus::NAMES)?;
    let found = store::page(&state.store, &realm.id, Some(&user.id), None, &list.page).await?;
    Ok(envelope::paged(found.map(|connection| ConnectionView::from(&connection))))
}

#[utoipa::path(get, path = "/realms/{realm}/connections/{connectionId}", tag = "Connected accounts",
    params(("realm" = String, Path), ("connectionId" = String, Path)),
    responses((status = 200, body = ConnectionView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(Found { item: connection, .. }: Found<Connection, UserRead>) -> Result<Response, Error> {
    Ok(envelope::ok(ConnectionView::from(&connection)))
}

#[utoipa::path(delete, path = "/realms/{realm}/connections/{connectionId}", tag = "Connected accounts",
    params(("realm" = String, Path), ("connectionId" = String, Path)),
    responses((status = 200, description = "Removed: its tokens are forgotten, and no exchange hands them out again"),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    Found { item: connection, caller, .. }: Found<Connection, UserUpdate>,
) -> Result<Response, Error> {
    let mut tx = state.store.begin().await?;
    store::delete(&mut *tx, &connection.id, None).await?;
    let change = Change::of(ChangeAction::Delete, connection.place(), 200).before(ConnectionView::from(&connection));
    commit(&state, &caller, tx, change).await?;
    Ok(envelope::done())
}

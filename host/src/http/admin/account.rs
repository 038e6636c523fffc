//! `/account`: the caller's account.

use axum::extract::State;
use axum::response::Response;
use serde::Serialize;
use utoipa::ToSchema;

use crate::AppState;
use crate::authz::permission;
use crate::clock::{from_millis, iso};
use crate::error::Error;
use crate::http::auth::Caller;
use crate::http::envelope;
use crate::store::accounts;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountView {
    pub id: String,
    pub name: String,
    pub created_at: String,
}

#[utoipa::path(get, path = "/account", tag = "Account",
    responses((status = 200, description = "The caller's account, in `data`", body = AccountView)),
    security(("apiKey" = [])))]
pub async fn read(State(state): State<AppState>, caller: Caller) -> Result<Response, Error> {
    caller.require_account(&state, permission::ACCOUNT_READ)?;
    let account = accounts::find(state.store.pool(), caller.account_id()).await?.ok_or(Error::NotFound("account"))?;
    Ok(envelope::ok(AccountView {
        id: account.id,
        name: account.name,
        created_at: iso(from_millis(account.created_at)),
    }))
}

//! The account and its team: the people who sign in to the console, with their account roles.

use axum::extract::{Path, State};
use axum::response::Response;

use crate::authz::permission;
use crate::directory::admin::team as admin;
use crate::directory::admin::team::member_in_reach;
use crate::directory::team::{self};
use crate::directory::team::{AccountView, MemberView, TeamMemberInput};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::kernel::clock::iso;
use crate::runtime::error::Error;
use crate::store::accounts::{self};

#[utoipa::path(get, path = "/account", tag = "Account",
    responses((status = 200, description = "The caller's account, in `data`", body = AccountView)),
    security(("apiKey" = [])))]
pub async fn read(State(state): State<AppState>, caller: Caller) -> Result<Response, Error> {
    caller.require_account(&state.authz, permission::ACCOUNT_READ)?;
    let account = accounts::find(state.store.pool(), caller.account_id()).await?.ok_or(Error::NotFound("account"))?;
    Ok(envelope::ok(AccountView {
        id: account.id.to_string(),
        name: account.name,
        created_at: iso(account.created_at),
    }))
}

#[utoipa::path(get, path = "/account/members", tag = "Account",
    responses((status = 200, description = "The team, in the order people joined, in `data`", body = [MemberView])),
    security(("apiKey" = [])))]
pub async fn members(State(state): State<AppState>, caller: Caller) -> Result<Answer<Vec<MemberView>>, Error> {
    admin::members(&state.admin(), caller).await
}

#[utoipa::path(put, path = "/account/members/{userId}", tag = "Account", params(("userId" = String, Path)),
    request_body = TeamMemberInput,
    responses((status = 200, description = "The member with the new roles, in `data`", body = MemberView),
              (status = 400), (status = 404), (status = 409, description = "The account would be left without an Owner")),
    security(("apiKey" = [])))]
pub async fn update_member(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Answer<MemberView>, Error> {
    admin::update_member(&state.admin(), caller, path, body).await
}

#[utoipa::path(delete, path = "/account/members/{userId}", tag = "Account", params(("userId" = String, Path)),
    responses((status = 200, description = "The person is removed from the team: their console sessions end and their personal access tokens stop working"),
              (status = 404), (status = 409, description = "The last Owner cannot be removed")),
    security(("apiKey" = [])))]
pub async fn remove_member(
    State(state): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
) -> Result<Response, Error> {
    let found = member_in_reach(&state.admin(), &caller, &user_id).await?;
    team::remove(&state, found, caller.author()).await?;
    Ok(envelope::done())
}

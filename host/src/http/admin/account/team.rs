//! The account and its team: the people who sign in to the console, with their account roles.

use axum::extract::{Path, State};
use axum::response::Response;

use crate::authz::permission;
use crate::directory::team::{self, TeamMember};
use crate::directory::team::{AccountView, MemberView, TeamMemberInput};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::kernel::clock::iso;
use crate::kernel::validate::Rule;
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
    caller.require_account(&state.authz, permission::ACCOUNT_READ)?;
    let team = accounts::members(state.store.pool(), caller.account_id()).await?;
    Ok(Answer::Ok(team.into_iter().map(MemberView::of).collect::<Vec<_>>()))
}

/// The member, once the caller may change the team.
async fn member_in_reach(state: &AppState, caller: &Caller, user_id: &str) -> Result<TeamMember, Error> {
    caller.require_account(&state.authz, permission::ACCOUNT_UPDATE)?;
    team::find(state, caller.account_id(), user_id).await
}

#[utoipa::path(put, path = "/account/members/{userId}", tag = "Account", params(("userId" = String, Path)),
    request_body = TeamMemberInput,
    responses((status = 200, description = "The member with the new roles, in `data`", body = MemberView),
              (status = 400), (status = 404), (status = 409, description = "The account would be left without an Owner")),
    security(("apiKey" = [])))]
pub async fn update_member(
    State(state): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<MemberView>, Error> {
    let found = member_in_reach(&state, &caller, &user_id).await?;
    let input = TeamMemberInput::read(&state, &caller, &mut body).await?;
    body.finish()?;
    let Some(TeamMemberInput { roles }) = input else {
        return Err(Error::invalid("roles", Rule::Required, "roles is required"));
    };
    let member = team::set_roles(&state, found, roles, caller.author()).await?;
    Ok(Answer::Ok(MemberView::of(member)))
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
    let found = member_in_reach(&state, &caller, &user_id).await?;
    team::remove(&state, found, caller.author()).await?;
    Ok(envelope::done())
}

//! The account and its team: the people who sign in to the console, with their account roles.

use axum::extract::{Path, State};
use axum::response::Response;
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::authz::permission;
use crate::http::AppState;
use crate::http::admin::commit;
use crate::http::admin::secrets::grantable_roles;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::clock::iso;
use crate::kernel::validate::Rule;
use crate::runtime::error::Error;
use crate::store::accounts::{self, Member};
use crate::store::trail::{Change, ChangeAction, Place, ResourceKind};

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
        id: account.id.to_string(),
        name: account.name,
        created_at: iso(account.created_at),
    }))
}

/// A person on the team.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberView {
    /// The person's id in the platform realm.
    pub user_id: String,
    pub username: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Account roles: Owner, Admin, Developer, Auditor or custom roles.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    pub joined_at: String,
}

impl MemberView {
    pub(super) fn of(member: Member) -> Self {
        Self {
            user_id: member.user_id.to_string(),
            username: member.username,
            email: member.email,
            roles: member.roles.clone(),
            joined_at: iso(member.created_at),
        }
    }
}

#[utoipa::path(get, path = "/account/members", tag = "Account",
    responses((status = 200, description = "The team, in the order people joined, in `data`", body = [MemberView])),
    security(("apiKey" = [])))]
pub async fn members(State(state): State<AppState>, caller: Caller) -> Result<Response, Error> {
    caller.require_account(&state, permission::ACCOUNT_READ)?;
    let team = accounts::members(state.store.pool(), caller.account_id()).await?;
    Ok(envelope::ok(team.into_iter().map(MemberView::of).collect::<Vec<_>>()))
}

/// The member, and whether they are the account's last Owner.
async fn member_in_reach(state: &AppState, caller: &Caller, user_id: &str) -> Result<(Member, bool), Error> {
    caller.require_account(state, permission::ACCOUNT_UPDATE)?;
    let team = accounts::members(state.store.pool(), caller.account_id()).await?;
    let owners = team.iter().filter(|m| m.roles.iter().any(|r| r == "Owner")).count();
    let member = team.into_iter().find(|m| m.user_id == user_id).ok_or(Error::NotFound("member"))?;
    let is_owner = member.roles.iter().any(|r| r == "Owner");
    Ok((member, is_owner && owners == 1))
}

#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct TeamMemberInput {
    /// At least one account role; only roles the caller holds, unless the caller is an Owner.
    roles: Vec<String>,
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
) -> Result<Response, Error> {
    let (member, last_owner) = member_in_reach(&state, &caller, &user_id).await?;
    let roles = body.required("roles", grantable_roles(&state, &caller).await?);
    body.finish()?;
    let Some(roles) = roles else { return Err(Error::invalid("roles", Rule::Required, "roles is required")) };
    if last_owner && !roles.iter().any(|r| r == "Owner") {
        return Err(Error::Conflict("the account must keep at least one Owner".into()));
    }
    let before = json!(MemberView::of(member.clone()));
    let mut tx = state.store.begin().await?;
    accounts::set_member_roles(&mut *tx, caller.account_id(), &user_id, &roles).await?;
    let updated = Member { roles: roles.clone(), ..member };
    let view = MemberView::of(updated);
    let change = Change::of(ChangeAction::Update, Place::outside_realms(ResourceKind::AccountMember, &user_id), 200)
        .before(before)
        .after(&view);
    commit(&state, &caller, tx, change).await?;
    Ok(envelope::ok(view))
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
    let (member, last_owner) = member_in_reach(&state, &caller, &user_id).await?;
    if last_owner {
        return Err(Error::Conflict("the account must keep at least one Owner".into()));
    }
    let mut tx = state.store.begin().await?;
    accounts::delete_member(&mut *tx, caller.account_id(), &user_id).await?;
    removed(&state, &caller, tx, ResourceKind::AccountMember, &user_id, json!(MemberView::of(member))).await
}

/// Commits a removal with its trail row.
pub(super) async fn removed(
    state: &AppState,
    caller: &Caller,
    tx: crate::store::Transaction,
    resource_type: ResourceKind,
    id: &str,
    before: Value,
) -> Result<Response, Error> {
    let change = Change::of(ChangeAction::Delete, Place::outside_realms(resource_type, id), 200).before(before);
    commit(state, caller, tx, change).await?;
    Ok(envelope::done())
}

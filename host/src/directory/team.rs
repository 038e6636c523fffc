//! The account's team: the people of the platform realm who administer it, each with account
//! roles. Their roles change and they leave the team here, each change trailed; the account
//! always keeps an Owner.

use super::account_roles::grantable_roles;
use crate::authz::caller::Caller;
use crate::kernel::clock::iso;
use crate::kernel::validate::Body;
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::accounts::{self, Member};
use crate::store::trail::{Change, ChangeAction, Place, ResourceKind};
use serde::Serialize;
use utoipa::ToSchema;

/// A member of the team, and whether they are its last Owner.
#[derive(Debug, Clone)]
pub struct TeamMember {
    pub member: Member,
    pub last_owner: bool,
}

fn is_owner(member: &Member) -> bool {
    member.roles.iter().any(|r| r == "Owner")
}

/// The member `user_id` of the account's team.
pub async fn find(context: &Context, account_id: &str, user_id: &str) -> Result<TeamMember, Error> {
    let team = accounts::members(context.store.pool(), account_id).await?;
    let owners = team.iter().filter(|m| is_owner(m)).count();
    let member = team.into_iter().find(|m| m.user_id == user_id).ok_or(Error::NotFound("member"))?;
    let last_owner = is_owner(&member) && owners == 1;
    Ok(TeamMember { member, last_owner })
}

fn place(member: &Member) -> Place {
    Place::outside_realms(ResourceKind::AccountMember, &member.user_id)
}

/// Gives `found` the account roles `roles`; the last Owner stays an Owner.
pub async fn set_roles(
    context: &Context,
    found: TeamMember,
    roles: Vec<String>,
    by: Author<'_>,
) -> Result<Member, Error> {
    if found.last_owner && !roles.iter().any(|r| r == "Owner") {
        return Err(Error::Conflict("the account must keep at least one Owner".into()));
    }
    let before = found.member;
    let mut tx = context.store.begin().await?;
    accounts::set_member_roles(&mut *tx, &before.account_id, &before.user_id, &roles).await?;
    let member = Member { roles, ..before.clone() };
    let change = Change::of(ChangeAction::Update, place(&member), 200)
        .before(MemberView::of(before.clone()))
        .after(MemberView::of(member.clone()));
    changes::commit(context, by, tx, change).await?;
    Ok(member)
}

/// Removes `found` from the team, unless they are its last Owner: their console sessions end and
/// their personal access tokens stop working.
pub async fn remove(context: &Context, found: TeamMember, by: Author<'_>) -> Result<(), Error> {
    if found.last_owner {
        return Err(Error::Conflict("the account must keep at least one Owner".into()));
    }
    let member = found.member;
    let mut tx = context.store.begin().await?;
    accounts::delete_member(&mut *tx, &member.account_id, &member.user_id).await?;
    changes::commit(
        context,
        by,
        tx,
        Change::of(ChangeAction::Delete, place(&member), 200).before(MemberView::of(member.clone())),
    )
    .await
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountView {
    pub id: String,
    pub name: String,
    pub created_at: String,
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
    pub(crate) fn of(member: Member) -> Self {
        Self {
            user_id: member.user_id.to_string(),
            username: member.username,
            email: member.email,
            roles: member.roles.clone(),
            joined_at: iso(member.created_at),
        }
    }
}

/// The roles a member is given.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct TeamMemberInput {
    /// At least one account role; only roles the caller holds, unless the caller is an Owner.
    pub(crate) roles: Vec<String>,
}

impl TeamMemberInput {
    pub(crate) async fn read(context: &Context, caller: &Caller, body: &mut Body) -> Result<Option<Self>, Error> {
        Ok(body.required("roles", grantable_roles(context, caller).await?).map(|roles| Self { roles }))
    }
}

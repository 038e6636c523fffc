//! The account's team: the people of the platform realm who administer it, each with account
//! roles. Their roles change and they leave the team here, each change trailed; the account
//! always keeps an Owner.

use serde::Serialize;

use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::accounts::{self, Member};
use crate::store::trail::{Change, ChangeAction, Place, ResourceKind};

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
pub async fn set_roles<View: Serialize>(
    context: &Context,
    found: TeamMember,
    roles: Vec<String>,
    by: Author<'_>,
    describe: impl Fn(&Member) -> View,
) -> Result<Member, Error> {
    if found.last_owner && !roles.iter().any(|r| r == "Owner") {
        return Err(Error::Conflict("the account must keep at least one Owner".into()));
    }
    let before = found.member;
    let mut tx = context.store.begin().await?;
    accounts::set_member_roles(&mut *tx, &before.account_id, &before.user_id, &roles).await?;
    let member = Member { roles, ..before.clone() };
    let change =
        Change::of(ChangeAction::Update, place(&member), 200).before(describe(&before)).after(describe(&member));
    changes::commit(context, by, tx, change).await?;
    Ok(member)
}

/// Removes `found` from the team, unless they are its last Owner: their console sessions end and
/// their personal access tokens stop working.
pub async fn remove<View: Serialize>(
    context: &Context,
    found: TeamMember,
    by: Author<'_>,
    describe: impl Fn(&Member) -> View,
) -> Result<(), Error> {
    if found.last_owner {
        return Err(Error::Conflict("the account must keep at least one Owner".into()));
    }
    let member = found.member;
    let mut tx = context.store.begin().await?;
    accounts::delete_member(&mut *tx, &member.account_id, &member.user_id).await?;
    changes::commit(context, by, tx, Change::of(ChangeAction::Delete, place(&member), 200).before(describe(&member)))
        .await
}

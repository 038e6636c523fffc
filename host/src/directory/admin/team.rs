//! The admin operations on the account's team: its people and the roles each holds.

use crate::authz::permission;
use crate::directory::reach::Admin;
use crate::directory::team::{self, MemberView, TeamMember, TeamMemberInput};
use crate::kernel::validate::Body;
use crate::kernel::validate::Rule;
use crate::runtime::error::Error;
use crate::store::accounts::{self};

/// The member, once the caller may change the team.
pub(crate) async fn member_in_reach(admin: &Admin<'_>, caller: &Caller, user_id: &str) -> Result<TeamMember, Error> {
    caller.require_account(admin.authz, permission::ACCOUNT_UPDATE)?;
    team::find(admin, caller.account_id(), user_id).await
}
use crate::authz::caller::Caller;
use crate::runtime::answer::Answer;

/// `GET /account/members`: the team, in the order people joined.
pub async fn members(admin: &Admin<'_>, caller: Caller) -> Result<Answer<Vec<MemberView>>, Error> {
    caller.require_account(admin.authz, permission::ACCOUNT_READ)?;
    let team = accounts::members(admin.store.pool(), caller.account_id()).await?;
    Ok(Answer::Ok(team.into_iter().map(MemberView::of).collect::<Vec<_>>()))
}

/// `PUT /account/members/{userId}`: the member with the new roles.
pub async fn update_member(
    admin: &Admin<'_>,
    caller: Caller,
    user_id: String,
    mut body: Body,
) -> Result<Answer<MemberView>, Error> {
    let found = member_in_reach(admin, &caller, &user_id).await?;
    let input = TeamMemberInput::read(admin, &caller, &mut body).await?;
    body.finish()?;
    let Some(TeamMemberInput { roles }) = input else {
        return Err(Error::invalid("roles", Rule::Required, "roles is required"));
    };
    let member = team::set_roles(admin, found, roles, caller.author()).await?;
    Ok(Answer::Ok(MemberView::of(member)))
}

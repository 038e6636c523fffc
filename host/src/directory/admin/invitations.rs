//! The admin operations on invitations to the account's team: sent, listed, revoked, accepted.

use crate::authz::caller::Caller;
use crate::authz::permission;
use crate::directory::invitations;
use crate::directory::invitations::Invited;
use crate::directory::invitations::{InvitationInput, InvitationView};
use crate::directory::listing::ListQuery;
use crate::directory::reach::Admin;
use crate::kernel::validate::Body;
use crate::kernel::validate::Rule;
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::invitations::{self as invitation_store, Invitation};

/// `POST /account/invitations`: the invitation, sent by e-mail with a token valid for 7 days.
pub async fn invite(admin: &Admin<'_>, caller: Caller, mut body: Body) -> Result<Answer<InvitationView>, Error> {
    caller.require_account(admin.authz, permission::ACCOUNT_UPDATE)?;
    let input = InvitationInput::read(admin, &caller, &mut body).await?;
    body.finish()?;
    let InvitationInput { email: Some(address), roles: Some(roles) } = input else {
        return Err(Error::invalid("", Rule::Required, "email and roles are required"));
    };
    let invited_by = caller.actor.user_id.as_deref().unwrap_or(&caller.principal.id).to_owned();
    let invited = Invited { account_id: caller.account_id().clone(), email: address, roles, invited_by };
    let now = admin.clock.now();
    let describe = |invitation: &Invitation| InvitationView::of(invitation.clone(), now);
    let invitation = invitations::invite(admin, invited, caller.author()).await?;
    Ok(Answer::Created(describe(&invitation)))
}

/// `GET /account/invitations`: a page of the account's invitations, newest first.
pub async fn invitations(
    admin: &Admin<'_>,
    caller: Caller,
    query: Option<String>,
) -> Result<Answer<InvitationView>, Error> {
    caller.require_account(admin.authz, permission::ACCOUNT_READ)?;
    let list = ListQuery::parse(query, &[])?;
    let now = admin.clock.now();
    let found = invitation_store::page(&admin.store, caller.account_id(), &list.page).await?;
    Ok(Answer::Paged(found.map(|invitation| InvitationView::of(invitation, now))))
}

/// `DELETE /account/invitations/{invitationId}`: revoked: its token no longer works.
pub async fn revoke_invitation(admin: &Admin<'_>, caller: Caller, id: String) -> Result<Answer<()>, Error> {
    caller.require_account(admin.authz, permission::ACCOUNT_UPDATE)?;
    let found = invitation_store::find(admin.store.pool(), caller.account_id(), &id).await?;
    let invitation = found.ok_or(Error::NotFound("invitation"))?;
    invitations::revoke(admin, &invitation, caller.author()).await?;
    Ok(Answer::Done)
}

//! Invitations to the team by e-mail, and their acceptance.

use crate::directory::team::MemberView;
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;

use crate::authz::permission;
use crate::directory::invitations::{self, Acceptance, Invited};
use crate::directory::invitations::{AcceptanceInput, InvitationInput, InvitationView};
use crate::http::AppState;
use crate::http::admin::ListQuery;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::kernel::validate::Rule;
use crate::runtime::error::Error;
use crate::store::invitations::{self as invitation_store, Invitation};

#[utoipa::path(post, path = "/account/invitations", tag = "Account", request_body = InvitationInput,
    responses((status = 201, description = "The invitation, sent by e-mail with a token valid for 7 days, in `data`", body = InvitationView),
              (status = 400, description = "A refused field; `email` with rule `Duplicate` when the person is on the team or already invited"),
              (status = 503, description = "The e-mail could not be sent (no SMTP server configured, or it refused); nothing is stored")),
    security(("apiKey" = [])))]
pub async fn invite(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<InvitationView>, Error> {
    caller.require_account(&state.authz, permission::ACCOUNT_UPDATE)?;
    let input = InvitationInput::read(&state, &caller, &mut body).await?;
    body.finish()?;
    let InvitationInput { email: Some(address), roles: Some(roles) } = input else {
        return Err(Error::invalid("", Rule::Required, "email and roles are required"));
    };
    let invited_by = caller.actor.user_id.as_deref().unwrap_or(&caller.principal.id).to_owned();
    let invited = Invited { account_id: caller.account_id().clone(), email: address, roles, invited_by };
    let now = state.clock.now();
    let describe = |invitation: &Invitation| InvitationView::of(invitation.clone(), now);
    let invitation = invitations::invite(&state, invited, caller.author()).await?;
    Ok(Answer::Created(describe(&invitation)))
}

#[utoipa::path(get, path = "/account/invitations", tag = "Account",
    params(("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query), ("searchTerm" = Option<String>, Query, description = "Matched against the address")),
    responses((status = 200, description = "A page of the account's invitations, newest first, in `pagination`", body = [InvitationView])),
    security(("apiKey" = [])))]
pub async fn invitations(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer<InvitationView>, Error> {
    caller.require_account(&state.authz, permission::ACCOUNT_READ)?;
    let list = ListQuery::parse(query, &[])?;
    let now = state.clock.now();
    let found = invitation_store::page(&state.store, caller.account_id(), &list.page).await?;
    Ok(Answer::Paged(found.map(|invitation| InvitationView::of(invitation, now))))
}

#[utoipa::path(delete, path = "/account/invitations/{invitationId}", tag = "Account", params(("invitationId" = String, Path)),
    responses((status = 200, description = "Revoked: its token no longer works"), (status = 404),
              (status = 409, description = "Already accepted, revoked or expired")),
    security(("apiKey" = [])))]
pub async fn revoke_invitation(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Answer<()>, Error> {
    caller.require_account(&state.authz, permission::ACCOUNT_UPDATE)?;
    let found = invitation_store::find(state.store.pool(), caller.account_id(), &id).await?;
    let invitation = found.ok_or(Error::NotFound("invitation"))?;
    invitations::revoke(&state, &invitation, caller.author()).await?;
    Ok(Answer::Done)
}

/// Accepting an invitation: the person chooses a username and a password and joins the team with
/// the invitation's roles. Public (the token is the credential); errors in the admin envelope.
#[utoipa::path(post, path = "/account/invitations/accept", tag = "Account", request_body = AcceptanceInput,
    responses((status = 201, description = "The new member, in `data`; they sign in at the platform realm's token endpoint", body = MemberView),
              (status = 400, description = "A refused field: `token` (`NotFound`) when no pending invitation has it, `username` (`Duplicate`), `password`")))]
pub async fn accept_invitation(
    State(state): State<AppState>,
    axum::Extension(crate::http::address::ClientAddress(address)): axum::Extension<crate::http::address::ClientAddress>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    let input = AcceptanceInput::read(&mut body);
    body.finish()?;
    let Some(AcceptanceInput { token, username, password }) = input else {
        return Err(Error::invalid("", Rule::Required, "token, username and password are required"));
    };
    let acceptance = Acceptance { token, username, password, ip_address: address.to_string() };
    let member = invitations::accept(&state, acceptance).await?;
    let view = MemberView::of(member);
    Ok(envelope::created(view))
}

//! Invitations to the team by e-mail, and their acceptance.

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::team::MemberView;
use crate::authz::permission;
use crate::directory::invitations::{self, Acceptance, Invited};
use crate::http::AppState;
use crate::http::admin::ListQuery;
use crate::http::admin::secrets::grantable_roles;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::kernel::clock::iso;
use crate::kernel::validate::email;
use crate::kernel::validate::{Body, Rule, parsed};
use crate::runtime::error::Error;
use crate::store::invitations::{self as invitation_store, Invitation};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvitationView {
    pub id: String,
    pub email: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// Pending, Accepted, Revoked or Expired.
    pub status: String,
    /// The person or credential that invited.
    pub invited_by: String,
    pub created_at: String,
    /// Seven days after creation.
    pub expires_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted_at: Option<String>,
    /// The id of the person the invitation made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted_user_id: Option<String>,
}

impl InvitationView {
    fn of(invitation: Invitation, now: DateTime<Utc>) -> Self {
        Self {
            status: invitation.status(now).to_owned(),
            id: invitation.id.into(),
            email: invitation.email,
            roles: invitation.roles.clone(),
            invited_by: invitation.invited_by,
            created_at: iso(invitation.created_at),
            expires_at: iso(invitation.expires_at),
            accepted_at: invitation.accepted_at.map(iso),
            accepted_user_id: invitation.accepted_user_id.map(String::from),
        }
    }
}

#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct InvitationInput {
    /// Where the invitation is sent.
    #[schema(value_type = String, required = true)]
    email: Option<String>,
    /// The account roles the person gets on accepting; only roles the caller holds, unless the
    /// caller is an Owner.
    #[schema(value_type = Vec<String>, required = true)]
    roles: Option<Vec<String>>,
}

impl InvitationInput {
    /// The fields `body` gives: an address, and roles the caller may give.
    async fn read(state: &AppState, caller: &Caller, body: &mut Body) -> Result<Self, Error> {
        let email = body.required("email", parsed(email));
        let roles = body.required("roles", grantable_roles(state, caller).await?);
        Ok(Self { email, roles })
    }
}

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
    caller.require_account(&state, permission::ACCOUNT_UPDATE)?;
    let input = InvitationInput::read(&state, &caller, &mut body).await?;
    body.finish()?;
    let InvitationInput { email: Some(address), roles: Some(roles) } = input else {
        return Err(Error::invalid("", Rule::Required, "email and roles are required"));
    };
    let invited_by = caller.actor.user_id.as_deref().unwrap_or(&caller.principal.id).to_owned();
    let invited = Invited { account_id: caller.account_id().clone(), email: address, roles, invited_by };
    let now = state.clock.now();
    let describe = |invitation: &Invitation| InvitationView::of(invitation.clone(), now);
    let invitation = invitations::invite(&state, invited, caller.author(), describe).await?;
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
    caller.require_account(&state, permission::ACCOUNT_READ)?;
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
    caller.require_account(&state, permission::ACCOUNT_UPDATE)?;
    let now = state.clock.now();
    let found = invitation_store::find(state.store.pool(), caller.account_id(), &id).await?;
    let invitation = found.ok_or(Error::NotFound("invitation"))?;
    let describe = |invitation: &Invitation| InvitationView::of(invitation.clone(), now);
    invitations::revoke(&state, &invitation, caller.author(), describe).await?;
    Ok(Answer::Done)
}

#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct AcceptanceInput {
    /// The token of the invitation e-mail.
    token: String,
    /// The username to sign in to the console with; no spaces.
    username: String,
    /// At least the platform realm's Minimum Length.
    password: String,
}

impl AcceptanceInput {
    fn read(body: &mut crate::kernel::validate::Body) -> Option<Self> {
        let token = body.required("token", crate::kernel::validate::text(1, 256));
        let username = body.required("username", crate::kernel::validate::username);
        let password =
            body.required("password", crate::kernel::validate::text(1, crate::kernel::passwords::MAX_PASSWORD_LENGTH));
        Some(Self { token: token?, username: username?, password: password? })
    }
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
    let member = invitations::accept(&state, acceptance, |member| MemberView::of(member.clone())).await?;
    let view = MemberView::of(member);
    Ok(envelope::created(view))
}

//! Invitations to the team by e-mail, and their acceptance.

use crate::directory::team::MemberView;
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;

use crate::directory::admin::invitations as admin;
use crate::directory::invitations::{self, Acceptance};
use crate::directory::invitations::{AcceptanceInput, InvitationInput, InvitationView};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::kernel::validate::Rule;
use crate::runtime::error::Error;

#[utoipa::path(post, path = "/account/invitations", tag = "Account", request_body = InvitationInput,
    responses((status = 201, description = "The invitation, sent by e-mail with a token valid for 7 days, in `data`", body = InvitationView),
              (status = 400, description = "A refused field; `email` with rule `Duplicate` when the person is on the team or already invited"),
              (status = 503, description = "The e-mail could not be sent (no SMTP server configured, or it refused); nothing is stored")),
    security(("apiKey" = [])))]
pub async fn invite(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<Answer<InvitationView>, Error> {
    admin::invite(&state.admin(), caller, body).await
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
    admin::invitations(&state.admin(), caller, query).await
}

#[utoipa::path(delete, path = "/account/invitations/{invitationId}", tag = "Account", params(("invitationId" = String, Path)),
    responses((status = 200, description = "Revoked: its token no longer works"), (status = 404),
              (status = 409, description = "Already accepted, revoked or expired")),
    security(("apiKey" = [])))]
pub async fn revoke_invitation(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<String>,
) -> Result<Answer<()>, Error> {
    admin::revoke_invitation(&state.admin(), caller, path).await
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

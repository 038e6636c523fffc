//! Invitations to the team by e-mail, and their acceptance.

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use super::team::{MemberView, removed};
use crate::authz::permission;
use crate::http::AppState;
use crate::http::admin::secrets::grantable_roles;
use crate::http::admin::{ListQuery, commit};
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::clock::iso;
use crate::kernel::crypto::generate_secret;
use crate::kernel::ids::{InvitationId, RealmId, UserId};
use crate::kernel::validate::email;
use crate::kernel::validate::{Rule, parsed};
use crate::runtime::error::Error;
use crate::runtime::outbound::mail::{Mail, MailError};
use crate::store::accounts::{self, Member};
use crate::store::invitations::{self as invitation_store, Invitation};
use crate::store::trail::{Change, ChangeAction, Place, ResourceKind};

/// Prefix of invitation tokens.
pub const INVITATION_TOKEN_PREFIX: &str = "cstl_inv_";
/// How long an invitation can be accepted.
pub const INVITATION_DAYS: i64 = 7;

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
#[allow(dead_code)]
pub struct InvitationInput {
    /// Where the invitation is sent.
    email: String,
    /// The account roles the person gets on accepting; only roles the caller holds, unless the
    /// caller is an Owner.
    roles: Vec<String>,
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
) -> Result<Response, Error> {
    caller.require_account(&state, permission::ACCOUNT_UPDATE)?;
    let address = body.required("email", parsed(email));
    let roles = body.required("roles", grantable_roles(&state, &caller).await?);
    body.finish()?;
    let (Some(address), Some(roles)) = (address, roles) else {
        return Err(Error::invalid("", Rule::Required, "email and roles are required"));
    };
    let now = state.clock.now();
    let pool = state.store.pool();
    let on_team = accounts::members(pool, caller.account_id())
        .await?
        .iter()
        .any(|m| m.email.as_deref().is_some_and(|e| e.eq_ignore_ascii_case(&address)));
    let invited = invitation_store::pending_for(pool, caller.account_id(), &address, now).await?;
    if on_team || invited {
        let why = if on_team { "a member of the team has this address" } else { "a pending invitation to it exists" };
        return Err(Error::invalid("email", Rule::Duplicate, why));
    }
    let account = accounts::find(pool, caller.account_id()).await?.ok_or(Error::NotFound("account"))?;

    let token = generate_secret(INVITATION_TOKEN_PREFIX);
    let expires_at = now + TimeDelta::days(INVITATION_DAYS);
    let invitation = Invitation {
        id: InvitationId::fresh(),
        account_id: caller.account_id().clone(),
        email: address.clone(),
        roles: roles.clone(),
        token_hash: state.hasher.hash(&token),
        invited_by: caller.actor.user_id.as_deref().unwrap_or(&caller.principal.id).to_owned(),
        created_at: now,
        expires_at,
        accepted_at: None,
        accepted_user_id: None,
        revoked_at: None,
    };
    // Sent before anything is stored: an invitation nobody received is never left behind.
    let message = Mail {
        to: &address,
        subject: &format!("You are invited to join {} on Castellan", account.name),
        body: format!(
            "You are invited to join the team of {account} as {roles}.\n\n\
             Accept by choosing a username and a password:\n\n\
             POST {url}/api/v1/admin/account/invitations/accept\n\
             {{\"token\": \"{token}\", \"username\": \"...\", \"password\": \"...\"}}\n\n\
             The invitation can be accepted once, until {until}.\n",
            account = account.name,
            roles = roles.join(", "),
            url = state.public_url,
            until = iso(expires_at),
        ),
    };
    state.outbound.mailer.send(message).await.map_err(|error| match error {
        MailError::Address(_) => Error::invalid("email", Rule::Format, "email cannot receive mail"),
        other => {
            tracing::warn!(error = %other, "an invitation e-mail was not sent");
            Error::MailUnavailable(format!("the invitation e-mail could not be sent: {other}"))
        }
    })?;

    let mut tx = state.store.begin().await?;
    invitation_store::insert(&mut *tx, &invitation).await?;
    let view = InvitationView::of(invitation, now);
    let change =
        Change::of(ChangeAction::Create, Place::outside_realms(ResourceKind::AccountInvitation, &view.id), 201)
            .after(&view);
    commit(&state, &caller, tx, change).await?;
    Ok(envelope::created(view))
}

#[utoipa::path(get, path = "/account/invitations", tag = "Account",
    params(("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query), ("searchTerm" = Option<String>, Query, description = "Matched against the address")),
    responses((status = 200, description = "A page of the account's invitations, newest first, in `pagination`", body = [InvitationView])),
    security(("apiKey" = [])))]
pub async fn invitations(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    caller.require_account(&state, permission::ACCOUNT_READ)?;
    let list = ListQuery::parse(query, &[])?;
    let now = state.clock.now();
    let found = invitation_store::page(&state.store, caller.account_id(), &list.page).await?;
    Ok(envelope::paged(found.map(|invitation| InvitationView::of(invitation, now))))
}

#[utoipa::path(delete, path = "/account/invitations/{invitationId}", tag = "Account", params(("invitationId" = String, Path)),
    responses((status = 200, description = "Revoked: its token no longer works"), (status = 404),
              (status = 409, description = "Already accepted, revoked or expired")),
    security(("apiKey" = [])))]
pub async fn revoke_invitation(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Response, Error> {
    caller.require_account(&state, permission::ACCOUNT_UPDATE)?;
    let now = state.clock.now();
    let found = invitation_store::find(state.store.pool(), caller.account_id(), &id).await?;
    let invitation = found.ok_or(Error::NotFound("invitation"))?;
    let mut tx = state.store.begin().await?;
    if !invitation_store::revoke(&mut *tx, caller.account_id(), &id, now).await? {
        return Err(Error::Conflict(format!("the invitation is {}", invitation.status(now))));
    }
    removed(&state, &caller, tx, ResourceKind::AccountInvitation, &id, json!(InvitationView::of(invitation, now))).await
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
    use crate::kernel::ids::PLATFORM_REALM;
    use crate::store::trail;
    use crate::store::users::{self as user_store, User, UserStatus};

    let input = AcceptanceInput::read(&mut body);
    body.finish()?;
    let Some(AcceptanceInput { token, username, password }) = input else {
        return Err(Error::invalid("", Rule::Required, "token, username and password are required"));
    };
    let now = state.clock.now();
    let no_invitation = || Error::invalid("token", Rule::NotFound, "no pending invitation has this token");
    let invitation = invitation_store::find_by_token(state.store.pool(), &state.hasher.hash(&token))
        .await?
        .filter(|i| i.status(now) == "Pending")
        .ok_or_else(no_invitation)?;
    let realm = crate::http::admin::find_realm(&state, PLATFORM_REALM).await?.ok_or(Error::NotFound("realm"))?;
    let minimum = usize::try_from(realm.settings.minimum_password_length).unwrap_or(8);
    if password.chars().count() < minimum {
        return Err(Error::invalid(
            "password",
            Rule::MinLength,
            format!("password must have at least {minimum} characters"),
        ));
    }
    let user = User {
        id: UserId::fresh(),
        realm_id: RealmId::platform(),
        username,
        email: Some(invitation.email.clone()),
        first_name: None,
        last_name: None,
        // The invitation reached this address.
        email_confirmed: true,
        status: UserStatus::Active,
        password_hash: None,
        must_change_password: false,
        created_at: now,
        updated_at: now,
    };
    crate::directory::people::check_unique(&state, &user).await?;
    let hash = crate::directory::people::chosen_password(&state.passwords.breached, &realm, password).await?;
    let user = User { password_hash: Some(hash), ..user };

    let mut tx = state.store.begin().await?;
    if !user_store::insert(&mut *tx, &user).await? {
        return Err(Error::invalid("username", Rule::Duplicate, "another person has this username"));
    }
    if !invitation_store::accept(&mut *tx, &invitation.id, &user.id, now).await? {
        return Err(no_invitation());
    }
    let roles = invitation.roles.clone();
    accounts::insert_member(&mut *tx, &invitation.account_id, &user.id, &roles, now).await?;
    let member = Member {
        account_id: invitation.account_id.clone(),
        user_id: user.id.clone(),
        username: user.username.clone(),
        email: user.email.clone(),
        roles: invitation.roles.clone(),
        created_at: now,
    };
    let view = MemberView::of(member);
    let actor = trail::Actor {
        account_id: invitation.account_id.clone(),
        actor_type: trail::ActorType::User,
        user_id: Some(user.id.clone()),
        username: Some(user.username.clone()),
        email: user.email.clone(),
        credential_id: None,
        credential_name: None,
        ip_address: address.to_string(),
    };
    let request = trail::Request { method: "POST".into(), path: "/account/invitations/accept".into() };
    let place = Place::outside_realms(ResourceKind::AccountMember, &user.id).under(&invitation.id);
    let change = Change::of(ChangeAction::Create, place, 201).after(&view);
    trail::record_change(&mut tx, &actor, &request, &change, now).await?;
    tx.commit().await?;
    Ok(envelope::created(view))
}

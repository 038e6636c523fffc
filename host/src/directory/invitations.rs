//! Invitations to the account's team: sent by e-mail with a single-use token, revoked while they
//! wait, and accepted by the person they reach, who chooses a username and a password in the
//! platform realm and joins the team with the invitation's roles.

use super::account_roles::grantable_roles;
use super::team::MemberView;
use crate::authz::caller::Caller;
use crate::kernel::clock::iso;
use crate::kernel::crypto::generate_secret;
use crate::kernel::ids::{AccountId, InvitationId, PLATFORM_REALM, RealmId, UserId};
use crate::kernel::validate::{Body, Rule, email, parsed};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::runtime::outbound::mail::{Mail, MailError};
use crate::store::accounts::{self, Member};
use crate::store::invitations::{self as invitation_store, Invitation};
use crate::store::trail::{self, Change, ChangeAction, Place, ResourceKind};
use crate::store::users::{self as user_store, User, UserStatus};
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use utoipa::ToSchema;

/// The prefix of an invitation's token.
pub const INVITATION_TOKEN_PREFIX: &str = "cstl_inv_";
/// How long an invitation waits for its person.
pub const INVITATION_DAYS: i64 = 7;

/// Who is invited, and as what.
#[derive(Debug)]
pub struct Invited {
    pub account_id: AccountId,
    pub email: String,
    pub roles: Vec<String>,
    /// The person or credential that invites.
    pub invited_by: String,
}

fn place(id: &str) -> Place {
    Place::outside_realms(ResourceKind::AccountInvitation, id)
}

/// Invites a person by e-mail: refused for an address of the team or one already invited. The
/// mail is sent before anything is stored, so an invitation nobody received is never left behind.
pub async fn invite(context: &Context, invited: Invited, by: Author<'_>) -> Result<Invitation, Error> {
    let Invited { account_id, email, roles, invited_by } = invited;
    let now = context.clock.now();
    let pool = context.store.pool();
    let on_team = accounts::members(pool, &account_id)
        .await?
        .iter()
        .any(|m| m.email.as_deref().is_some_and(|e| e.eq_ignore_ascii_case(&email)));
    let waiting = invitation_store::pending_for(pool, &account_id, &email, now).await?;
    if on_team || waiting {
        let why = if on_team { "a member of the team has this address" } else { "a pending invitation to it exists" };
        return Err(Error::invalid("email", Rule::Duplicate, why));
    }
    let account = accounts::find(pool, &account_id).await?.ok_or(Error::NotFound("account"))?;
    let token = generate_secret(INVITATION_TOKEN_PREFIX);
    let expires_at = now + TimeDelta::days(INVITATION_DAYS);
    let message = Mail {
        to: &email,
        subject: &format!("You are invited to join {} on Castellan", account.name),
        body: format!(
            "You are invited to join the team of {account} as {roles}.\n\n\
             Accept by choosing a username and a password:\n\n\
             POST {url}/api/v1/admin/account/invitations/accept\n\
             {{\"token\": \"{token}\", \"username\": \"...\", \"password\": \"...\"}}\n\n\
             The invitation can be accepted once, until {until}.\n",
            account = account.name,
            roles = roles.join(", "),
            url = context.public_url,
            until = iso(expires_at),
        ),
    };
    context.outbound.mailer.send(message).await.map_err(|error| match error {
        MailError::Address(_) => Error::invalid("email", Rule::Format, "email cannot receive mail"),
        other => {
            tracing::warn!(error = %other, "an invitation e-mail was not sent");
            Error::MailUnavailable(format!("the invitation e-mail could not be sent: {other}"))
        }
    })?;
    let invitation = Invitation {
        id: InvitationId::fresh(),
        account_id,
        email,
        roles,
        token_hash: context.hasher.hash(&token),
        invited_by,
        created_at: now,
        expires_at,
        accepted_at: None,
        accepted_user_id: None,
        revoked_at: None,
    };
    let mut tx = context.store.begin().await?;
    invitation_store::insert(&mut *tx, &invitation).await?;
    let change = Change::of(ChangeAction::Create, place(&invitation.id), 201)
        .after(InvitationView::of(invitation.clone(), context.clock.now()));
    changes::commit(context, by, tx, change).await?;
    Ok(invitation)
}

/// Revokes a pending invitation: its token no longer works.
pub async fn revoke(context: &Context, invitation: &Invitation, by: Author<'_>) -> Result<(), Error> {
    let now = context.clock.now();
    let mut tx = context.store.begin().await?;
    if !invitation_store::revoke(&mut *tx, &invitation.account_id, &invitation.id, now).await? {
        return Err(Error::Conflict(format!("the invitation is {}", invitation.status(now))));
    }
    let change = Change::of(ChangeAction::Delete, place(&invitation.id), 200)
        .before(InvitationView::of(invitation.clone(), context.clock.now()));
    changes::commit(context, by, tx, change).await
}

/// What a person answers an invitation with.
#[derive(Debug)]
pub struct Acceptance {
    pub token: String,
    pub username: String,
    pub password: String,
    /// Where the answer came from, for the trail.
    pub ip_address: String,
}

/// Accepts the pending invitation the token names: the person joins the platform realm with the
/// username and password they chose (held to its password rules) and the team with the
/// invitation's roles. The new member is the change's author.
pub async fn accept(context: &Context, acceptance: Acceptance) -> Result<Member, Error> {
    let Acceptance { token, username, password, ip_address } = acceptance;
    let now = context.clock.now();
    let no_invitation = || Error::invalid("token", Rule::NotFound, "no pending invitation has this token");
    let invitation = invitation_store::find_by_token(context.store.pool(), &context.hasher.hash(&token))
        .await?
        .filter(|i| i.status(now) == "Pending")
        .ok_or_else(no_invitation)?;
    let realm = super::realms::find(context, PLATFORM_REALM).await?.ok_or(Error::NotFound("realm"))?;
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
    super::people::check_unique(context, &user).await?;
    let hash = super::people::chosen_password(&context.passwords.breached, &realm, password).await?;
    let user = User { password_hash: Some(hash), ..user };

    let mut tx = context.store.begin().await?;
    if !user_store::insert(&mut *tx, &user).await? {
        return Err(Error::invalid("username", Rule::Duplicate, "another person has this username"));
    }
    if !invitation_store::accept(&mut *tx, &invitation.id, &user.id, now).await? {
        return Err(no_invitation());
    }
    accounts::insert_member(&mut *tx, &invitation.account_id, &user.id, &invitation.roles, now).await?;
    let member = Member {
        account_id: invitation.account_id.clone(),
        user_id: user.id.clone(),
        username: user.username.clone(),
        email: user.email.clone(),
        roles: invitation.roles.clone(),
        created_at: now,
    };
    let actor = trail::Actor {
        account_id: invitation.account_id.clone(),
        actor_type: trail::ActorType::User,
        user_id: Some(user.id.clone()),
        username: Some(user.username.clone()),
        email: user.email.clone(),
        credential_id: None,
        credential_name: None,
        ip_address,
    };
    let request = trail::Request { method: "POST".into(), path: "/account/invitations/accept".into() };
    let place = Place::outside_realms(ResourceKind::AccountMember, &user.id).under(&invitation.id);
    let change = Change::of(ChangeAction::Create, place, 201).after(MemberView::of(member.clone()));
    trail::record_change(&mut tx, &actor, &request, &change, now).await?;
    tx.commit().await?;
    Ok(member)
}

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
    pub(crate) fn of(invitation: Invitation, now: DateTime<Utc>) -> Self {
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
    pub(crate) email: Option<String>,
    /// The account roles the person gets on accepting; only roles the caller holds, unless the
    /// caller is an Owner.
    #[schema(value_type = Vec<String>, required = true)]
    pub(crate) roles: Option<Vec<String>>,
}

impl InvitationInput {
    /// The fields `body` gives: an address, and roles the caller may give.
    pub(crate) async fn read(context: &Context, caller: &Caller, body: &mut Body) -> Result<Self, Error> {
        let email = body.required("email", parsed(email));
        let roles = body.required("roles", grantable_roles(context, caller).await?);
        Ok(Self { email, roles })
    }
}

#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct AcceptanceInput {
    /// The token of the invitation e-mail.
    pub(crate) token: String,
    /// The username to sign in to the console with; no spaces.
    pub(crate) username: String,
    /// At least the platform realm's Minimum Length.
    pub(crate) password: String,
}

impl AcceptanceInput {
    pub(crate) fn read(body: &mut crate::kernel::validate::Body) -> Option<Self> {
        let token = body.required("token", crate::kernel::validate::text(1, 256));
        let username = body.required("username", crate::kernel::validate::username);
        let password =
            body.required("password", crate::kernel::validate::text(1, crate::kernel::passwords::MAX_PASSWORD_LENGTH));
        Some(Self { token: token?, username: username?, password: password? })
    }
}

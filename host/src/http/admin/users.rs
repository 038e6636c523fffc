//! `/realms/{realm}/users`: the people of a realm.

use super::reach::{Found, InRealm, UserCreate, UserDelete, UserImpersonate, UserRead, UserUpdate};
use axum::extract::{RawQuery, State};
use axum::response::Response;
use chrono::TimeDelta;
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use super::{ListQuery, commit};
use crate::directory::people;
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::kernel::clock::iso;
use crate::kernel::ids::UserId;
use crate::kernel::validate::{Body, Notification, Rule, boolean, email, one_of, parsed, text, username};
use crate::runtime::error::Error;
use crate::store::realms::Realm;
use crate::store::trail::{Change, ChangeAction, Placed};
use crate::store::users::{self as user_store, User, UserStatus};

/// A person as the admin API shows it. The password never leaves the service, hashed or not.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserView {
    pub id: String,
    pub realm_id: String,
    pub username: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    pub email_confirmed: bool,
    pub status: UserStatus,
    /// Whether a password is set.
    pub has_password: bool,
    /// The person must choose a new password before the next sign-in.
    pub must_change_password: bool,
    pub created_at: String,
    pub updated_at: String,
}

impl UserView {
    fn of(user: &User) -> Self {
        Self {
            id: user.id.to_string(),
            realm_id: user.realm_id.to_string(),
            username: user.username.clone(),
            email: user.email.clone(),
            first_name: user.first_name.clone(),
            last_name: user.last_name.clone(),
            email_confirmed: user.email_confirmed,
            status: user.status,
            has_password: user.password_hash.is_some(),
            must_change_password: user.must_change_password,
            created_at: iso(user.created_at),
            updated_at: iso(user.updated_at),
        }
    }
}

/// The body of a user creation. An update takes the same fields, each optional; omitted fields
/// keep their value.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct UserInput {
    /// 1–255 characters without spaces or control characters; unique in the realm. Required at creation.
    #[schema(value_type = String, required = true)]
    username: Option<String>,
    /// An e-mail address, unique in the realm; null clears it.
    #[schema(value_type = Option<String>)]
    email: Option<Option<String>>,
    /// Up to 255 characters.
    #[schema(value_type = Option<String>)]
    first_name: Option<Option<String>>,
    /// Up to 255 characters.
    #[schema(value_type = Option<String>)]
    last_name: Option<Option<String>>,
    email_confirmed: Option<bool>,
    /// Active (default) or Disabled.
    status: Option<UserStatus>,
    /// At least the realm's Minimum Length, at most 1024 characters; never returned.
    password: Option<String>,
    /// Ask for a new password at the next sign-in.
    must_change_password: Option<bool>,
}

impl UserInput {
    /// The fields `body` gives; a password is held to the realm's Minimum Length.
    fn read(body: &mut Body, realm: &Realm) -> Self {
        let name = |path: &str, value: &Value| text(0, 255)(path, value);
        let minimum = usize::try_from(realm.settings.minimum_password_length).unwrap_or(8);
        Self {
            username: body.optional("username", username),
            email: body.nullable("email", parsed(email)),
            first_name: body.nullable("firstName", name).map(|first| first.filter(|n| !n.is_empty())),
            last_name: body.nullable("lastName", name).map(|last| last.filter(|n| !n.is_empty())),
            email_confirmed: body.optional("emailConfirmed", boolean),
            status: body.optional("status", one_of(UserStatus::NAMES)),
            must_change_password: body.optional("mustChangePassword", boolean),
            password: body.optional("password", |path, value| {
                let password = text(0, crate::kernel::passwords::MAX_PASSWORD_LENGTH)(path, value)?;
                if password.chars().count() < minimum {
                    return Err(vec![Notification::new(
                        path,
                        Rule::MinLength,
                        format!("{path} must have at least {minimum} characters (the realm's Minimum Length)"),
                    )]);
                }
                Ok(password)
            }),
        }
    }

    /// Changes the fields given on `user`; returns the new password when one was given.
    fn apply(self, user: &mut User) -> Option<String> {
        let Self { username, email, first_name, last_name, email_confirmed, status, password, must_change_password } =
            self;
        user.username = username.unwrap_or(std::mem::take(&mut user.username));
        user.email = email.unwrap_or(user.email.take());
        user.first_name = first_name.unwrap_or(user.first_name.take());
        user.last_name = last_name.unwrap_or(user.last_name.take());
        user.email_confirmed = email_confirmed.unwrap_or(user.email_confirmed);
        user.status = status.unwrap_or(user.status);
        user.must_change_password = must_change_password.unwrap_or(user.must_change_password);
        password
    }
}

#[utoipa::path(post, path = "/realms/{realm}/users", tag = "Realm users", params(("realm" = String, Path)),
    request_body = UserInput,
    responses((status = 201, description = "The created user, in `data`", body = UserView),
              (status = 400, description = "ValidationFailed, also for a username or e-mail taken in the realm"),
              (status = 403)),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    InRealm { realm, caller, .. }: InRealm<UserCreate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<UserView>, Error> {
    let now = state.clock.now();
    let mut user = User {
        id: UserId::fresh(),
        realm_id: realm.id.clone(),
        username: String::new(),
        email: None,
        first_name: None,
        last_name: None,
        email_confirmed: false,
        status: UserStatus::Active,
        password_hash: None,
        must_change_password: false,
        created_at: now,
        updated_at: now,
    };
    if !body.has("username") {
        body.refuse("username", Rule::Required, "username is required");
    }
    let password = UserInput::read(&mut body, &realm).apply(&mut user);
    body.finish()?;
    let user = people::create(&state, &state.passwords.breached, &realm, user, password, caller.author(), UserView::of)
        .await?;
    Ok(Answer::Created(UserView::of(&user)))
}

#[utoipa::path(get, path = "/realms/{realm}/users", tag = "Realm users",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query, description = "Matched against username, e-mail and names"),
           ("status" = Option<String>, Query, description = "Active or Disabled"),
           ("sortBy" = Option<String>, Query, description = "username, email, createdAt, updatedAt"), ("sortDirection" = Option<String>, Query),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query),
           ("emailConfirmed" = Option<bool>, Query)),
    responses((status = 200, description = "A page of the realm's users, in `pagination`", body = [UserView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    InRealm { realm, .. }: InRealm<UserRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<UserView>, Error> {
    let list = ListQuery::parse(query, &["emailConfirmed"])?;
    list.status_in(crate::store::users::UserStatus::NAMES)?;
    let email_confirmed = match list.filter("emailConfirmed") {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(_) => return Err(Error::invalid("emailConfirmed", Rule::Type, "emailConfirmed must be true or false")),
    };
    let found = user_store::page(&state.store, &realm.id, email_confirmed, &list.page).await?;
    Ok(Answer::Paged(found.map(|user| UserView::of(&user))))
}

#[utoipa::path(get, path = "/realms/{realm}/users/{userId}", tag = "Realm users",
    params(("realm" = String, Path), ("userId" = String, Path)),
    responses((status = 200, description = "The user, in `data`", body = UserView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(Found { item: user, .. }: Found<User, UserRead>) -> Result<Answer<UserView>, Error> {
    Ok(Answer::Ok(UserView::of(&user)))
}

#[utoipa::path(put, path = "/realms/{realm}/users/{userId}", tag = "Realm users",
    params(("realm" = String, Path), ("userId" = String, Path)), request_body = UserInput,
    responses((status = 200, description = "The updated user, in `data`", body = UserView), (status = 400), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    Found { realm, item: before, caller, .. }: Found<User, UserUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<UserView>, Error> {
    let mut user = before.clone();
    body.unchanged("id", &user.id);
    let change_required = body.has("mustChangePassword");
    let password = UserInput::read(&mut body, &realm).apply(&mut user);
    body.finish()?;
    let changed = people::Changed { user, password, change_required };
    let user =
        people::update(&state, &state.passwords.breached, &realm, &before, changed, caller.author(), UserView::of)
            .await?;
    Ok(Answer::Ok(UserView::of(&user)))
}

#[utoipa::path(delete, path = "/realms/{realm}/users/{userId}", tag = "Realm users",
    params(("realm" = String, Path), ("userId" = String, Path)),
    responses((status = 200, description = "Deleted; the user's sessions end with it"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    Found { realm, item: user, caller, .. }: Found<User, UserDelete>,
) -> Result<Answer<()>, Error> {
    people::delete(&state, &realm, &user, caller.author(), UserView::of).await?;
    Ok(Answer::Done)
}

/// The longest life of an impersonation token, in seconds (shorter when access tokens are).
pub const IMPERSONATION_SECONDS: i64 = 300;

#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct ImpersonationInput {
    /// The client of the realm the token is for: the application opened as the user.
    client_id: String,
}

impl ImpersonationInput {
    fn read(body: &mut Body) -> Option<Self> {
        Some(Self { client_id: body.required("clientId", text(1, 255))? })
    }
}

/// What an impersonation hands the person of the team.
#[derive(Debug, Serialize, ToSchema)]
pub struct ImpersonationView {
    /// An access token for the user, naming the impersonator in `act`; no refresh token.
    pub access_token: String,
    pub token_type: &'static str,
    /// Seconds, at most 300.
    pub expires_in: i64,
}

#[utoipa::path(post, path = "/realms/{realm}/users/{userId}/impersonate", tag = "Realm users",
    params(("realm" = String, Path), ("userId" = String, Path)), request_body = ImpersonationInput,
    responses((status = 200, description = "A short-lived access token for the user, in `data`", body = ImpersonationView),
              (status = 400, description = "`clientId` names no client of the realm"),
              (status = 403, description = "`ImpersonationActorNotAPerson` for an API key, a personal access token or a token from an account client secret, whatever its roles; `Forbidden` without `user:impersonate`"),
              (status = 404), (status = 409, description = "The user or the client is not Active, or the user is under a Full suspension at the client")),
    security(("apiKey" = [])))]
pub async fn impersonate(
    State(state): State<AppState>,
    Found { realm, item: user, caller, .. }: Found<User, UserImpersonate>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    if realm.id == crate::kernel::ids::PLATFORM_REALM {
        // The team's own people are never impersonated.
        return Err(Error::Forbidden(crate::kernel::error_code::ErrorCode::Forbidden));
    }
    let input = ImpersonationInput::read(&mut body);
    body.finish()?;
    let Some(ImpersonationInput { client_id }) = input else {
        return Err(Error::invalid("clientId", Rule::Required, "clientId is required"));
    };
    let client = crate::oauth::tokens::find_client(&state, &realm.id, &client_id)
        .await?
        .ok_or_else(|| Error::invalid("clientId", Rule::NotFound, "no client of the realm has this id"))?;
    if user.status != UserStatus::Active {
        return Err(Error::Conflict("the user is not Active".into()));
    }
    if client.status != crate::store::Status::Active {
        return Err(Error::Conflict("the client is not Active".into()));
    }
    let now = state.clock.now();
    if crate::oauth::suspensions::refuses(&state, &realm.id, &client.id, &user.id, now).await? {
        return Err(Error::Conflict("the user is under a Full suspension at the client".into()));
    }
    let act = json!({
        "sub": caller.principal.id,
        "iss": crate::oauth::tokens::issuer(&state, crate::kernel::ids::PLATFORM_REALM),
    });
    let expires_at = now + TimeDelta::seconds(IMPERSONATION_SECONDS);
    let subject = crate::oauth::tokens::Subject::Impersonated { user: &user, act: &act, expires_at };
    let grant = crate::oauth::tokens::Grant { client: &client, subject, scopes: &[], resource: None, dpop_jkt: None };
    let issued = crate::oauth::tokens::access_token(&state, &grant).await?;

    // In the trail, never announced.
    let tx = state.store.begin().await?;
    let change = Change::of(ChangeAction::Impersonate, user.place().of_client(&client.id), 200).details(json!({
        "client_id": client.id,
        "token_id": issued.jti,
        "expires_at": iso(issued.expires_at),
    }));
    commit(&state, &caller, tx, change).await?;
    Ok(envelope::ok(ImpersonationView {
        access_token: issued.token,
        token_type: "Bearer",
        expires_in: issued.lifetime_seconds,
    }))
}

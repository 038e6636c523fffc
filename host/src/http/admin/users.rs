//! `/realms/{realm}/users`: the people of a realm.

use super::reach::{Found, InRealm, UserCreate, UserDelete, UserImpersonate, UserRead, UserUpdate};
use crate::oauth::tokens::impersonation::ImpersonationView;
use axum::extract::{RawQuery, State};
use axum::response::Response;

use super::ListQuery;
use crate::directory::people;
use crate::directory::people::{UserInput, UserView};
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::kernel::ids::UserId;
use crate::kernel::validate::Rule;
use crate::oauth::tokens::impersonation::{self, ImpersonationInput};
use crate::runtime::error::Error;
use crate::store::users::{self as user_store, User, UserStatus};

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
    let user = people::create(&state, &state.passwords.breached, &realm, user, password, caller.author()).await?;
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
    let user = people::update(&state, &state.passwords.breached, &realm, &before, changed, caller.author()).await?;
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
    people::delete(&state, &realm, &user, caller.author()).await?;
    Ok(Answer::Done)
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
    let acting = caller.principal.id.as_str();
    Ok(envelope::ok(impersonation::impersonate(&state, &realm, &user, &client_id, acting, caller.author()).await?))
}

//! The admin operations on a realm's people: created, listed, changed, deleted, impersonated.

use crate::directory::listing::ListQuery;
use crate::directory::people;
use crate::directory::people::{UserInput, UserView};
use crate::directory::reach::Admin;
use crate::directory::reach::{Found, InRealm, UserCreate, UserDelete, UserRead, UserUpdate};
use crate::kernel::ids::UserId;
use crate::kernel::validate::Body;
use crate::kernel::validate::Rule;
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::users::{self as user_store, User, UserStatus};

/// `POST /realms/{realm}/users`: the created user.
pub async fn create(
    admin: &Admin<'_>,
    InRealm { realm, caller, .. }: InRealm<UserCreate>,
    mut body: Body,
) -> Result<Answer<UserView>, Error> {
    let now = admin.clock.now();
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
    let user = people::create(admin, &admin.passwords.breached, &realm, user, password, caller.author()).await?;
    Ok(Answer::Created(UserView::of(&user)))
}

/// `GET /realms/{realm}/users`: a page of the realm's users.
pub async fn list(
    admin: &Admin<'_>,
    InRealm { realm, .. }: InRealm<UserRead>,
    query: Option<String>,
) -> Result<Answer<UserView>, Error> {
    let list = ListQuery::parse(query, &["emailConfirmed"])?;
    list.status_in(crate::store::users::UserStatus::NAMES)?;
    let email_confirmed = match list.filter("emailConfirmed") {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(_) => return Err(Error::invalid("emailConfirmed", Rule::Type, "emailConfirmed must be true or false")),
    };
    let found = user_store::page(&admin.store, &realm.id, email_confirmed, &list.page).await?;
    Ok(Answer::Paged(found.map(|user| UserView::of(&user))))
}

/// `GET /realms/{realm}/users/{userId}`: the user.
pub fn read(Found { item: user, .. }: Found<User, UserRead>) -> Result<Answer<UserView>, Error> {
    Ok(Answer::Ok(UserView::of(&user)))
}

/// `PUT /realms/{realm}/users/{userId}`: the updated user.
pub async fn update(
    admin: &Admin<'_>,
    Found { realm, item: before, caller, .. }: Found<User, UserUpdate>,
    mut body: Body,
) -> Result<Answer<UserView>, Error> {
    let mut user = before.clone();
    body.unchanged("id", &user.id);
    let change_required = body.has("mustChangePassword");
    let password = UserInput::read(&mut body, &realm).apply(&mut user);
    body.finish()?;
    let changed = people::Changed { user, password, change_required };
    let user = people::update(admin, &admin.passwords.breached, &realm, &before, changed, caller.author()).await?;
    Ok(Answer::Ok(UserView::of(&user)))
}

/// `DELETE /realms/{realm}/users/{userId}`: deleted; the user's sessions end with it.
pub async fn delete(
    admin: &Admin<'_>,
    Found { realm, item: user, caller, .. }: Found<User, UserDelete>,
) -> Result<Answer<()>, Error> {
    people::delete(admin, &realm, &user, caller.author()).await?;
    Ok(Answer::Done)
}

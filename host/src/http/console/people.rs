//! A realm's people in the console: finding them, creating one, editing one (name, e-mail, status,
//! password), ending their sessions, and suspending them at a client.

use crate::directory::sessions::SessionView;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use maud::html;
use serde_json::{Map, Value, json};

use super::page::{self, Section, Shell, csrf};
use super::{Console, Page, data, encode, form, listed, one, page_number, pairs, value, when};
use crate::authz::{Resource, permission};
use crate::directory::admin::people as users;
use crate::directory::admin::sessions;
use crate::directory::reach::{ClientUser, Found, InRealm};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::kernel::validate::Body;
use crate::oauth::admin::suspensions;

fn realm_resource(console: &Console, realm: &str) -> Resource {
    Resource::Realm { id: realm.to_owned(), owner: Some(console.caller.account_id().clone()) }
}

/// `/console/realms/{realm}/users?searchTerm=…`.
pub async fn list(
    State(state): State<AppState>,
    console: Console,
    Path(realm): Path<String>,
    RawQuery(query): RawQuery,
) -> Page {
    let pairs = pairs(query);
    let search = value(&pairs, "searchTerm");
    let number = page_number(&pairs);
    let mut query = format!("pageSize=50&pageNumber={number}");
    if let Some(search) = search {
        query.push_str(&format!("&searchTerm={}", encode(search)));
    }
    let caller = console.acting("GET /realms/{realm}/users");
    let reached = InRealm::reach(&state.admin(), &caller, &realm).await.map_err(|error| page::refused(&error))?;
    let listed = listed(users::list(&state.admin(), reached, Some(query)).await)?;
    let may_create =
        console.may(&state, "POST /realms/{realm}/users", permission::USER_CREATE, realm_resource(&console, &realm));
    let here = format!("/console/realms/{}/users", encode(&realm));
    let kept = search.map(|s| format!("&searchTerm={}", encode(s))).unwrap_or_default();
    let content = html! {
        form.filters method="get" action=(here) {
            div { label for="searchTerm" { "Name or e-mail" } input #searchTerm name="searchTerm" type="search" value=(search.unwrap_or_default()); }
            button type="submit" { "Find" }
        }
        div.panel { table {
            caption { @if listed.total_at_least { "More than " } (listed.total_items) " people" }
            thead { tr { th scope="col" { "Username" } th scope="col" { "E-mail" } th scope="col" { "Status" } th scope="col" { "Created" } } }
            tbody { @for person in &listed.items {
                tr { td { a href={ (here) "/" (encode(&person.id)) } { (person.username) } }
                     td { (person.email.as_deref().unwrap_or("—")) } td { (person.status.as_str()) } td { (when(&person.created_at)) } }
            } }
        } }
        (page::pages(&listed, &kept))
        @if may_create {
            section aria-labelledby="create" {
                h2 #create { "Create a person" }
                form method="post" action=(here) {
                    (csrf(&console))
                    div { label for="username" { "Username" } input #username name="username" required autocomplete="off"; }
                    div { label for="email" { "E-mail" } input #email name="email" type="email"; }
                    div { label for="password" { "Password (empty: none yet)" } input #password name="password" type="password" autocomplete="new-password"; }
                    button type="submit" { "Create" }
                }
            }
        }
    };
    let title = format!("People of realm {realm}");
    Ok(Shell { console: &console, section: Section::Realms, title: &title }.answer(StatusCode::OK, content))
}

/// The fields of the create and edit forms the operations take.
fn person_body(form: &[(String, String)], edit: bool) -> Body {
    let mut body = Map::new();
    for field in ["username", "email", "firstName", "lastName", "password", "status"] {
        if let Some(text) = value(form, field) {
            body.insert(field.into(), json!(text));
        }
    }
    if edit {
        body.insert("mustChangePassword".into(), json!(value(form, "mustChangePassword").is_some()));
    }
    Body::from_map(body)
}

/// Creates a person and shows them.
pub async fn create(State(state): State<AppState>, console: Console, Path(realm): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    let path = format!("/realms/{}/users", encode(&realm));
    let created = console.acted(&state, &form, ("POST /realms/{realm}/users", &path), async |caller| {
        let reached = InRealm::reach(&state.admin(), &caller, &realm).await?;
        users::create(&state.admin(), reached, person_body(&form, false)).await
    });
    let person = one(created.await?)?;
    Ok(page::see_other(&format!("/console/realms/{}/users/{}", encode(&realm), encode(&person.id))))
}

/// `/console/realms/{realm}/users/{userId}`.
pub async fn person(
    State(state): State<AppState>,
    console: Console,
    Path((realm, id)): Path<(String, String)>,
) -> Page {
    let at = format!("/realms/{}/users/{}", encode(&realm), encode(&id));
    let caller = console.acting("GET /realms/{realm}/users/{userId}");
    let found = Found::reach(&state.admin(), &caller, &realm, &id).await.map_err(|error| page::refused(&error))?;
    let person = data(users::read(found))?;
    let sessions = live_sessions(&state, &console.acting("GET /realms/{realm}/sessions"), &realm, &id, 100).await?;
    let live: Vec<&SessionView> = sessions.iter().collect();
    let resource = realm_resource(&console, &realm);
    let may_edit = console.may(&state, "PUT /realms/{realm}/users/{userId}", permission::USER_UPDATE, resource.clone());
    let may_end =
        console.may(&state, "DELETE /realms/{realm}/sessions/{sessionId}", permission::SESSION_DELETE, resource);
    let here = format!("/console{at}");
    let content = html! {
        p { "Created " (when(&person.created_at)) "; "
            @if person.has_password { "has a password" } @else { "has no password yet" }
            @if person.must_change_password { ", which must be changed at the next sign-in" } "." }
        p { a href={ (here) "/threat-standing" } { "Standing in attack protection" } }
        @if may_edit {
            section aria-labelledby="edit" {
                h2 #edit { "Edit" }
                form method="post" action=(here) {
                    (csrf(&console))
                    div { label for="username" { "Username" } input #username name="username" required value=(person.username); }
                    div { label for="email" { "E-mail" } input #email name="email" type="email" value=[person.email.as_deref()]; }
                    div { label for="firstName" { "First name" } input #firstName name="firstName" value=[person.first_name.as_deref()]; }
                    div { label for="lastName" { "Last name" } input #lastName name="lastName" value=[person.last_name.as_deref()]; }
                    div { label for="status" { "Status" } select #status name="status" {
                        @for status in ["Active", "Disabled"] { option value=(status) selected[person.status.as_str() == status] { (status) } } } }
                    div { label for="password" { "New password (empty: unchanged)" } input #password name="password" type="password" autocomplete="new-password"; }
                    div { input #mustChangePassword type="checkbox" name="mustChangePassword" value="true" checked[person.must_change_password];
                          " " label.inline for="mustChangePassword" { "Must change the password at the next sign-in" } }
                    button type="submit" { "Save" }
                }
            }
            section aria-labelledby="suspend" {
                h2 #suspend { "Suspend at a client" }
                form method="post" action={ (here) "/suspend" } {
                    (csrf(&console))
                    div { label for="client" { "Client" } input #client name="client" required; }
                    div { label for="level" { "Level" } select #level name="level" {
                        option value="Full" { "Full: no sign-in, no token" } option value="Restricted" { "Restricted" } } }
                    div { label for="reason" { "Reason" } input #reason name="reason" maxlength="1024"; }
                    button.danger type="submit" { "Suspend" }
                }
            }
        }
        section aria-labelledby="sessions" {
            h2 #sessions { "Sessions" }
            @if live.is_empty() { p { "No live session." } } @else {
                table {
                    caption { (live.len()) " live sessions" }
                    thead { tr { th scope="col" { "Client" } th scope="col" { "From" } th scope="col" { "Since" } th scope="col" { "Last active" } } }
                    tbody { @for session in &live {
                        tr { td { (session.client_id) } td { (session.ip_address) } td { (when(&session.created_at)) } td { (when(&session.last_active_at)) } }
                    } }
                }
                @if may_end {
                    form method="post" action={ (here) "/end-sessions" } {
                        (csrf(&console)) button.danger type="submit" { "End every session" }
                    }
                }
            }
        }
    };
    let title = format!("{} in realm {realm}", person.username);
    Ok(Shell { console: &console, section: Section::Realms, title: &title }.answer(StatusCode::OK, content))
}

/// The live sessions of the person `id`, at most `count`.
async fn live_sessions(state: &AppState, caller: &Caller, realm: &str, id: &str, count: u32) -> Page<Vec<SessionView>> {
    let reached = InRealm::reach(&state.admin(), caller, realm).await.map_err(|error| page::refused(&error))?;
    let query = format!("userId={}&pageSize={count}", encode(id));
    let sessions = listed(sessions::list(&state.admin(), reached, Some(query)).await)?;
    Ok(sessions.items.into_iter().filter(|session| session.status == "Active").collect())
}

/// Saves the edit form.
pub async fn update(
    State(state): State<AppState>,
    console: Console,
    Path((realm, id)): Path<(String, String)>,
    body: Bytes,
) -> Page {
    let form = form(&body);
    let path = format!("/realms/{}/users/{}", encode(&realm), encode(&id));
    let then = format!("/console{path}");
    console
        .act(&state, &form, ("PUT /realms/{realm}/users/{userId}", &path), &then, async |caller| {
            let found = Found::reach(&state.admin(), &caller, &realm, &id).await?;
            users::update(&state.admin(), found, person_body(&form, true)).await
        })
        .await
}

/// Ends every live session of the person.
pub async fn end_sessions(
    State(state): State<AppState>,
    console: Console,
    Path((realm, id)): Path<(String, String)>,
    body: Bytes,
) -> Page {
    let form = form(&body);
    if !console.genuine(&form) {
        return Err(super::session::forged());
    }
    let sessions = live_sessions(&state, &console.acting("GET /realms/{realm}/sessions"), &realm, &id, 200).await?;
    for session in sessions {
        let path = format!("/realms/{}/sessions/{}", encode(&realm), encode(&session.id));
        let operation = ("DELETE /realms/{realm}/sessions/{sessionId}", path.as_str());
        console
            .acted(&state, &form, operation, async |caller| {
                sessions::revoke(&state.admin(), Found::reach(&state.admin(), &caller, &realm, &session.id).await?)
                    .await
            })
            .await?;
    }
    Ok(page::see_other(&format!("/console/realms/{}/users/{}", encode(&realm), encode(&id))))
}

/// Suspends the person at the form's client, ending their sessions there.
pub async fn suspend(
    State(state): State<AppState>,
    console: Console,
    Path((realm, id)): Path<(String, String)>,
    body: Bytes,
) -> Page {
    let form = form(&body);
    let client = value(&form, "client").unwrap_or_default();
    let mut suspension = json!({ "level": value(&form, "level").unwrap_or("Full"), "terminateSessions": true });
    if let Some(reason) = value(&form, "reason") {
        suspension["reason"] = json!(reason);
    }
    let Value::Object(suspension) = suspension else { return Err(page::failure(&super::unanswered())) };
    let path = format!("/realms/{}/clients/{}/users/{}/suspensions", encode(&realm), encode(client), encode(&id));
    let back = format!("/console/realms/{}/users/{}", encode(&realm), encode(&id));
    let operation = ("POST /realms/{realm}/clients/{client}/users/{userId}/suspensions", path.as_str());
    console
        .act(&state, &form, operation, &back, async |caller| {
            let reached = ClientUser::reach(&state.admin(), &caller, &realm, client, &id).await?;
            suspensions::create(&state.admin(), reached, Body::from_map(suspension)).await
        })
        .await
}

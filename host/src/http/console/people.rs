//! A realm's people in the console: finding them, creating one, editing one (name, e-mail, status,
//! password), ending their sessions, and suspending them at a client.

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{Method, StatusCode};
use maud::html;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::page::{self, Section, Shell, csrf};
use super::{Console, Listed, Page, encode, form, page_number, pairs, value, when};
use crate::authz::{Resource, permission};
use crate::http::AppState;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Person {
    id: String,
    username: String,
    email: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
    status: String,
    has_password: bool,
    must_change_password: bool,
    created_at: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Session {
    id: String,
    client_id: String,
    ip_address: String,
    created_at: String,
    last_active_at: String,
    /// Active, Expired or Ended.
    status: String,
}

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
    let mut path = format!("/realms/{}/users?pageSize=50&pageNumber={number}", encode(&realm));
    if let Some(search) = search {
        path.push_str(&format!("&searchTerm={}", encode(search)));
    }
    let listed: Listed<Person> = console.read(&path).await?.page().map_err(|error| page::failure(&error))?;
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
            caption { (listed.total_items) " people" }
            thead { tr { th scope="col" { "Username" } th scope="col" { "E-mail" } th scope="col" { "Status" } th scope="col" { "Created" } } }
            tbody { @for person in &listed.items {
                tr { td { a href={ (here) "/" (encode(&person.id)) } { (person.username) } }
                     td { (person.email.as_deref().unwrap_or("—")) } td { (person.status) } td { (when(&person.created_at)) } }
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

/// The fields of the create and edit forms the admin API takes.
fn person_body(form: &[(String, String)], edit: bool) -> Value {
    let mut body = Map::new();
    for field in ["username", "email", "firstName", "lastName", "password", "status"] {
        if let Some(text) = value(form, field) {
            body.insert(field.into(), json!(text));
        }
    }
    if edit {
        body.insert("mustChangePassword".into(), json!(value(form, "mustChangePassword").is_some()));
    }
    Value::Object(body)
}

/// Creates a person and shows them.
pub async fn create(console: Console, Path(realm): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    if !console.genuine(&form) {
        return Err(super::session::forged());
    }
    let path = format!("/realms/{}/users", encode(&realm));
    let answer = console.call(Method::POST, &path, Some(&person_body(&form, false))).await;
    let answer = answer.map_err(|error| page::failure(&error))?;
    if !answer.status.is_success() {
        return Err(page::refused(&answer));
    }
    let person: Person = answer.data().map_err(|error| page::failure(&error))?;
    Ok(page::see_other(&format!("/console/realms/{}/users/{}", encode(&realm), encode(&person.id))))
}

/// `/console/realms/{realm}/users/{userId}`.
pub async fn person(
    State(state): State<AppState>,
    console: Console,
    Path((realm, id)): Path<(String, String)>,
) -> Page {
    let at = format!("/realms/{}/users/{}", encode(&realm), encode(&id));
    let person: Person = console.read(&at).await?.data().map_err(|error| page::failure(&error))?;
    let sessions_path = format!("/realms/{}/sessions?userId={}&pageSize=100", encode(&realm), encode(&id));
    let sessions: Listed<Session> =
        console.read(&sessions_path).await?.page().map_err(|error| page::failure(&error))?;
    let live: Vec<&Session> = sessions.items.iter().filter(|s| s.status == "Active").collect();
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
                        @for status in ["Active", "Disabled"] { option value=(status) selected[person.status == status] { (status) } } } }
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

/// Saves the edit form.
pub async fn update(console: Console, Path((realm, id)): Path<(String, String)>, body: Bytes) -> Page {
    let form = form(&body);
    let path = format!("/realms/{}/users/{}", encode(&realm), encode(&id));
    console.send(&form, Method::PUT, &path, Some(&person_body(&form, true)), &format!("/console{path}")).await
}

/// Ends every live session of the person.
pub async fn end_sessions(console: Console, Path((realm, id)): Path<(String, String)>, body: Bytes) -> Page {
    let form = form(&body);
    if !console.genuine(&form) {
        return Err(super::session::forged());
    }
    let sessions_path = format!("/realms/{}/sessions?userId={}&pageSize=200", encode(&realm), encode(&id));
    let sessions: Listed<Session> =
        console.read(&sessions_path).await?.page().map_err(|error| page::failure(&error))?;
    for session in sessions.items.iter().filter(|s| s.status == "Active") {
        let path = format!("/realms/{}/sessions/{}", encode(&realm), encode(&session.id));
        let answer = console.call(Method::DELETE, &path, None).await.map_err(|error| page::failure(&error))?;
        if !answer.status.is_success() {
            return Err(page::refused(&answer));
        }
    }
    Ok(page::see_other(&format!("/console/realms/{}/users/{}", encode(&realm), encode(&id))))
}

/// Suspends the person at the form's client, ending their sessions there.
pub async fn suspend(console: Console, Path((realm, id)): Path<(String, String)>, body: Bytes) -> Page {
    let form = form(&body);
    let client = value(&form, "client").unwrap_or_default();
    let mut suspension = json!({ "level": value(&form, "level").unwrap_or("Full"), "terminateSessions": true });
    if let Some(reason) = value(&form, "reason") {
        suspension["reason"] = json!(reason);
    }
    let path = format!("/realms/{}/clients/{}/users/{}/suspensions", encode(&realm), encode(client), encode(&id));
    let back = format!("/console/realms/{}/users/{}", encode(&realm), encode(&id));
    console.act(&form, &path, Some(&suspension), &back).await
}

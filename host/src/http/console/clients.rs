//! A client in the console: what it is, and rotating its secret in the three ways the admin API
//! offers, the new secret shown once.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use maud::html;
use serde::Deserialize;

use super::account::{rotation_body, rotation_form};
use super::page::{self, Section, Shell};
use super::{Console, Page, encode, form, when};
use crate::authz::{Resource, permission};
use crate::http::AppState;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Client {
    id: String,
    name: String,
    description: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    status: String,
    client_secret_last_four: Option<String>,
    client_secret_rotated_at: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Rotated {
    client_secret: String,
}

/// `/console/realms/{realm}/clients/{client}`.
pub async fn client(
    State(state): State<AppState>,
    console: Console,
    Path((realm, id)): Path<(String, String)>,
) -> Page {
    let at = format!("/realms/{}/clients/{}", encode(&realm), encode(&id));
    let client: Client = console.read(&at).await?.data().map_err(|error| page::failure(&error))?;
    let owner = Some(console.caller.account_id().clone());
    let resource = Resource::Client { realm_id: realm.clone(), id: client.id.clone(), owner };
    let may_rotate = console.may(
        &state,
        "POST /realms/{realm}/clients/{client}/client-secret/rotate",
        permission::CLIENT_UPDATE,
        resource,
    );
    let here = format!("/console{at}");
    let content = html! {
        p { (client.kind) " client, " (client.status) "." @if let Some(text) = &client.description { " " (text) } }
        ul {
            li { a href={ (here) "/webhooks" } { "Webhooks of " (client.id) } }
        }
        @if let Some(last_four) = &client.client_secret_last_four {
            section aria-labelledby="secret" {
                h2 #secret { "Client secret" }
                p { "Ends in " code { (last_four) }
                    @if let Some(at) = &client.client_secret_rotated_at { "; rotated " (when(at)) } "." }
                @if may_rotate { (rotation_form(&console, &format!("{here}/rotate-secret"), &client.id)) }
            }
        }
    };
    let title = format!("Client {} of realm {realm}", client.name);
    Ok(Shell { console: &console, section: Section::Realms, title: &title }.answer(StatusCode::OK, content))
}

/// Rotates the client's secret as the form asks and shows the new one once.
pub async fn rotate(console: Console, Path((realm, id)): Path<(String, String)>, body: Bytes) -> Page {
    let form = form(&body);
    if !console.genuine(&form) {
        return Err(super::session::forged());
    }
    let at = format!("/realms/{}/clients/{}", encode(&realm), encode(&id));
    let answer = console.call(Method::POST, &format!("{at}/client-secret/rotate"), Some(&rotation_body(&form))).await;
    let answer = answer.map_err(|error| page::failure(&error))?;
    if !answer.status.is_success() {
        return Err(page::refused(&answer));
    }
    let rotated: Rotated = answer.data().map_err(|error| page::failure(&error))?;
    let content = html! {
        div.panel role="status" {
            p { "The new secret of " strong { (id) } ", shown this once — store it now:" }
            p { code #secret-value { (rotated.client_secret) } }
            p { a href={ "/console" (at) } { "Back to the client" } }
        }
    };
    let shell = Shell { console: &console, section: Section::Realms, title: "Client secret rotated" };
    Ok(shell.answer(StatusCode::OK, content))
}

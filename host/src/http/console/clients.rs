//! A client in the console: what it is, and rotating its secret in the three ways the admin API
//! offers, the new secret shown once.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use maud::html;

use super::account::{rotation_body, rotation_form};
use super::page::{self, Section, Shell};
use super::{Console, Page, data, encode, form, one, when};
use crate::authz::{Resource, permission};
use crate::directory::admin::clients;
use crate::directory::reach::InClient;
use crate::http::AppState;

/// `/console/realms/{realm}/clients/{client}`.
pub async fn client(
    State(state): State<AppState>,
    console: Console,
    Path((realm, id)): Path<(String, String)>,
) -> Page {
    let at = format!("/realms/{}/clients/{}", encode(&realm), encode(&id));
    let caller = console.acting("GET /realms/{realm}/clients/{client}");
    let reached = InClient::reach(&state.admin(), &caller, &realm, &id).await.map_err(|error| page::refused(&error))?;
    let client = data(clients::read(&state.admin(), reached).await)?;
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
        p { (client.client_type.as_str()) " client, " (client.status.as_str()) "." @if let Some(text) = &client.description { " " (text) } }
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
pub async fn rotate(
    State(state): State<AppState>,
    console: Console,
    Path((realm, id)): Path<(String, String)>,
    body: Bytes,
) -> Page {
    let form = form(&body);
    let at = format!("/realms/{}/clients/{}", encode(&realm), encode(&id));
    let path = format!("{at}/client-secret/rotate");
    let operation = ("POST /realms/{realm}/clients/{client}/client-secret/rotate", path.as_str());
    let rotated = console.acted(&state, &form, operation, async |caller| {
        let reached = InClient::reach(&state.admin(), &caller, &realm, &id).await?;
        clients::rotate_secret(&state.admin(), reached, rotation_body(&form)).await
    });
    let rotated = one(rotated.await?)?;
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

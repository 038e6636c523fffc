//! The realms of the account, and a realm's page: where its webhooks, its clients' webhooks and
//! its delegation grants are.

use axum::extract::Path;
use axum::http::StatusCode;
use maud::html;
use serde::Deserialize;

use super::page::{self, Section, Shell};
use super::{Console, Listed, Page, encode};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Realm {
    id: String,
    display_name: String,
    status: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Client {
    id: String,
    name: String,
    status: String,
}

/// `/console/realms`.
pub async fn list(console: Console) -> Page {
    let realms: Listed<Realm> =
        console.read("/realms?pageSize=200").await?.page().map_err(|error| page::failure(&error))?;
    let content = html! {
        div.panel { table {
            caption { (realms.total_items) " realms" }
            thead { tr { th scope="col" { "Realm" } th scope="col" { "Name" } th scope="col" { "Status" } } }
            tbody { @for realm in &realms.items {
                tr { td { a href={ "/console/realms/" (encode(&realm.id)) } { (realm.id) } } td { (realm.display_name) } td { (realm.status) } }
            } }
        } }
    };
    Ok(Shell { console: &console, section: Section::Realms, title: "Realms" }.answer(StatusCode::OK, content))
}

/// `/console/realms/{realm}`.
pub async fn realm(console: Console, Path(id): Path<String>) -> Page {
    let realm: Realm =
        console.read(&format!("/realms/{}", encode(&id))).await?.data().map_err(|error| page::failure(&error))?;
    let at = format!("/console/realms/{}", encode(&realm.id));
    let clients: Listed<Client> = console
        .read(&format!("/realms/{}/clients?pageSize=200", encode(&realm.id)))
        .await?
        .page()
        .map_err(|error| page::failure(&error))?;
    let content = html! {
        ul {
            li { a href={ (at) "/webhooks" } { "Webhooks of the realm" } " (administrative changes and attacks)" }
            li { a href={ (at) "/delegation-grants" } { "Delegation grants" } }
        }
        div.panel { table {
            caption { (clients.total_items) " clients" }
            thead { tr { th scope="col" { "Client" } th scope="col" { "Name" } th scope="col" { "Status" } th scope="col" { "Webhooks" } } }
            tbody { @for client in &clients.items {
                tr {
                    td { (client.id) } td { (client.name) } td { (client.status) }
                    td { a href={ (at) "/clients/" (encode(&client.id)) "/webhooks" } { "Webhooks of " (client.id) } }
                }
            } }
        } }
    };
    let title = format!("Realm {}", realm.display_name);
    Ok(Shell { console: &console, section: Section::Realms, title: &title }.answer(StatusCode::OK, content))
}

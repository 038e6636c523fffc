//! `/realms/{realm}/clients/{client}/allowed-ips`: the addresses and networks a client may ask the
//! token endpoint from. Reading needs `client:read`, replacing the list `client:update`; an empty
//! list allows every address.

use axum::extract::State;
use axum::response::Response;
use serde::Serialize;
use utoipa::ToSchema;

use super::commit;
use super::reach::{ClientRead, ClientUpdate, InClient};
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::address_lists;
use crate::kernel::validate::{Body, list_of};
use crate::runtime::error::Error;
use crate::store::clients as client_store;
use crate::store::trail::{Change, ChangeAction, Place, ResourceKind};

/// The most entries a client's list holds.
pub const MAX_ALLOWED_IPS: usize = 100;

/// A client's allowed IPs.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AllowedIpsView {
    /// Addresses (`203.0.113.7`, `2001:db8::1`) and networks in CIDR notation (`203.0.113.0/24`);
    /// empty: every address.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_ips: Vec<String>,
}

/// The body of a replacement.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct AllowedIpsInput {
    /// Up to 100 addresses or CIDR networks; `[]` allows every address.
    allowed_ips: Vec<String>,
}

impl AllowedIpsInput {
    fn read(body: &mut Body) -> Self {
        let allowed = body.required("allowedIps", list_of(MAX_ALLOWED_IPS, address_lists::entry));
        Self { allowed_ips: allowed.unwrap_or_default() }
    }
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/allowed-ips", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)),
    responses((status = 200, description = "The addresses and networks the client may ask the token endpoint from, in `data`", body = AllowedIpsView),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(InClient { client, .. }: InClient<ClientRead>) -> Result<Response, Error> {
    Ok(envelope::ok(AllowedIpsView { allowed_ips: client.allowed_ips }))
}

#[utoipa::path(put, path = "/realms/{realm}/clients/{client}/allowed-ips", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)), request_body = AllowedIpsInput,
    responses((status = 200, description = "The list now in force, in `data`; the token endpoint refuses the client from anywhere else (`unauthorized_client`, `ClientAddressNotAllowed`)", body = AllowedIpsView),
              (status = 400, description = "ValidationFailed: an entry is neither an address nor a network"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn replace(
    State(state): State<AppState>,
    InClient { client, caller, .. }: InClient<ClientUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    let AllowedIpsInput { allowed_ips: allowed } = AllowedIpsInput::read(&mut body);
    body.finish()?;
    let mut tx = state.store.begin().await?;
    client_store::set_allowed_ips(&mut *tx, &client, &allowed, state.clock.now()).await?;
    let place = Place::in_realm(ResourceKind::ClientAllowedIps, &client.id, &client.realm_id).of_client(&client.id);
    let before = AllowedIpsView { allowed_ips: client.allowed_ips.clone() };
    let after = AllowedIpsView { allowed_ips: allowed };
    commit(&state, &caller, tx, Change::of(ChangeAction::Update, place, 200).before(&before).after(&after)).await?;
    Ok(envelope::ok(after))
}

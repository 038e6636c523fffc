//! `/realms/{realm}/clients/{client}/allowed-ips`: the addresses and networks a client may ask the
//! token endpoint from. Reading needs `client:read`, replacing the list `client:update`; an empty
//! list allows every address.

use crate::directory;
use axum::extract::State;
use axum::response::Response;

use super::reach::{ClientRead, ClientUpdate, InClient};
use crate::directory::clients::{AllowedIpsInput, AllowedIpsView};
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::runtime::error::Error;

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
    Ok(envelope::ok(directory::clients::allow_addresses(&state, &client, allowed, caller.author()).await?))
}

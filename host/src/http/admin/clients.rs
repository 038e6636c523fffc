//! `/realms/{realm}/clients`: applications of a realm.

use super::reach::{ClientCreate, ClientDelete, ClientRead, ClientUpdate, InClient, InRealm};
use axum::extract::{RawQuery, State};

use crate::directory::rotation::RotationInput;
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::runtime::error::Error;

use crate::directory::admin::clients as admin;
pub use crate::directory::client_fields::scope_token;
use crate::directory::clients::{ClientInput, ClientView, RotatedClientSecret};
pub use crate::store::clients::CLIENT_SECRET_PREFIX;

#[utoipa::path(post, path = "/realms/{realm}/clients", tag = "Clients", params(("realm" = String, Path)),
    request_body = ClientInput,
    responses((status = 201, description = "The created client with `clientSecret` (shown once), in `data`", body = ClientView),
              (status = 400), (status = 403), (status = 409, description = "AlreadyExists: the id is taken in the realm")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    reached: InRealm<ClientCreate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<ClientView>, Error> {
    admin::create(&state.admin(), reached, body).await
}

#[utoipa::path(get, path = "/realms/{realm}/clients", tag = "Clients",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query), ("status" = Option<String>, Query),
           ("sortBy" = Option<String>, Query, description = "id, name, createdAt, updatedAt"), ("sortDirection" = Option<String>, Query),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query),
           ("registration" = Option<String>, Query, description = "Admin, Dynamic or MetadataDocument: only the clients that came to be this way")),
    responses((status = 200, description = "A page of the realm's clients, in `pagination`", body = [ClientView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    reached: InRealm<ClientRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<ClientView>, Error> {
    admin::list(&state.admin(), reached, query).await
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)),
    responses((status = 200, description = "The client, in `data`", body = ClientView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(State(state): State<AppState>, reached: InClient<ClientRead>) -> Result<Answer<ClientView>, Error> {
    admin::read(&state.admin(), reached).await
}

#[utoipa::path(put, path = "/realms/{realm}/clients/{client}", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)), request_body = ClientInput,
    responses((status = 200, description = "The updated client, in `data`", body = ClientView), (status = 400), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    reached: InClient<ClientUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<ClientView>, Error> {
    admin::update(&state.admin(), reached, body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/clients/{client}", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)),
    responses((status = 200, description = "Deleted"), (status = 403), (status = 404),
              (status = 409, description = "Conflict: the platform client cannot be deleted")),
    security(("apiKey" = [])))]
pub async fn delete(State(state): State<AppState>, reached: InClient<ClientDelete>) -> Result<Answer<()>, Error> {
    admin::delete(&state.admin(), reached).await
}

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/client-secret/rotate", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)),
    request_body(content = RotationInput, description = "Optional; an empty body rotates immediately"),
    responses((status = 200, description = "The new secret (shown once) and `rotation`, in `data`", body = RotatedClientSecret),
              (status = 400), (status = 403), (status = 404), (status = 409, description = "The client has no secret")),
    security(("apiKey" = [])))]
pub async fn rotate_secret(
    State(state): State<AppState>,
    reached: InClient<ClientUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<RotatedClientSecret>, Error> {
    admin::rotate_secret(&state.admin(), reached, body).await
}

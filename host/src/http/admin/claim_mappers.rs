//! `/realms/{realm}/clients/{client}/claim-mappers`: the claims a client's access and ID tokens
//! carry from each person's data, and a preview of what a given person's tokens would carry
//! (published nowhere). Reading needs `client:read`, changing `client:update`.

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;

use super::reach::{ClientRead, ClientUpdate, InClient};
use crate::directory::claim_mappers;
use crate::directory::claim_mappers::{ClaimMapperInput, ClaimsPreview};
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::ids::new_guid;
use crate::kernel::validate::Rule;
use crate::oauth::tokens::claims::{self, Token};
use crate::runtime::error::Error;
use crate::store::clients::{ClaimMapper, ClaimSource};
use crate::store::users;

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/claim-mappers", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)),
    responses((status = 200, description = "The client's claim mappers, in `data`", body = [ClaimMapper]), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn list(InClient { client, .. }: InClient<ClientRead>) -> Result<Response, Error> {
    Ok(envelope::ok(client.claim_mappers.0))
}

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/claim-mappers", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)), request_body = ClaimMapperInput,
    responses((status = 201, description = "The mapper, in `data`; the client's next tokens carry its claim", body = ClaimMapper),
              (status = 400, description = "ValidationFailed: a reserved or repeated claim, a source without what it needs"),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    InClient { client, caller, .. }: InClient<ClientUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    let input = ClaimMapperInput::read(&mut body);
    body.finish()?;
    let Some(ClaimMapperInput { claim, source, attribute, value, access_token, id_token }) = input else {
        return Err(Error::invalid("claim", Rule::Required, "claim and source are required"));
    };
    let (access_token, id_token) = (access_token.unwrap_or(true), id_token.unwrap_or(true));
    match (source, &attribute, &value) {
        (ClaimSource::Attribute, None, _) => {
            return Err(Error::invalid("attribute", Rule::Required, "the Attribute source names an attribute"));
        }
        (ClaimSource::Fixed, _, None) => {
            return Err(Error::invalid("value", Rule::Required, "the Fixed source has a value"));
        }
        (ClaimSource::Attribute, _, Some(_)) | (ClaimSource::Fixed, Some(_), _) => {
            return Err(Error::invalid("source", Rule::Conflict, "give attribute with Attribute, value with Fixed"));
        }
        (ClaimSource::Roles | ClaimSource::Groups | ClaimSource::Organizations, a, v) if a.is_some() || v.is_some() => {
            return Err(Error::invalid("source", Rule::Conflict, "this source takes neither attribute nor value"));
        }
        _ => {}
    }
    if !access_token && !id_token {
        return Err(Error::invalid("accessToken", Rule::Conflict, "a mapper adds its claim to at least one token"));
    }
    let mapper = ClaimMapper { id: new_guid(), claim, source, attribute, value, access_token, id_token };
    claim_mappers::add(&state, &client, mapper.clone(), caller.author()).await?;
    Ok(envelope::created(mapper))
}

#[utoipa::path(delete, path = "/realms/{realm}/clients/{client}/claim-mappers/{mapperId}", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path), ("mapperId" = String, Path)),
    responses((status = 200, description = "Removed: the client's next tokens no longer carry its claim"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    InClient { client, caller, .. }: InClient<ClientUpdate>,
    Path((_, _, mapper_id)): Path<(String, String, String)>,
) -> Result<Response, Error> {
    claim_mappers::remove(&state, &client, &mapper_id, caller.author()).await?;
    Ok(envelope::done())
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/claim-mappers/preview", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path), ("userId" = String, Query, description = "The person")),
    responses((status = 200, description = "The claims the mappers would add to the person's access and ID tokens at this client; nothing is issued or published", body = ClaimsPreview),
              (status = 400), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn preview(
    State(state): State<AppState>,
    InClient { client, .. }: InClient<ClientRead>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    let pairs = super::query_pairs(query);
    let Some((_, user_id)) = pairs.iter().find(|(name, _)| name == "userId") else {
        return Err(Error::invalid("userId", Rule::Required, "userId names the person"));
    };
    let user = users::find(state.store.pool(), &client.realm_id, user_id).await?.ok_or(Error::NotFound("user"))?;
    Ok(envelope::ok(ClaimsPreview {
        user_id: user.id.to_string(),
        access_token_claims: claims::mapped(&state, &client, &user, Token::Access).await?,
        id_token_claims: claims::mapped(&state, &client, &user, Token::Id).await?,
    }))
}

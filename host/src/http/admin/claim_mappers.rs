//! `/realms/{realm}/clients/{client}/claim-mappers`: the claims a client's access and ID tokens
//! carry from each person's data, and a preview of what a given person's tokens would carry
//! (published nowhere). Reading needs `client:read`, changing `client:update`.

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::reach::{ClientRead, ClientUpdate, InClient};
use crate::directory::claim_mappers;
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::ids::new_guid;
use crate::kernel::validate::{Body, Notification, Refusals, Rule, boolean, one_of, text};
use crate::oauth::tokens::claims::{self, RESERVED, Token};
use crate::runtime::error::Error;
use crate::store::clients::{ClaimMapper, ClaimSource};
use crate::store::users;

const SOURCES: &[(&str, ClaimSource)] = &[
    ("Attribute", ClaimSource::Attribute),
    ("Roles", ClaimSource::Roles),
    ("Groups", ClaimSource::Groups),
    ("Organizations", ClaimSource::Organizations),
    ("Fixed", ClaimSource::Fixed),
];

/// The body of a new mapper.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct ClaimMapperInput {
    /// 1–64 letters, digits, `_`, `-`, `.` or `:`; never a claim the service sets (`iss`, `sub`,
    /// `aud`, `exp`, `act`, `scope`, `email`, …).
    claim: String,
    source: ClaimSource,
    /// For `Attribute`: username, email, emailConfirmed, firstName or lastName.
    attribute: Option<String>,
    /// For `Fixed`: up to 512 characters.
    value: Option<String>,
    /// Default true.
    access_token: Option<bool>,
    /// Default true.
    id_token: Option<bool>,
}

impl ClaimMapperInput {
    /// The fields, when the required ones are there; every field is read either way, so that each
    /// refusal is reported.
    fn read(body: &mut Body) -> Option<Self> {
        let claim = body.required("claim", claim_name);
        let source = body.required("source", one_of(SOURCES));
        let attribute = body.optional(
            "attribute",
            one_of(&[
                ("username", "username"),
                ("email", "email"),
                ("emailConfirmed", "emailConfirmed"),
                ("firstName", "firstName"),
                ("lastName", "lastName"),
            ]),
        );
        let value = body.optional("value", text(1, 512));
        let access_token = body.optional("accessToken", boolean);
        let id_token = body.optional("idToken", boolean);
        Some(Self {
            claim: claim?,
            source: source?,
            attribute: attribute.map(str::to_owned),
            value,
            access_token,
            id_token,
        })
    }
}

/// What a person's tokens would carry from the mappers.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClaimsPreview {
    pub user_id: String,
    #[schema(value_type = Object)]
    pub access_token_claims: Map<String, Value>,
    #[schema(value_type = Object)]
    pub id_token_claims: Map<String, Value>,
}

fn claim_name(path: &str, value: &Value) -> Result<String, Refusals> {
    let name = text(1, 64)(path, value)?;
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.:".contains(c)) {
        return Err(vec![Notification::new(
            path,
            Rule::Pattern,
            format!("{path} holds letters, digits, _ - . : only"),
        )]);
    }
    if RESERVED.contains(&name.as_str()) {
        return Err(vec![Notification::new(
            path,
            Rule::Conflict,
            format!("{path} {name} is a claim the service sets"),
        )]);
    }
    Ok(name)
}

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

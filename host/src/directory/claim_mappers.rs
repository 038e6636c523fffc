//! A client's claim mappers: the claims it adds to its tokens, each from a person's attribute, a
//! fixed value, or their roles, groups or organizations. A client maps a claim once, with at most
//! [`MAX_MAPPERS`] mappers; each change is trailed as a change of the client.

use crate::kernel::validate::{Body, Notification, Refusals, Rule, boolean, one_of, text};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::clients::{self as client_store, ClaimMapper, ClaimSource, Client};
use crate::store::trail::{Change, ChangeAction, Place, ResourceKind};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

/// The claims a mapper may never name: those of JWT and OpenID Connect the service sets or
/// checks, and its own.
pub const RESERVED: &[&str] = &[
    "iss",
    "sub",
    "aud",
    "exp",
    "nbf",
    "iat",
    "jti",
    "azp",
    "client_id",
    "scope",
    "sid",
    "cnf",
    "act",
    "may_act",
    "delegation_id",
    "auth_time",
    "nonce",
    "acr",
    "amr",
    "at_hash",
    "c_hash",
    "typ",
    "realm_resource_access",
    "resource_access",
    "client_resource_access",
    "account_id",
    "name",
    "given_name",
    "family_name",
    "preferred_username",
    "email",
    "email_verified",
    "token_type",
    "active",
    "username",
];

/// The most mappers a client holds.
pub const MAX_MAPPERS: usize = 50;

fn place(client: &Client) -> Place {
    Place::in_realm(ResourceKind::ClientClaimMappers, &client.id, &client.realm_id).of_client(&client.id)
}

/// Adds `mapper` to the client's: refused for a claim the client maps already, or past
/// [`MAX_MAPPERS`].
pub async fn add(context: &Context, client: &Client, mapper: ClaimMapper, by: Author<'_>) -> Result<(), Error> {
    let before = client.claim_mappers.0.clone();
    if before.iter().any(|m| m.claim == mapper.claim) {
        return Err(Error::invalid("claim", Rule::Duplicate, format!("the client maps {} already", mapper.claim)));
    }
    if before.len() >= MAX_MAPPERS {
        return Err(Error::invalid("claim", Rule::Range, format!("a client holds at most {MAX_MAPPERS} mappers")));
    }
    let mut after = before.clone();
    after.push(mapper);
    replace(context, client, (before, after), 201, by).await
}

/// Removes the mapper `mapper_id` of the client: its next tokens no longer carry the claim.
pub async fn remove(context: &Context, client: &Client, mapper_id: &str, by: Author<'_>) -> Result<(), Error> {
    let before = client.claim_mappers.0.clone();
    let after: Vec<ClaimMapper> = before.iter().filter(|m| m.id != mapper_id).cloned().collect();
    if after.len() == before.len() {
        return Err(Error::NotFound("claim mapper"));
    }
    replace(context, client, (before, after), 200, by).await
}

async fn replace(
    context: &Context,
    client: &Client,
    (before, after): (Vec<ClaimMapper>, Vec<ClaimMapper>),
    status: u16,
    by: Author<'_>,
) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    client_store::set_claim_mappers(&mut *tx, client, &after, context.clock.now()).await?;
    let change = Change::of(ChangeAction::Update, place(client), status).before(&before).after(&after);
    changes::commit(context, by, tx, change).await
}

/// The body of a new mapper.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct ClaimMapperInput {
    /// 1–64 letters, digits, `_`, `-`, `.` or `:`; never a claim the service sets (`iss`, `sub`,
    /// `aud`, `exp`, `act`, `scope`, `email`, …).
    pub(crate) claim: String,
    pub(crate) source: ClaimSource,
    /// For `Attribute`: username, email, emailConfirmed, firstName or lastName.
    pub(crate) attribute: Option<String>,
    /// For `Fixed`: up to 512 characters.
    pub(crate) value: Option<String>,
    /// Default true.
    pub(crate) access_token: Option<bool>,
    /// Default true.
    pub(crate) id_token: Option<bool>,
}

impl ClaimMapperInput {
    /// The fields, when the required ones are there; every field is read either way, so that each
    /// refusal is reported.
    pub(crate) fn read(body: &mut Body) -> Option<Self> {
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

pub(crate) const SOURCES: &[(&str, ClaimSource)] = &[
    ("Attribute", ClaimSource::Attribute),
    ("Roles", ClaimSource::Roles),
    ("Groups", ClaimSource::Groups),
    ("Organizations", ClaimSource::Organizations),
    ("Fixed", ClaimSource::Fixed),
];

pub(crate) fn claim_name(path: &str, value: &Value) -> Result<String, Refusals> {
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

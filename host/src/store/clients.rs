//! Clients (applications) of a realm.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::realms::SecondFactor;
use super::trail::{Place, Placed, ResourceKind};
use super::{Error, Store};
use super::{Status, text_enum};
use crate::kernel::crypto::SecretHasher;
use crate::kernel::ids::{ClientId, RealmId};

/// Prefix of client secret values.
pub const CLIENT_SECRET_PREFIX: &str = "cstl_cs_";

/// The OAuth grants, by their `grant_type` on the wire, each listed once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantType {
    AuthorizationCode,
    ClientCredentials,
    Password,
    RefreshToken,
    /// RFC 8693; enabled on a client by its own switch, not in its grant types.
    TokenExchange,
    /// Ends a password sign-in a phone confirmed; a client with the password grant has it.
    Push,
    /// The device authorization grant (RFC 8628): a device polls while a person approves it.
    DeviceCode,
}

impl GrantType {
    /// The grants a client's `grantTypes` may name.
    pub const ENABLEABLE: [Self; 5] =
        [Self::AuthorizationCode, Self::ClientCredentials, Self::Password, Self::RefreshToken, Self::DeviceCode];
    /// The grants the token endpoint takes, as discovery announces them.
    pub const ANNOUNCED: [Self; 6] = [
        Self::AuthorizationCode,
        Self::ClientCredentials,
        Self::Password,
        Self::RefreshToken,
        Self::TokenExchange,
        Self::DeviceCode,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::AuthorizationCode => "authorization_code",
            Self::ClientCredentials => "client_credentials",
            Self::Password => "password",
            Self::RefreshToken => "refresh_token",
            Self::TokenExchange => "urn:ietf:params:oauth:grant-type:token-exchange",
            Self::Push => "urn:castellan:params:oauth:grant-type:push",
            Self::DeviceCode => "urn:ietf:params:oauth:grant-type:device_code",
        }
    }

    /// The grant of this `grant_type`, when the service knows it.
    pub fn named(name: &str) -> Option<Self> {
        [
            Self::AuthorizationCode,
            Self::ClientCredentials,
            Self::Password,
            Self::RefreshToken,
            Self::TokenExchange,
            Self::Push,
            Self::DeviceCode,
        ]
        .into_iter()
        .find(|grant| grant.as_str() == name)
    }
}

/// A client's grant types as stored: a JSON list of their names. A name the service no longer
/// knows reads as no grant.
impl From<super::JsonList> for Vec<GrantType> {
    fn from(list: super::JsonList) -> Self {
        Vec::<String>::from(list).iter().filter_map(|name| GrantType::named(name)).collect()
    }
}

fn grant_list(grants: &[GrantType]) -> String {
    let names: Vec<String> = grants.iter().map(|grant| grant.as_str().to_owned()).collect();
    super::to_json_list(&names)
}

text_enum! {
    pub enum ClientType {
        /// Holds a secret (servers, agents).
        Confidential,
        /// Cannot keep a secret (browser and mobile apps); no client credentials.
        Public,
    }
}

text_enum! {
    /// Whose keys sign a client's tokens.
    pub enum SigningKeys {
        /// The realm's, shared by every such client (the default): the realm's JWKS holds a few
        /// keys whatever the number of its clients.
        Realm,
        /// Its own, published before they sign and rotated on their own: for a client whose
        /// tokens must stop verifying without touching any other client's.
        Own,
    }
}

text_enum! {
    /// How a client came to be.
    pub enum Registration {
        /// Created through the admin API: one of the realm's own applications.
        Admin,
        /// Registered itself at the realm's registration endpoint (RFC 7591): a third party,
        /// whose sign-ins ask the person's consent.
        Dynamic,
        /// Known by the metadata document its `client_id` is the https address of, fetched by
        /// the service: a third party too.
        MetadataDocument,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Client {
    pub realm_id: RealmId,
    pub id: ClientId,
    pub name: String,
    pub description: Option<String>,
    #[sqlx(try_from = "String")]
    pub client_type: ClientType,
    #[sqlx(try_from = "String")]
    pub status: Status,
    pub secret_hash: Option<String>,
    pub secret_last_four: Option<String>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub secret_rotated_at: Option<DateTime<Utc>>,
    /// The keyed hash of the secret before the last rotation, while it may still authenticate.
    pub previous_secret_hash: Option<String>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub previous_secret_valid_until: Option<DateTime<Utc>>,
    /// Tokens of the client issued before this instant are revoked.
    #[sqlx(try_from = "super::OptionalMillis")]
    pub issued_tokens_revoked_before: Option<DateTime<Utc>>,
    #[sqlx(try_from = "super::Flag")]
    pub token_exchange_enabled: bool,
    #[sqlx(try_from = "super::JsonList")]
    pub allowed_scopes: Vec<String>,
    #[sqlx(try_from = "super::JsonList")]
    pub grant_types: Vec<GrantType>,
    #[sqlx(try_from = "super::JsonList")]
    pub redirect_uris: Vec<String>,
    /// Where the client may send a browser after signing it out, compared exactly.
    #[sqlx(try_from = "super::JsonList")]
    pub post_logout_redirect_uris: Vec<String>,
    /// The web origins (`scheme://host[:port]`) whose browser code may call the token and
    /// revocation endpoints as this client (CORS).
    #[sqlx(try_from = "super::JsonList")]
    pub allowed_origins: Vec<String>,
    /// The addresses and networks (CIDR) the client may ask the token endpoint from; empty allows
    /// every address. Written only by [`set_allowed_ips`].
    #[sqlx(try_from = "super::JsonList")]
    pub allowed_ips: Vec<String>,
    /// The claims the client's tokens carry from each person's data. Written only by
    /// [`set_claim_mappers`].
    #[sqlx(try_from = "String")]
    pub claim_mappers: ClaimMappers,
    /// The address of the logo the login page shows (https).
    pub logo_uri: Option<String>,
    /// The login page's colour, `#rrggbb`.
    pub brand_color: Option<String>,
    /// Whose keys sign the client's tokens.
    #[sqlx(try_from = "String")]
    pub signing_keys: SigningKeys,
    /// ES256 or RS256: the algorithm its tokens are signed with.
    pub key_algorithm: String,
    /// Days between scheduled rotations of the signing key; none when unset.
    pub key_rotation_days: Option<i64>,
    /// How the client came to be: created by an administrator, or registered by itself.
    #[sqlx(try_from = "String")]
    pub registration: Registration,
    /// The keyed hash of a self-registered client's registration access token (RFC 7592).
    pub registration_token_hash: Option<String>,
    /// The public keys the client signs its assertions with (`private_key_jwt`), a JWK Set.
    pub jwks: Option<String>,
    /// Where the client publishes its JWK Set (https), instead of `jwks`.
    pub jwks_uri: Option<String>,
    /// When its sign-ins ask for a second factor, where it asks more than its realm.
    #[sqlx(try_from = "super::OptionalText")]
    pub second_factor: Option<SecondFactor>,
    /// What a self-registered client said of itself that the service keeps only to show it back
    /// (`client_uri`, `contacts`, `software_id`, `software_version`), a JSON object.
    pub registered_metadata: String,
    /// For a client known by its metadata document: until when the stored copy is used without
    /// fetching the document again.
    #[sqlx(try_from = "super::OptionalMillis")]
    pub document_fresh_until: Option<DateTime<Utc>>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
}

impl Placed for Client {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::Client, &self.id, &self.realm_id).of_client(&self.id)
    }
}

impl Client {
    /// Whether the client authenticates with signed assertions (`private_key_jwt`, RFC 7523) and
    /// never with a secret.
    pub fn uses_keys(&self) -> bool {
        self.jwks.is_some() || self.jwks_uri.is_some()
    }

    /// Whether the client is a third party, whose sign-ins ask the person's consent.
    pub fn third_party(&self) -> bool {
        self.registration != Registration::Admin
    }

    /// Whether the client's grant types name `grant`.
    pub fn allows(&self, grant: GrantType) -> bool {
        self.grant_types.contains(&grant)
    }

    /// A client with no secret yet, Active, with the default configuration: the authorization
    /// code and refresh token grants, no scopes, no redirect URIs, Token Exchange off.
    pub fn new(realm_id: &str, id: &str, client_type: ClientType, now: DateTime<Utc>) -> Self {
        Self {
            realm_id: RealmId::known(realm_id),
            id: ClientId::known(id),
            name: id.to_owned(),
            description: None,
            client_type,
            status: Status::Active,
            secret_hash: None,
            secret_last_four: None,
            secret_rotated_at: None,
            previous_secret_hash: None,
            previous_secret_valid_until: None,
            issued_tokens_revoked_before: None,
            token_exchange_enabled: false,
            allowed_scopes: Vec::new(),
            grant_types: vec![GrantType::AuthorizationCode, GrantType::RefreshToken],
            redirect_uris: Vec::new(),
            post_logout_redirect_uris: Vec::new(),
            allowed_origins: Vec::new(),
            allowed_ips: Vec::new(),
            claim_mappers: ClaimMappers::default(),
            logo_uri: None,
            brand_color: None,
            signing_keys: SigningKeys::Realm,
            key_algorithm: "ES256".to_owned(),
            key_rotation_days: None,
            registration: Registration::Admin,
            registration_token_hash: None,
            jwks: None,
            jwks_uri: None,
            second_factor: None,
            registered_metadata: "{}".to_owned(),
            document_fresh_until: None,
            created_at: now,
            updated_at: now,
        }
    }

    /// Whether `secret` authenticates the client now: the current secret, or the previous one
    /// within its overlap.
    pub fn accepts_secret(&self, hasher: &SecretHasher, secret: &str, now: DateTime<Utc>) -> bool {
        hasher.matches_rotated(
            secret,
            self.secret_hash.as_deref(),
            self.previous_secret_hash.as_deref(),
            self.previous_secret_valid_until,
            now,
        )
    }

    /// Whether a token of the client issued at `issued_at` was revoked by a
    /// compromise rotation of its secret.
    pub fn revoked_token(&self, issued_at: DateTime<Utc>) -> bool {
        self.issued_tokens_revoked_before.is_some_and(|before| issued_at < before)
    }
}

const COLUMNS: &str = "realm_id, id, name, description, client_type, status, secret_hash, secret_last_four, \
     secret_rotated_at, previous_secret_hash, previous_secret_valid_until, issued_tokens_revoked_before, \
     token_exchange_enabled, allowed_scopes, grant_types, redirect_uris, key_algorithm, key_rotation_days, created_at, updated_at, \
     post_logout_redirect_uris, logo_uri, brand_color, allowed_origins, registration, registration_token_hash, \
     registered_metadata, jwks, jwks_uri, document_fresh_until, allowed_ips, claim_mappers, signing_keys, \
     second_factor";

pub const LISTING: Listing = Listing {
    table: "clients",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["id", "name", "description"],
    status: Some("status"),
    sortable: &[("id", "id"), ("name", "name"), ("updatedAt", "updated_at"), ("createdAt", "created_at")],
};

pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    id: &str,
) -> Result<Option<Client>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM clients WHERE realm_id = $1 AND id = $2")))
        .bind(realm_id)
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// Inserts the client; `false` when its id is taken in the realm.
pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, client: &Client) -> Result<bool, Error> {
    let done = sqlx::query(
        "INSERT INTO clients (realm_id, id, name, description, client_type, status, secret_hash, secret_last_four, \
         secret_rotated_at, previous_secret_hash, previous_secret_valid_until, issued_tokens_revoked_before, \
         token_exchange_enabled, allowed_scopes, grant_types, redirect_uris, key_algorithm, key_rotation_days, \
         created_at, updated_at, post_logout_redirect_uris, logo_uri, brand_color, allowed_origins, registration, \
         registration_token_hash, registered_metadata, jwks, jwks_uri, document_fresh_until, signing_keys, \
         second_factor) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, \
         $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32) \
         ON CONFLICT (realm_id, id) DO NOTHING",
    )
    .bind(&client.realm_id)
    .bind(&client.id)
    .bind(&client.name)
    .bind(&client.description)
    .bind(client.client_type.as_str())
    .bind(client.status.as_str())
    .bind(&client.secret_hash)
    .bind(&client.secret_last_four)
    .bind(super::millis(client.secret_rotated_at))
    .bind(&client.previous_secret_hash)
    .bind(super::millis(client.previous_secret_valid_until))
    .bind(super::millis(client.issued_tokens_revoked_before))
    .bind(client.token_exchange_enabled)
    .bind(super::to_json_list(&client.allowed_scopes))
    .bind(grant_list(&client.grant_types))
    .bind(super::to_json_list(&client.redirect_uris))
    .bind(&client.key_algorithm)
    .bind(client.key_rotation_days)
    .bind(super::millis(client.created_at))
    .bind(super::millis(client.updated_at))
    .bind(super::to_json_list(&client.post_logout_redirect_uris))
    .bind(&client.logo_uri)
    .bind(&client.brand_color)
    .bind(super::to_json_list(&client.allowed_origins))
    .bind(client.registration.as_str())
    .bind(&client.registration_token_hash)
    .bind(&client.registered_metadata)
    .bind(&client.jwks)
    .bind(&client.jwks_uri)
    .bind(super::millis(client.document_fresh_until))
    .bind(client.signing_keys.as_str())
    .bind(client.second_factor.map(SecondFactor::as_str))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Writes the fields an update may change.
/// Where a mapped claim takes its value from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub enum ClaimSource {
    /// One of the person's attributes: `username`, `email`, `emailConfirmed`, `firstName`,
    /// `lastName`.
    Attribute,
    /// The names of the realm roles the person holds, directly or through groups.
    Roles,
    /// The names of the person's groups.
    Groups,
    /// The names of the person's organizations.
    Organizations,
    /// A fixed value.
    Fixed,
}

/// A claim a client's tokens carry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClaimMapper {
    pub id: String,
    /// The claim's name in the tokens.
    pub claim: String,
    pub source: ClaimSource,
    /// The attribute, for the `Attribute` source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribute: Option<String>,
    /// The value, for the `Fixed` source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Whether access tokens carry it.
    pub access_token: bool,
    /// Whether ID tokens carry it.
    pub id_token: bool,
}

/// A client's claim mappers, as their column stores them (JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClaimMappers(pub Vec<ClaimMapper>);

impl From<String> for ClaimMappers {
    fn from(text: String) -> Self {
        Self(serde_json::from_str(&text).unwrap_or_default())
    }
}

/// Replaces the client's claim mappers.
pub async fn set_claim_mappers<'c>(
    db: impl Executor<'c, Database = Any>,
    client: &Client,
    mappers: &[ClaimMapper],
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let text = serde_json::to_string(mappers).unwrap_or_else(|_| "[]".into());
    set_column(db, client, "claim_mappers", text, now).await
}

/// Replaces the addresses and networks the client may ask the token endpoint from.
pub async fn set_allowed_ips<'c>(
    db: impl Executor<'c, Database = Any>,
    client: &Client,
    allowed: &[String],
    now: DateTime<Utc>,
) -> Result<(), Error> {
    set_column(db, client, "allowed_ips", super::to_json_list(allowed), now).await
}

/// Writes one column the client's update leaves alone (a sub-resource of its own).
async fn set_column<'c>(
    db: impl Executor<'c, Database = Any>,
    client: &Client,
    column: &'static str,
    text: String,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE clients SET {column} = $3, updated_at = $4 WHERE realm_id = $1 AND id = $2"
    )))
    .bind(&client.realm_id)
    .bind(&client.id)
    .bind(text)
    .bind(super::millis(now))
    .execute(db)
    .await?;
    Ok(())
}

pub async fn update<'c>(db: impl Executor<'c, Database = Any>, client: &Client) -> Result<(), Error> {
    sqlx::query(
        "UPDATE clients SET name = $3, description = $4, status = $5, token_exchange_enabled = $6, \
         allowed_scopes = $7, grant_types = $8, redirect_uris = $9, updated_at = $10, key_algorithm = $11, \
         key_rotation_days = $12, post_logout_redirect_uris = $13, logo_uri = $14, brand_color = $15, \
         allowed_origins = $16, registered_metadata = $17, registration_token_hash = $18, \
         jwks = $19, jwks_uri = $20, client_type = $21, document_fresh_until = $22, signing_keys = $23, \
         second_factor = $24 WHERE realm_id = $1 AND id = $2",
    )
    .bind(&client.realm_id)
    .bind(&client.id)
    .bind(&client.name)
    .bind(&client.description)
    .bind(client.status.as_str())
    .bind(client.token_exchange_enabled)
    .bind(super::to_json_list(&client.allowed_scopes))
    .bind(grant_list(&client.grant_types))
    .bind(super::to_json_list(&client.redirect_uris))
    .bind(super::millis(client.updated_at))
    .bind(&client.key_algorithm)
    .bind(client.key_rotation_days)
    .bind(super::to_json_list(&client.post_logout_redirect_uris))
    .bind(&client.logo_uri)
    .bind(&client.brand_color)
    .bind(super::to_json_list(&client.allowed_origins))
    .bind(&client.registered_metadata)
    .bind(&client.registration_token_hash)
    .bind(&client.jwks)
    .bind(&client.jwks_uri)
    .bind(client.client_type.as_str())
    .bind(super::millis(client.document_fresh_until))
    .bind(client.signing_keys.as_str())
    .bind(client.second_factor.map(SecondFactor::as_str))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// Writes a rotated secret: the new hash and last four, and what became of the previous secret.
pub async fn rotate_secret<'c>(db: impl Executor<'c, Database = Any>, client: &Client) -> Result<(), Error> {
    sqlx::query(
        "UPDATE clients SET secret_hash = $3, secret_last_four = $4, secret_rotated_at = $5, \
         previous_secret_hash = $6, previous_secret_valid_until = $7, issued_tokens_revoked_before = $8, \
         updated_at = $9 WHERE realm_id = $1 AND id = $2",
    )
    .bind(&client.realm_id)
    .bind(&client.id)
    .bind(&client.secret_hash)
    .bind(&client.secret_last_four)
    .bind(super::millis(client.secret_rotated_at))
    .bind(&client.previous_secret_hash)
    .bind(super::millis(client.previous_secret_valid_until))
    .bind(super::millis(client.issued_tokens_revoked_before))
    .bind(super::millis(client.updated_at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, realm_id: &str, id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM clients WHERE realm_id = $1 AND id = $2")
        .bind(realm_id)
        .bind(id)
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

/// A page of a realm's clients; only those that came to be this way, when `registration` is given.
pub async fn page(
    store: &Store,
    realm_id: &str,
    registration: Option<Registration>,
    request: &PageRequest,
) -> Result<Page<Client>, Error> {
    let scope = Scope::of("realm_id", realm_id).and_given("registration", registration.map(Registration::as_str));
    page::fetch(store.pool(), &LISTING, &scope, request).await
}

/// How many clients anyone added to the realm (registrations and metadata documents) in all, and
/// since `since`.
pub async fn self_registered_counts<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    since: DateTime<Utc>,
) -> Result<(i64, i64), Error> {
    let (total, recent): (i64, i64) = sqlx::query_as(
        "SELECT COUNT(*), COALESCE(SUM(CASE WHEN created_at > $2 THEN 1 ELSE 0 END), 0) FROM clients \
         WHERE realm_id = $1 AND registration IN ('Dynamic', 'MetadataDocument')",
    )
    .bind(realm_id)
    .bind(super::millis(since))
    .fetch_one(db)
    .await?;
    Ok((total, recent))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grant_is_found_by_its_grant_type() {
        for grant in [
            GrantType::AuthorizationCode,
            GrantType::ClientCredentials,
            GrantType::Password,
            GrantType::RefreshToken,
            GrantType::TokenExchange,
            GrantType::Push,
            GrantType::DeviceCode,
        ] {
            assert_eq!(GrantType::named(grant.as_str()), Some(grant));
        }
        assert_eq!(GrantType::named("implicit"), None);
        assert!(!GrantType::ENABLEABLE.contains(&GrantType::TokenExchange), "exchange has its own switch");
    }
}

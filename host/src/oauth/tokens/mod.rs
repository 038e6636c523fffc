//! Tokens: JWT access tokens per RFC 9068 (`typ: at+jwt`), OpenID Connect ID tokens, opaque
//! refresh tokens, and the one check that decides whether an access token is active.

pub mod claims;
pub mod delegation;
pub mod impersonation;
pub mod introspection;

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use crate::directory::keys;
use crate::kernel::crypto::generate_secret;
use crate::kernel::ids::{ClientId, RealmId, SessionId, guid_at, guid_instant};
use crate::oauth::signin::assurance::Level;
use crate::oauth::suspensions::{self, Standing};
use crate::runtime::cache::keys::Verifier;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::clients::{self as client_store, Client};
use crate::store::realm_roles::{self as role_store, Role};
use crate::store::sessions;
use crate::store::users::{self as user_store, User, UserStatus};

/// The RFC 9068 media type of access tokens, in the JOSE header.
pub const ACCESS_TOKEN_TYPE: &str = "at+jwt";
/// Prefix of refresh token values (opaque; only their keyed hash is stored).
pub const REFRESH_TOKEN_PREFIX: &str = "cstl_rt_";

pub use crate::directory::realms::issuer;

/// Who a token is about.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// A person signed in through `session_id`, at `auth_time`, by `methods` (`amr`).
    Person { user: &'a User, session_id: &'a str, auth_time: DateTime<Utc>, methods: &'a [String] },
    /// The client itself (client credentials).
    Client,
    /// An account client secret, at the platform realm: the token acts with the secret's roles and
    /// scopes and never outlives it.
    AccountSecret { secret_id: &'a str, account_id: &'a str, expires_at: Option<DateTime<Utc>> },
    /// A person, for whom the client acts under a delegation grant (token exchange): `act` names the
    /// actors, the token never outlives the grant (`expires_at`) and carries no role of the
    /// client itself.
    Delegated {
        user: &'a User,
        session_id: &'a str,
        /// The client the person signed in to (the session's), whose claim mappers apply.
        signed_in_to: &'a str,
        act: &'a Value,
        delegation_id: &'a str,
        expires_at: Option<DateTime<Utc>>,
        /// How and when the person signed in to that session.
        auth_time: DateTime<Utc>,
        methods: &'a [String],
    },
    /// A person of the realm, signed in as by a person of the account's team: `act` names the
    /// impersonator; no session, and the token lapses at `expires_at`.
    Impersonated { user: &'a User, act: &'a Value, expires_at: DateTime<Utc> },
}

/// What an access token grants.
#[derive(Debug, Clone)]
pub struct Grant<'a> {
    pub client: &'a Client,
    pub subject: Subject<'a>,
    pub scopes: &'a [String],
    pub resource: Option<&'a str>,
    /// The thumbprint of the DPoP key the token is bound to (`cnf.jkt`, RFC 9449 §6).
    pub dpop_jkt: Option<&'a str>,
}

/// An issued token and its identity.
#[derive(Debug, Clone)]
pub struct Issued {
    pub token: String,
    pub jti: String,
    /// The `exp` claim: a whole second.
    pub expires_at: DateTime<Utc>,
    pub lifetime_seconds: i64,
    /// The scopes the token carries: those granted, less any a suspension of the person at the
    /// client withholds.
    pub scopes: Vec<String>,
}

async fn sign(context: &Context, client: &Client, typ: &str, claims: &Value) -> Result<String, Error> {
    let signer = keys::signer(context, client).await?;
    signer.sign(Some(typ), claims).map_err(Error::Internal)
}

/// Signs an access token for the grant.
pub async fn access_token(context: &Context, grant: &Grant<'_>) -> Result<Issued, Error> {
    let instant = context.clock.now();
    let now = instant.timestamp();
    let lifetime = i64::from(context.settings.access_token_seconds);
    // The jti carries the issuance to the millisecond, which revocation instants are compared with.
    let jti = guid_at(instant);
    let client = grant.client;
    let (sub, sid) = match grant.subject {
        Subject::Person { user, session_id, .. } | Subject::Delegated { user, session_id, .. } => {
            (user.id.to_string(), Some(session_id))
        }
        Subject::Impersonated { user, .. } => (user.id.to_string(), None),
        Subject::Client => (client.id.to_string(), None),
        Subject::AccountSecret { secret_id, .. } => (secret_id.to_owned(), None),
    };
    // The token never outlives what it stands on; `exp` is a whole second, rounded down.
    let expires_at = match grant.subject {
        Subject::AccountSecret { expires_at: Some(until), .. }
        | Subject::Delegated { expires_at: Some(until), .. }
        | Subject::Impersonated { expires_at: until, .. } => (now + lifetime).min(until.timestamp()),
        _ => now + lifetime,
    };
    let lifetime = expires_at - now;
    // What a suspension of the person at the client withholds from new tokens.
    let standing = match grant.subject {
        Subject::Person { user, .. } | Subject::Impersonated { user, .. } | Subject::Delegated { user, .. } => {
            suspensions::standing(context, &client.realm_id, &client.id, &user.id, instant).await?
        }
        _ => Standing::default(),
    };
    let scopes = standing.narrow(grant.scopes);
    let mut claims = Map::new();
    claims.insert("iss".into(), json!(issuer(context, &client.realm_id)));
    claims.insert("sub".into(), json!(sub));
    claims.insert("aud".into(), json!(grant.resource.unwrap_or(&client.id)));
    claims.insert("client_id".into(), json!(client.id));
    claims.insert("azp".into(), json!(client.id));
    claims.insert("iat".into(), json!(now));
    claims.insert("exp".into(), json!(expires_at));
    claims.insert("jti".into(), json!(jti));
    if !scopes.is_empty() {
        claims.insert("scope".into(), json!(scopes.join(" ")));
    }
    if let Some(sid) = sid {
        claims.insert("sid".into(), json!(sid));
    }
    if let Some(jkt) = grant.dpop_jkt {
        claims.insert("cnf".into(), json!({ "jkt": jkt }));
    }
    // How the person signed in, for a resource server that asks for more (RFC 9470).
    if let Subject::Person { auth_time, methods, .. } | Subject::Delegated { auth_time, methods, .. } = grant.subject {
        claims.insert("auth_time".into(), json!(auth_time.timestamp()));
        if !methods.is_empty() {
            claims.insert("acr".into(), json!(Level::of_methods(methods).acr()));
            claims.insert("amr".into(), json!(methods));
        }
    }
    match grant.subject {
        Subject::AccountSecret { account_id, .. } => {
            claims.insert("account_id".into(), json!(account_id));
        }
        Subject::Person { user, .. } => {
            let roles = standing.roles(&person_roles(context, user).await?);
            let (realm_roles, client_roles) = role_maps(&roles);
            claims.insert("realm_resource_access".into(), json!({ "roles": realm_roles }));
            claims.insert("resource_access".into(), client_roles);
        }
        Subject::Impersonated { user, act, .. } => {
            let roles = standing.roles(&person_roles(context, user).await?);
            let (realm_roles, client_roles) = role_maps(&roles);
            claims.insert("realm_resource_access".into(), json!({ "roles": realm_roles }));
            claims.insert("resource_access".into(), client_roles);
            claims.insert("act".into(), act.clone());
        }
        Subject::Delegated { user, act, delegation_id, .. } => {
            let roles = standing.roles(&person_roles(context, user).await?);
            let (realm_roles, client_roles) = role_maps(&roles);
            claims.insert("realm_resource_access".into(), json!({ "roles": realm_roles }));
            claims.insert("resource_access".into(), client_roles);
            claims.insert("act".into(), act.clone());
            claims.insert("delegation_id".into(), json!(delegation_id));
        }
        Subject::Client => {
            let roles = client_grants(context, client).await?;
            let (realm_roles, client_roles) = role_maps(&roles);
            claims.insert(
                "client_resource_access".into(),
                json!({ "realm_roles": realm_roles, "client_roles": client_roles }),
            );
        }
    }
    for (name, value) in claims::of_grant(context, grant).await? {
        claims.entry(name).or_insert(value);
    }
    let token = sign(context, client, ACCESS_TOKEN_TYPE, &Value::Object(claims)).await?;
    let expires_at = DateTime::from_timestamp(expires_at, 0).unwrap_or_default();
    Ok(Issued { token, jti, expires_at, lifetime_seconds: lifetime, scopes })
}

/// Whether the access token was revoked: from this host's set of revocations when it is complete
/// (loaded once, then kept by change notifications), from the database otherwise.
async fn is_revoked(context: &Context, jti: &str) -> Result<bool, Error> {
    if let Some(revoked) = context.caches.is_revoked(jti) {
        return Ok(revoked);
    }
    if context.caches.is_synced() {
        let now = context.clock.now();
        let live = sessions::live_revocations(context.store.pool(), now).await?;
        let revoked = live.iter().any(|(id, _)| id == jti);
        context.caches.keep_revocations(live);
        return Ok(revoked);
    }
    Ok(sessions::is_access_revoked(context.store.pool(), jti).await?)
}

/// The client, from this host's cache when it holds it.
pub async fn find_client(context: &Context, realm_id: &str, client_id: &str) -> Result<Option<Arc<Client>>, Error> {
    if let Some(client) = context.caches.client(realm_id, client_id) {
        return Ok(Some(client));
    }
    let found = client_store::find(context.store.pool(), realm_id, client_id).await?.map(Arc::new);
    if let Some(client) = &found {
        context.caches.keep_client(client.clone());
    }
    Ok(found)
}

/// The roles granted to the client itself, from this host's cache when it holds them.
async fn client_grants(context: &Context, client: &Client) -> Result<Arc<Vec<Role>>, Error> {
    if let Some(roles) = context.caches.client_roles(&client.realm_id, &client.id) {
        return Ok(roles);
    }
    let roles = Arc::new(role_store::of_client(context.store.pool(), &client.realm_id, &client.id).await?);
    context.caches.keep_client_roles(&client.realm_id, &client.id, roles.clone());
    Ok(roles)
}

/// The roles a person holds directly and through groups, from this host's cache when it holds them.
async fn person_roles(context: &Context, user: &User) -> Result<Arc<Vec<Role>>, Error> {
    if let Some(roles) = context.caches.user_roles(&user.realm_id, &user.id) {
        return Ok(roles);
    }
    let roles = Arc::new(role_store::effective_of_user(context.store.pool(), &user.id).await?);
    context.caches.keep_user_roles(&user.realm_id, &user.id, roles.clone());
    Ok(roles)
}

/// Role names split into realm roles and, per owning client, client roles:
/// `(["admin"], {"orders": {"roles": ["reader"]}})`.
pub fn role_maps(roles: &[Role]) -> (Vec<String>, Value) {
    let mut realm = Vec::new();
    let mut clients: Map<String, Value> = Map::new();
    for role in roles {
        match &role.client_id {
            None => realm.push(role.name.clone()),
            Some(client) => {
                let entry = clients.entry(client.clone()).or_insert_with(|| json!({ "roles": [] }));
                if let Some(list) = entry.get_mut("roles").and_then(Value::as_array_mut) {
                    list.push(json!(role.name));
                }
            }
        }
    }
    (realm, Value::Object(clients))
}

/// Signs an OpenID Connect ID token for a person (`openid` was requested).
/// What an ID token says of a person's sign-in.
#[derive(Debug, Clone, Copy)]
pub struct IdToken<'a> {
    pub client: &'a Client,
    pub user: &'a User,
    pub session_id: &'a str,
    /// When the person typed their credentials.
    pub auth_time: DateTime<Utc>,
    pub scopes: &'a [String],
    /// How they authenticated (`amr`, RFC 8176 where a value is listed there).
    pub methods: &'a [String],
    /// The authorization request's `nonce`, returned unchanged.
    pub nonce: Option<&'a str>,
    /// The access token issued beside it, which `at_hash` binds.
    pub access_token: &'a str,
}

/// An OpenID Connect ID token (OIDC Core §2) for the client.
pub async fn id_token(context: &Context, token: &IdToken<'_>) -> Result<String, Error> {
    let IdToken { client, user, session_id, auth_time, scopes, methods, nonce, access_token } = *token;
    let now = context.clock.now().timestamp();
    let mut claims = json!({
        "iss": issuer(context, &client.realm_id),
        "sub": user.id,
        "aud": client.id,
        "azp": client.id,
        "iat": now,
        "exp": now + i64::from(context.settings.access_token_seconds),
        "auth_time": auth_time.timestamp(),
        "sid": session_id,
        "at_hash": at_hash(access_token),
    });
    if let Some(object) = claims.as_object_mut() {
        if !methods.is_empty() {
            object.insert("amr".into(), json!(methods));
            object.insert("acr".into(), json!(Level::of_methods(methods).acr()));
        }
        if let Some(nonce) = nonce {
            object.insert("nonce".into(), json!(nonce));
        }
        object.extend(person_claims(user, scopes));
        for (name, value) in claims::mapped(context, client, user, claims::Token::Id).await? {
            object.entry(name).or_insert(value);
        }
    }
    sign(context, client, "JWT", &claims).await
}

/// OIDC Core §3.1.3.6: the left half of the SHA-256 of the access token, base64url. Both signing
/// algorithms (ES256, RS256) hash with SHA-256.
fn at_hash(access_token: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(access_token.as_bytes());
    URL_SAFE_NO_PAD.encode(&digest[..digest.len() / 2])
}

/// The standard claims about a person that the granted scopes release (OIDC Core §5.4).
pub fn person_claims(user: &User, scopes: &[String]) -> Map<String, Value> {
    let mut claims = Map::new();
    if scopes.iter().any(|s| s == "profile") {
        claims.insert("preferred_username".into(), json!(user.username));
        if let Some(given) = &user.first_name {
            claims.insert("given_name".into(), json!(given));
        }
        if let Some(family) = &user.last_name {
            claims.insert("family_name".into(), json!(family));
        }
        let name: Vec<&str> = [&user.first_name, &user.last_name].into_iter().flatten().map(String::as_str).collect();
        if !name.is_empty() {
            claims.insert("name".into(), json!(name.join(" ")));
        }
    }
    if scopes.iter().any(|s| s == "email")
        && let Some(email) = &user.email
    {
        claims.insert("email".into(), json!(email));
        claims.insert("email_verified".into(), json!(user.email_confirmed));
    }
    claims
}

/// A new refresh token value for the stored token `id`: `cstl_rt_<id>.<256 random bits>`. The id
/// finds the row; the keyed hash of the whole value, compared in constant time, proves it.
pub fn new_refresh_token(id: &str) -> String {
    format!("{REFRESH_TOKEN_PREFIX}{id}.{}", generate_secret(""))
}

/// The stored token id a refresh token value names, if it has the form of one.
pub fn refresh_token_id(value: &str) -> Option<&str> {
    let (id, secret) = value.strip_prefix(REFRESH_TOKEN_PREFIX)?.split_once('.')?;
    (uuid::Uuid::parse_str(id).is_ok() && !secret.is_empty()).then_some(id)
}

/// An access token found active, with its claims.
#[derive(Debug, Clone)]
pub struct ActiveToken {
    pub claims: Arc<Map<String, Value>>,
    pub realm_id: RealmId,
    pub client_id: ClientId,
    pub jti: String,
    pub subject: String,
    pub session_id: Option<SessionId>,
    /// The live session the token names, with its person (read in the same query).
    pub person: Option<(sessions::Session, User)>,
    /// The issuance to the millisecond (from the `jti`, else the `iat` second), which revocation
    /// instants are compared with.
    pub issued_at: DateTime<Utc>,
    /// The `exp` claim.
    pub expires_at: DateTime<Utc>,
}

impl ActiveToken {
    pub fn scopes(&self) -> Vec<String> {
        self.claims
            .get("scope")
            .and_then(Value::as_str)
            .map(|s| s.split(' ').map(str::to_owned).collect())
            .unwrap_or_default()
    }
}

/// The key that may have signed `token`, a JWT of type `typ`: a key of the realm, not revoked, of
/// the algorithm the header names. `None` for anything else.
async fn realm_verifier(
    context: &Context,
    realm_id: &str,
    token: &str,
    typ: &str,
) -> Result<Option<Arc<Verifier>>, Error> {
    let Ok(header) = jsonwebtoken::decode_header(token) else { return Ok(None) };
    if header.typ.as_deref() != Some(typ) {
        return Ok(None);
    }
    let Some(kid) = header.kid.as_deref() else { return Ok(None) };
    let Some(verifier) = keys::verifier(context, kid).await? else { return Ok(None) };
    let usable = verifier.realm_id == realm_id
        && verifier.status != crate::store::signing_keys::KeyStatus::Revoked
        && header.alg == verifier.algorithm;
    Ok(usable.then_some(verifier))
}

/// What an ID token the service issued says of its sign-in, read from an `id_token_hint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdTokenHint {
    /// The client it was issued to.
    pub client_id: ClientId,
    pub subject: String,
    /// The client session it was issued in.
    pub session_id: Option<SessionId>,
}

/// An ID token of the realm used as a hint (OIDC Core §3.1.2.1, RP-Initiated Logout §2): signed by
/// a key of the realm that is not revoked and issued by the realm. Its expiry does not matter; a
/// hint is not a credential. `None` for anything else.
pub async fn id_token_hint(context: &Context, realm_id: &str, token: &str) -> Result<Option<IdTokenHint>, Error> {
    let Some(verifier) = realm_verifier(context, realm_id, token, "JWT").await? else { return Ok(None) };
    let mut validation = jsonwebtoken::Validation::new(verifier.algorithm);
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.set_issuer(&[issuer(context, realm_id)]);
    validation.set_required_spec_claims(&["iss", "sub", "aud"]);
    let Ok(data) = jsonwebtoken::decode::<Map<String, Value>>(token, &verifier.key, &validation) else {
        return Ok(None);
    };
    let claims = data.claims;
    let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
    let (Some(subject), Some(audience)) = (text("sub"), text("aud")) else { return Ok(None) };
    // An ID token names its client as the audience, which a client's own key signs for alone.
    if !verifier.signs_for(&audience) {
        return Ok(None);
    }
    Ok(Some(IdTokenHint {
        client_id: ClientId::known(audience),
        subject,
        session_id: text("sid").map(SessionId::known),
    }))
}

/// The access token, if it is active in `realm_id`: a well-formed `at+jwt` signed by a key of the
/// realm that is not revoked, issued by the realm, unexpired by the service's clock, not revoked,
/// of a live session of an Active person when it has one (of an Active person when it impersonates
/// one) who is not under a Full suspension at the client, and of a client still Active whose
/// tokens of that time were not revoked. `None` for anything else; only a database failure is an error.
pub async fn active_access_token(context: &Context, realm_id: &str, token: &str) -> Result<Option<ActiveToken>, Error> {
    let Some(verifier) = realm_verifier(context, realm_id, token, ACCESS_TOKEN_TYPE).await? else { return Ok(None) };
    let claims = match context.caches.verified_tokens.get(token) {
        Some(claims) => claims,
        None => {
            let mut validation = jsonwebtoken::Validation::new(verifier.algorithm);
            validation.validate_exp = false;
            validation.validate_nbf = false;
            validation.validate_aud = false;
            validation.set_issuer(&[issuer(context, realm_id)]);
            validation.set_required_spec_claims(&["exp", "iat", "iss", "sub", "jti"]);
            let Ok(data) = jsonwebtoken::decode::<Map<String, Value>>(token, &verifier.key, &validation) else {
                return Ok(None);
            };
            let claims = Arc::new(data.claims);
            if let Some(expires_at) =
                claims.get("exp").and_then(Value::as_i64).and_then(|s| DateTime::from_timestamp(s, 0))
            {
                context.caches.verified_tokens.keep(token, claims.clone(), expires_at);
            }
            claims
        }
    };
    let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
    let instant = |name: &str| claims.get(name).and_then(Value::as_i64).and_then(|s| DateTime::from_timestamp(s, 0));
    let (Some(jti), Some(subject), Some(client_id), Some(issued_at), Some(expires_at)) =
        (text("jti"), text("sub"), text("client_id"), instant("iat"), instant("exp"))
    else {
        return Ok(None);
    };
    let issued_at = guid_instant(&jti).unwrap_or(issued_at);
    let now = context.clock.now();
    if expires_at <= now || !verifier.signs_for(&client_id) {
        return Ok(None);
    }
    if is_revoked(context, &jti).await? {
        return Ok(None);
    }
    let session_id = text("sid");
    let mut person = None;
    if let Some(sid) = &session_id {
        let found = context.session_reads.find_with_person(sid).await?;
        let live = found.filter(|(s, u)| {
            s.realm_id == realm_id && s.is_live(now) && u.id == subject && u.status == UserStatus::Active
        });
        let Some(found) = live else { return Ok(None) };
        person = Some(found);
    } else if claims.contains_key("act") {
        // An impersonation has no session: the person it signs in as is read at every check, so a
        // person disabled or deleted since takes the token with them, on every host at once.
        let found = user_store::find(context.store.pool(), realm_id, &subject).await?;
        if !found.is_some_and(|user| user.status == UserStatus::Active) {
            return Ok(None);
        }
    }
    if let Some(grant) = claims.get("delegation_id") {
        let live = match grant.as_str() {
            Some(grant) => delegation::is_live(context, realm_id, grant, now).await?,
            None => false,
        };
        if !live {
            return Ok(None);
        }
    }
    // A person's token goes inactive the moment a Full suspension of them at its client starts.
    if (session_id.is_some() || claims.contains_key("act"))
        && suspensions::refuses(context, realm_id, &client_id, &subject, now).await?
    {
        return Ok(None);
    }
    let client = find_client(context, realm_id, &client_id).await?;
    let client_good = client.is_some_and(|c| c.status == Status::Active && !c.revoked_token(issued_at));
    if !client_good {
        return Ok(None);
    }
    Ok(Some(ActiveToken {
        realm_id: RealmId::known(realm_id),
        client_id: ClientId::known(client_id),
        jti,
        subject,
        session_id: session_id.map(SessionId::known),
        person,
        issued_at,
        expires_at,
        claims,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refresh_token_values_carry_their_id_and_only_well_formed_ones_name_one() {
        let id = crate::kernel::ids::new_guid();
        let value = new_refresh_token(&id);
        assert!(value.starts_with("cstl_rt_"));
        assert_eq!(refresh_token_id(&value), Some(id.as_str()));
        assert_ne!(value, new_refresh_token(&id), "the secret part is random");
        for malformed in
            ["", "cstl_rt_", "cstl_rt_abc.def", &format!("cstl_rt_{id}."), &format!("x_{id}.abc"), "cstl_rt_no-dot"]
        {
            assert_eq!(refresh_token_id(malformed), None, "{malformed}");
        }
    }
}

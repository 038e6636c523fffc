//! Passkeys: WebAuthn credentials a person registers (discoverable, user verification required,
//! attestation `none`) and signs in with, alone or after typing their name. The relying party is
//! the service's public host, and pages of the service's public origin alone may use them.
//!
//! A challenge is the service's own: a random nonce, when it expires (five minutes on), and a
//! keyed tag binding both to what it was given for (a sign-in or a registration) and to whom (the
//! browser's form token on a page, the person on the account API). Another browser or another
//! purpose cannot use it, and it is accepted once: its nonce is recorded when it is answered.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{AuthenticatorView, By, announce, checked_name, refused};
use crate::kernel::crypto::constant_time_eq;
use crate::kernel::ids::AuthenticatorId;
use crate::kernel::validate::Rule;
use crate::kernel::webauthn::{self, Algorithm, Flags, RelyingParty};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::authenticators::{self as store, Authenticator, AuthenticatorKind};
use crate::store::events::EventType;
use crate::store::realms::Realm;
use crate::store::users::User;

/// How long a challenge is good for: the `timeout` the options give the browser.
pub const CHALLENGE_SECONDS: i64 = 300;
/// Passkeys a person may keep at once.
pub const MAX_PASSKEYS: usize = 20;
const NONCE_BYTES: usize = 16;
const TAG_BYTES: usize = 16;

/// What a challenge is given for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    SignIn,
    Registration,
}

impl Purpose {
    fn as_str(self) -> &'static str {
        match self {
            Self::SignIn => "sign-in",
            Self::Registration => "registration",
        }
    }
}

/// The relying party of this deployment: its public host and origin.
pub struct Party {
    pub id: String,
    pub origin: String,
}

impl Party {
    pub fn of(context: &Context) -> Self {
        let url = url::Url::parse(&context.public_url).ok();
        let id = url.as_ref().and_then(|url| url.host_str().map(str::to_owned)).unwrap_or_default();
        let origin = url.map(|url| url.origin().ascii_serialization()).unwrap_or_default();
        Self { id, origin }
    }

    fn relying_party(&self) -> RelyingParty<'_> {
        RelyingParty { id: &self.id, origin: &self.origin }
    }
}

/// A new challenge for `purpose`, bound to `binding`, in base64url.
pub fn challenge(context: &Context, purpose: Purpose, binding: &str, now: DateTime<Utc>) -> String {
    let mut bytes = [0u8; NONCE_BYTES];
    rand::RngCore::fill_bytes(&mut rand::rng(), &mut bytes);
    let expires = (now + TimeDelta::seconds(CHALLENGE_SECONDS)).timestamp();
    let mut challenge = bytes.to_vec();
    challenge.extend_from_slice(&expires.to_be_bytes());
    challenge.extend_from_slice(&tag(context, purpose, binding, &bytes, expires));
    URL_SAFE_NO_PAD.encode(challenge)
}

fn tag(context: &Context, purpose: Purpose, binding: &str, nonce: &[u8], expires: i64) -> Vec<u8> {
    let text = format!("passkey challenge:{}:{binding}:{}:{expires}", purpose.as_str(), hex::encode(nonce));
    hex::decode(&context.hasher.hash(&text)[..2 * TAG_BYTES]).unwrap_or_default()
}

/// A challenge that came back: its nonce and when it expires, if the service gave it for this
/// purpose and binding and it has not expired.
#[derive(Debug, Clone)]
pub struct Answered {
    pub nonce: String,
    pub expires_at: DateTime<Utc>,
}

fn answered(context: &Context, purpose: Purpose, binding: &str, bytes: &[u8], now: DateTime<Utc>) -> Option<Answered> {
    if bytes.len() != NONCE_BYTES + 8 + TAG_BYTES {
        return None;
    }
    let (nonce, rest) = bytes.split_at(NONCE_BYTES);
    let (expires, presented) = rest.split_at(8);
    let expires = i64::from_be_bytes(expires.try_into().ok()?);
    let expected = tag(context, purpose, binding, nonce, expires);
    let expires_at = DateTime::from_timestamp(expires, 0)?;
    (constant_time_eq(&expected, presented) && expires_at > now)
        .then(|| Answered { nonce: hex::encode(nonce), expires_at })
}

/// Checks a challenge inside a credential: `true` when it is good, the nonce kept in `into`.
pub fn challenge_checker<'a>(
    context: &'a Context,
    purpose: Purpose,
    binding: &'a str,
    now: DateTime<Utc>,
    into: &'a mut Option<Answered>,
) -> impl FnOnce(&[u8]) -> bool + 'a {
    move |bytes| {
        *into = answered(context, purpose, binding, bytes, now);
        into.is_some()
    }
}

/// The credential a browser's `navigator.credentials` answered, as `PublicKeyCredential.toJSON()`
/// writes it (binary fields in base64url).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Credential {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub response: Response,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    #[serde(rename = "clientDataJSON")]
    pub client_data_json: String,
    pub attestation_object: Option<String>,
    pub authenticator_data: Option<String>,
    pub signature: Option<String>,
    pub user_handle: Option<String>,
    #[serde(default)]
    pub transports: Vec<String>,
}

impl Credential {
    /// Reads the JSON a page or a client posted.
    pub fn read(text: &str) -> Option<Self> {
        let credential: Self = serde_json::from_str(text).ok()?;
        (credential.kind == "public-key" && !credential.id.is_empty() && credential.id.len() <= 1400)
            .then_some(credential)
    }
}

/// Decodes a base64url field (padding tolerated).
pub fn decoded(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(text.trim_end_matches('=')).ok()
}

/// What is kept of a passkey besides its id and counter.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Kept {
    /// The COSE algorithm.
    pub alg: i64,
    /// The COSE public key, base64url.
    pub public_key: String,
    pub aaguid: String,
    pub backup_eligible: bool,
    pub backed_up: bool,
    pub format: String,
    #[serde(default)]
    pub transports: Vec<String>,
}

impl Kept {
    pub fn of(authenticator: &Authenticator) -> Option<Self> {
        serde_json::from_str(&authenticator.data).ok()
    }

    pub fn public_key(&self) -> Option<webauthn::PublicKey> {
        webauthn::PublicKey::from_cose(&decoded(&self.public_key)?).ok()
    }

    /// The methods (`amr`) of a sign-in with it: a passkey that syncs is a software key.
    pub fn methods(&self) -> &'static [&'static str] {
        if self.backup_eligible { &["swk", "mfa"] } else { &["hwk", "mfa"] }
    }

    /// The flags of a later assertion: backed up or not now.
    pub fn with(&self, flags: Flags) -> Self {
        Self { backed_up: flags.backed_up, ..self.clone() }
    }
}

/// The person's user handle: their id, which says nothing about them.
pub fn user_handle(user: &User) -> String {
    URL_SAFE_NO_PAD.encode(user.id.as_str())
}

/// The options of `navigator.credentials.create()` for the person, bound to `binding`: their
/// passkeys already registered are excluded, so one authenticator is not registered twice.
pub async fn registration_options(
    context: &Context,
    realm: &Realm,
    user: &User,
    binding: &str,
) -> Result<Value, Error> {
    let existing = store::of_user(context.store.pool(), &user.id).await?;
    let excluded: Vec<Value> = existing
        .iter()
        .filter(|a| a.kind == AuthenticatorKind::Passkey)
        .filter_map(|a| a.credential_id.as_ref())
        .map(|id| json!({ "type": "public-key", "id": id }))
        .collect();
    let names: Vec<&str> = [&user.first_name, &user.last_name].into_iter().flatten().map(String::as_str).collect();
    let display = if names.is_empty() { user.username.clone() } else { names.join(" ") };
    let person = (user.id.as_str(), user.username.as_str(), display.as_str());
    Ok(creation_options(context, realm, person, binding, excluded))
}

/// The options of `navigator.credentials.create()` for a person who has no passkey yet (a first
/// one, added as their sign-in asks it), bound to `binding`.
pub fn first_options(context: &Context, realm: &Realm, user: &User, binding: &str) -> Value {
    let person = (user.id.as_str(), user.username.as_str(), user.username.as_str());
    creation_options(context, realm, person, binding, Vec::new())
}

/// The options of `navigator.credentials.create()` for a sign-up's account, whose id is
/// `user_id`; the page's script names it as the person types their username.
pub fn sign_up_options(context: &Context, realm: &Realm, user_id: &str, binding: &str) -> Value {
    creation_options(context, realm, (user_id, "", ""), binding, Vec::new())
}

/// The options for the account `(id, name, display name)`, bound to `binding`.
fn creation_options(
    context: &Context,
    realm: &Realm,
    (id, name, display): (&str, &str, &str),
    binding: &str,
    excluded: Vec<Value>,
) -> Value {
    let party = Party::of(context);
    let now = context.clock.now();
    let realm_name = if realm.display_name.is_empty() { realm.id.as_str() } else { realm.display_name.as_str() };
    let algorithms: Vec<Value> =
        Algorithm::ALL.iter().map(|a| json!({ "type": "public-key", "alg": a.identifier() })).collect();
    json!({ "publicKey": {
        "rp": { "id": party.id, "name": realm_name },
        "user": { "id": URL_SAFE_NO_PAD.encode(id), "name": name, "displayName": display },
        "challenge": challenge(context, Purpose::Registration, binding, now),
        "pubKeyCredParams": algorithms,
        "timeout": CHALLENGE_SECONDS * 1000,
        "attestation": "none",
        "authenticatorSelection": {
            "residentKey": "required",
            "requireResidentKey": true,
            "userVerification": "required",
        },
        "excludeCredentials": excluded,
    } })
}

/// Keeps the passkey a browser created from options bound to `binding`, named `name` ("Passkey"
/// when not given), with its `authenticator_added` event. Answers it, and the methods (`amr`) of
/// a sign-in with it.
pub async fn register(
    context: &Context,
    realm: &Realm,
    user: &User,
    binding: &str,
    credential: &str,
    name: Option<&str>,
) -> Result<(AuthenticatorView, &'static [&'static str]), Error> {
    let now = context.clock.now();
    let made = verified(context, binding, credential, name).await?;
    let authenticator = made.authenticator(realm, user, now);
    let mut tx = context.store.begin().await?;
    let existing = store::of_user(&mut *tx, &user.id).await?;
    if existing.iter().filter(|a| a.kind == AuthenticatorKind::Passkey).count() >= MAX_PASSKEYS {
        return Err(Error::Conflict(format!("a person may keep at most {MAX_PASSKEYS} passkeys")));
    }
    keep(&mut tx, realm, user, &authenticator, now).await?;
    tx.commit().await?;
    Ok((AuthenticatorView::of(&authenticator, None), made.methods()))
}

/// Stores a passkey of the person in `tx`, with its `authenticator_added` event.
pub async fn keep(
    tx: &mut crate::store::Transaction,
    realm: &Realm,
    user: &User,
    authenticator: &Authenticator,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    if !store::insert(&mut **tx, authenticator).await? {
        return Err(refused("credential", Rule::Duplicate, "this passkey is registered already"));
    }
    announce(tx, realm, user, authenticator, EventType::AuthenticatorAdded, By::Owner, now).await
}

/// A passkey a browser created and the service verified, not kept yet: what a sign-up with a
/// passkey holds until its address is confirmed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Verified {
    pub credential_id: String,
    pub counter: i64,
    pub name: String,
    pub kept: Kept,
}

impl Verified {
    /// The passkey as the person's authenticator.
    pub fn authenticator(&self, realm: &Realm, user: &User, now: DateTime<Utc>) -> Authenticator {
        Authenticator {
            id: AuthenticatorId::fresh(),
            realm_id: realm.id.clone(),
            user_id: user.id.clone(),
            kind: AuthenticatorKind::Passkey,
            name: self.name.clone(),
            secret_sealed: None,
            data: serde_json::to_string(&self.kept).unwrap_or_else(|_| unreachable!("a passkey's data serialises")),
            counter: Some(self.counter),
            credential_id: Some(self.credential_id.clone()),
            created_at: now,
            last_used_at: None,
        }
    }

    /// The methods (`amr`) of a sign-in with it.
    pub fn methods(&self) -> &'static [&'static str] {
        self.kept.methods()
    }
}

/// Verifies the passkey a browser created from options bound to `binding`, and uses up their
/// challenge.
pub async fn verified(
    context: &Context,
    binding: &str,
    credential: &str,
    name: Option<&str>,
) -> Result<Verified, Error> {
    let now = context.clock.now();
    let name = checked_name(name, "Passkey")?;
    let unreadable = || refused("credential", Rule::Format, "the credential is not one a browser creates");
    let credential = Credential::read(credential).ok_or_else(unreadable)?;
    let client_data = decoded(&credential.response.client_data_json).ok_or_else(unreadable)?;
    let object = credential.response.attestation_object.as_deref().and_then(decoded).ok_or_else(unreadable)?;
    let party = Party::of(context);
    let mut challenge = None;
    let checker = challenge_checker(context, Purpose::Registration, binding, now, &mut challenge);
    let created = webauthn::registration(party.relying_party(), &client_data, &object, checker)
        .map_err(|why| refused("credential", Rule::Format, &why.to_string()))?;
    let challenge = challenge.ok_or_else(unreadable)?;
    let pool = context.store.pool();
    if !crate::store::assertions::record_challenge_once(pool, &challenge.nonce, challenge.expires_at).await? {
        return Err(refused("credential", Rule::Duplicate, "this challenge was answered already: begin again"));
    }
    let kept = Kept {
        alg: created.public_key.algorithm.identifier(),
        public_key: URL_SAFE_NO_PAD.encode(&created.public_key.cose),
        aaguid: hex::encode(created.aaguid),
        backup_eligible: created.flags.backup_eligible,
        backed_up: created.flags.backed_up,
        format: created.format,
        transports: credential.response.transports.into_iter().take(8).filter(|t| t.len() <= 32).collect(),
    };
    let credential_id = URL_SAFE_NO_PAD.encode(&created.id);
    Ok(Verified { credential_id, counter: i64::from(created.counter), name, kept })
}

/// The credential ids a browser may offer for the person who signs in as `login` (a username or
/// an e-mail address): their passkeys. A name that names no one, or no one with a passkey, gets
/// one id made from the name with the deployment key, the same each time, so the answer does not
/// tell which names have passkeys.
pub async fn for_name(context: &Context, realm: &Realm, login: &str) -> Result<Vec<String>, Error> {
    let pool = context.store.pool();
    let mut ids = Vec::new();
    if let Some(user) = crate::store::users::find_by_login(pool, &realm.id, login.trim()).await? {
        ids = store::of_user(pool, &user.id)
            .await?
            .into_iter()
            .filter(|a| a.kind == AuthenticatorKind::Passkey)
            .filter_map(|a| a.credential_id)
            .collect();
    }
    if ids.is_empty() {
        let made = context.hasher.hash(&format!("passkey decoy:{}:{}", realm.id, login.trim().to_lowercase()));
        ids.push(URL_SAFE_NO_PAD.encode(hex::decode(made).unwrap_or_default()));
    }
    Ok(ids)
}

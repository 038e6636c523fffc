//! Realms: created, changed and deleted here, each change checked (the platform realm stays
//! active, joined by invitation only, and is never deleted; registration scopes exist), written,
//! trailed and announced.

use crate::kernel::clock::iso;
use crate::kernel::ids::{PLATFORM_REALM, RealmId};
use crate::kernel::validate::{Body, Rule, boolean, integer, list_of, one_of, text};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::realms::{self as realm_store, ClientRegistration, Realm, RealmSettings, SecondFactor};
use crate::store::trail::{Change, ChangeAction, Placed};
use serde::Serialize;
use std::sync::Arc;
use utoipa::ToSchema;

/// The registration scopes must be scopes the realm has.
async fn check_registration_scopes(context: &Context, realm: &Realm) -> Result<(), Error> {
    let scopes = &realm.settings.registration_scopes;
    super::scopes::check_exist(context, &realm.account_id, &realm.id, scopes, "registrationScopes").await
}

/// The realm `id`, from this host's cache when it holds it (kept there once read).
pub async fn find(context: &Context, id: &str) -> Result<Option<Arc<Realm>>, Error> {
    if let Some(realm) = context.caches.realm(id) {
        return Ok(Some(realm));
    }
    let found = realm_store::find(context.store.pool(), id).await?.map(Arc::new);
    if let Some(realm) = &found {
        context.caches.keep_realm(realm.clone());
    }
    Ok(found)
}

/// Creates `realm`; its id must be free.
pub async fn create(context: &Context, realm: Realm, by: Author<'_>) -> Result<Realm, Error> {
    check_registration_scopes(context, &realm).await?;
    let mut tx = context.store.begin().await?;
    if !realm_store::insert(&mut *tx, &realm).await? {
        return Err(Error::AlreadyExists("realm"));
    }
    changes::commit(
        context,
        by,
        tx,
        Change::of(ChangeAction::Create, realm.place(), 201).after(RealmView::from(&realm)),
    )
    .await?;
    Ok(realm)
}

/// Changes `before` into `realm`.
pub async fn update(context: &Context, before: &Realm, mut realm: Realm, by: Author<'_>) -> Result<Realm, Error> {
    if realm.id == PLATFORM_REALM && realm.status != Status::Active {
        return Err(Error::Conflict("the platform realm cannot be disabled".into()));
    }
    if realm.id == PLATFORM_REALM && realm.settings.self_sign_up {
        return Err(Error::Conflict("people join the platform realm by invitation, never by sign-up".into()));
    }
    if realm.settings.registration_scopes != before.settings.registration_scopes {
        check_registration_scopes(context, &realm).await?;
    }
    realm.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    realm_store::update(&mut *tx, &realm).await?;
    let change = Change::of(ChangeAction::Update, realm.place(), 200)
        .before(RealmView::from(before))
        .after(RealmView::from(&realm));
    changes::commit(context, by, tx, change).await?;
    Ok(realm)
}

/// Deletes `realm`, with its clients and people; never the platform realm.
pub async fn delete(context: &Context, realm: &Realm, by: Author<'_>) -> Result<(), Error> {
    if realm.id == PLATFORM_REALM {
        return Err(Error::Conflict("the platform realm cannot be deleted".into()));
    }
    let mut tx = context.store.begin().await?;
    realm_store::delete(&mut *tx, &realm.id).await?;
    changes::commit(
        context,
        by,
        tx,
        Change::of(ChangeAction::Delete, realm.place(), 200).before(RealmView::from(realm)),
    )
    .await
}

/// A realm as the admin API shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RealmView {
    pub id: String,
    pub display_name: String,
    pub status: Status,
    /// Failures from one unapproved address within an hour before it is locked out of an account (1–100, default 5).
    pub max_failed_attempts: i64,
    /// Minutes such a lock lasts (1–1440, default 15).
    pub lockout_duration_minutes: i64,
    /// Lockout Status: whether the realm lockout applies, new accounts included (default true).
    pub lockout_enabled: bool,
    /// Minimum password length (8–64, default 8).
    pub minimum_password_length: i64,
    /// Refuse passwords found in the breached-password list (default false).
    pub block_breached_passwords: bool,
    /// Whether the login page offers people to create their own account (default false); a new
    /// account raises `user_created`.
    pub self_sign_up: bool,
    /// Whether people signing up may create their account with a passkey and no password
    /// (default false); with self sign-up only.
    pub passkey_sign_up: bool,
    /// Who may register clients at the realm's registration endpoint (RFC 7591): Closed
    /// (default), Open, or InitialAccessToken.
    pub client_registration: ClientRegistration,
    /// The most scopes a self-registered client may be allowed (default none: only `openid`,
    /// `profile` and `email`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub registration_scopes: Vec<String>,
    /// Whether a `client_id` that is the https address of a client metadata document is taken
    /// (default false): the document is fetched and describes a public or key-holding client.
    pub client_id_metadata_documents: bool,
    /// The hosts such documents may be served from: host names, `*.domain` for any host under a
    /// domain, or `*` for any host (default none). `policies/metadata_documents.cedar` decides
    /// with them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub metadata_document_hosts: Vec<String>,
    /// "Let the AI advisor analyse this realm" (default false): with it, and an account plan that
    /// includes the advisor, the incident analyst reads the realm's attack incidents (their
    /// figures only, never addresses or names).
    pub ai_advisor: bool,
    /// Clients anyone may add within a minute: self-registrations and metadata-document clients
    /// together (1–10,000, default 60). Past it, 429 until the minute has passed.
    pub self_registered_clients_per_minute: i64,
    /// Such clients in all (1–1,000,000, default 10,000). Past it, 429 until some are removed.
    pub max_self_registered_clients: i64,
    /// When a sign-in asks for a second factor: Never; WhenEnrolled (default: of a person who
    /// enrolled an authenticator app, a passkey or a phone); Always (a person with none enrols an
    /// app or a passkey before the sign-in ends); PhishingResistant (a passkey, registered before
    /// the sign-in ends by a person without one). A client may ask more than its realm. At the
    /// platform realm, the rule of console sign-in.
    pub second_factor: SecondFactor,
    pub created_at: String,
    pub updated_at: String,
}

impl From<&Realm> for RealmView {
    fn from(realm: &Realm) -> Self {
        let s = &realm.settings;
        Self {
            id: realm.id.to_string(),
            display_name: realm.display_name.clone(),
            status: realm.status,
            max_failed_attempts: s.max_failed_attempts,
            lockout_duration_minutes: s.lockout_duration_minutes,
            lockout_enabled: s.lockout_enabled,
            minimum_password_length: s.minimum_password_length,
            block_breached_passwords: s.block_breached_passwords,
            self_sign_up: s.self_sign_up,
            passkey_sign_up: s.passkey_sign_up,
            client_registration: s.client_registration,
            registration_scopes: s.registration_scopes.clone(),
            client_id_metadata_documents: s.client_id_metadata_documents,
            metadata_document_hosts: s.metadata_document_hosts.clone(),
            ai_advisor: s.ai_advisor,
            self_registered_clients_per_minute: s.self_registered_clients_per_minute,
            max_self_registered_clients: s.max_self_registered_clients,
            second_factor: s.second_factor,
            created_at: iso(realm.created_at),
            updated_at: iso(realm.updated_at),
        }
    }
}

/// The body of a realm creation. An update takes the same fields but `id`, each optional;
/// omitted fields keep their value.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct RealmInput {
    /// 1–64 lowercase letters, digits, `-`, `_`; starts and ends with a letter or digit. Required at creation.
    #[schema(value_type = String, required = true)]
    pub(crate) id: Option<RealmId>,
    /// Up to 128 characters; defaults to the id.
    pub(crate) display_name: Option<String>,
    pub(crate) status: Option<Status>,
    pub(crate) max_failed_attempts: Option<i64>,
    pub(crate) lockout_duration_minutes: Option<i64>,
    pub(crate) lockout_enabled: Option<bool>,
    pub(crate) minimum_password_length: Option<i64>,
    pub(crate) block_breached_passwords: Option<bool>,
    pub(crate) self_sign_up: Option<bool>,
    pub(crate) passkey_sign_up: Option<bool>,
    pub(crate) client_registration: Option<ClientRegistration>,
    /// Scopes of the catalogue or the realm.
    pub(crate) registration_scopes: Option<Vec<String>>,
    pub(crate) client_id_metadata_documents: Option<bool>,
    /// Up to 100: host names, `*.domain`, or `*`.
    pub(crate) metadata_document_hosts: Option<Vec<String>>,
    pub(crate) ai_advisor: Option<bool>,
    pub(crate) self_registered_clients_per_minute: Option<i64>,
    pub(crate) max_self_registered_clients: Option<i64>,
    pub(crate) second_factor: Option<SecondFactor>,
}

impl RealmInput {
    /// The changeable fields `body` gives (not the id, which only a creation reads).
    pub(crate) fn read(body: &mut Body) -> Self {
        let bounded = |(lo, hi): (i64, i64)| integer(lo, hi);
        Self {
            id: None,
            display_name: body.optional("displayName", text(1, 128)),
            status: body.optional("status", one_of(Status::NAMES)),
            max_failed_attempts: body.optional("maxFailedAttempts", bounded(RealmSettings::MAX_FAILED_ATTEMPTS)),
            lockout_duration_minutes: body
                .optional("lockoutDurationMinutes", bounded(RealmSettings::LOCKOUT_DURATION_MINUTES)),
            lockout_enabled: body.optional("lockoutEnabled", boolean),
            minimum_password_length: body
                .optional("minimumPasswordLength", bounded(RealmSettings::MINIMUM_PASSWORD_LENGTH)),
            block_breached_passwords: body.optional("blockBreachedPasswords", boolean),
            self_sign_up: body.optional("selfSignUp", boolean),
            passkey_sign_up: body.optional("passkeySignUp", boolean),
            client_registration: body.optional("clientRegistration", one_of(ClientRegistration::NAMES)),
            registration_scopes: body
                .optional("registrationScopes", list_of(100, crate::directory::client_fields::scope_token)),
            client_id_metadata_documents: body.optional("clientIdMetadataDocuments", boolean),
            metadata_document_hosts: body.optional("metadataDocumentHosts", list_of(100, host_pattern)),
            ai_advisor: body.optional("aiAdvisor", boolean),
            self_registered_clients_per_minute: body
                .optional("selfRegisteredClientsPerMinute", bounded(RealmSettings::SELF_REGISTERED_CLIENTS_PER_MINUTE)),
            max_self_registered_clients: body
                .optional("maxSelfRegisteredClients", bounded(RealmSettings::MAX_SELF_REGISTERED_CLIENTS)),
            second_factor: body.optional("secondFactor", one_of(SecondFactor::NAMES)),
        }
    }

    /// Changes the fields given on `realm`.
    pub(crate) fn apply(self, realm: &mut Realm) {
        fn set<T>(field: &mut T, given: Option<T>) {
            if let Some(value) = given {
                *field = value;
            }
        }
        set(&mut realm.display_name, self.display_name);
        set(&mut realm.status, self.status);
        let s: &mut RealmSettings = &mut realm.settings;
        set(&mut s.max_failed_attempts, self.max_failed_attempts);
        set(&mut s.lockout_duration_minutes, self.lockout_duration_minutes);
        set(&mut s.lockout_enabled, self.lockout_enabled);
        set(&mut s.minimum_password_length, self.minimum_password_length);
        set(&mut s.block_breached_passwords, self.block_breached_passwords);
        set(&mut s.self_sign_up, self.self_sign_up);
        set(&mut s.passkey_sign_up, self.passkey_sign_up);
        set(&mut s.client_registration, self.client_registration);
        set(&mut s.registration_scopes, self.registration_scopes);
        set(&mut s.client_id_metadata_documents, self.client_id_metadata_documents);
        set(&mut s.metadata_document_hosts, self.metadata_document_hosts);
        set(&mut s.ai_advisor, self.ai_advisor);
        set(&mut s.self_registered_clients_per_minute, self.self_registered_clients_per_minute);
        set(&mut s.max_self_registered_clients, self.max_self_registered_clients);
        set(&mut s.second_factor, self.second_factor);
    }
}

/// The issuer of a realm's tokens: its address under the service's public one.
pub fn issuer(context: &Context, realm_id: &str) -> String {
    format!("{}/realms/{realm_id}", context.public_url)
}

/// A host a client metadata document may be served from: a lowercase host name, `*.` before a
/// domain, or `*`.
pub(crate) fn host_pattern(path: &str, value: &serde_json::Value) -> Result<String, crate::kernel::validate::Refusals> {
    let pattern = text(1, 255)(path, value)?;
    let name = pattern.strip_prefix("*.").unwrap_or(&pattern);
    let label = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && label.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if pattern == "*" || name.split('.').all(label) {
        return Ok(pattern);
    }
    Err(vec![crate::kernel::validate::Notification::new(
        path,
        Rule::Pattern,
        format!("{path} must be a lowercase host name, `*.` and a domain, or `*`"),
    )])
}

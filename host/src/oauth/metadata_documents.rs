//! Clients known by a metadata document (OAuth Client ID Metadata Documents, the registration the
//! MCP authorization specification prefers): the client's `client_id` is the https address of a
//! JSON document describing it, which the service fetches instead of taking a registration.
//!
//! A realm takes such clients only when its `clientIdMetadataDocuments` setting is on, and only
//! from the hosts its `metadataDocumentHosts` lists, as `policies/metadata_documents.cedar`
//! decides. The first authorization request naming a document fetches it, checks it and stores
//! the client it describes: an ordinary public (or key-holding) client of the realm marked
//! `MetadataDocument`, which administrators list and may disable. The stored copy is used as long
//! as the document's `Cache-Control` allows (an hour at most), then fetched again; a changed
//! document changes the client, in the audit trail. Such a client is a third party: each person
//! it signs in is asked for consent, it gets only the scopes the realm lets self-registered
//! clients have, and it reaches only resource servers that accept them.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::authz::Authorizer;
use crate::authz::admission::{AdmissionFacts, AdmissionVerdict, Refusal, ResourceFacts};
use crate::directory;
use crate::oauth::registration::{Asker, Metadata, OIDC_SCOPES, RegistrationError};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::clients::{self as client_store, Client, Registration};
use crate::store::realms::Realm;
use crate::store::resource_servers::ResourceServer;
use crate::store::trail::{Change, ChangeAction, Placed};

/// The largest metadata document read: a client with many keys publishes them at a `jwks_uri`.
pub const MAX_DOCUMENT_BYTES: usize = 5 * 1024;

/// Why a metadata document names no client the realm takes; shown to the person, since no
/// redirect URI can be trusted until the document is.
#[derive(Debug)]
pub enum DocumentError {
    Refused(String),
    /// The realm takes no more clients from anyone for now, or the host fetches as many documents
    /// as it may at once.
    Busy(crate::oauth::registration::Full),
    Failed(Error),
}

/// Metadata documents fetched at once by this host, whatever their sources: past it, a first use
/// is told to come back, so a flood of addresses cannot hold every outgoing connection.
pub const FETCHES_AT_ONCE: usize = crate::runtime::outbound::documents::ANONYMOUS_FETCHES_AT_ONCE;

impl From<Error> for DocumentError {
    fn from(error: Error) -> Self {
        Self::Failed(error)
    }
}

impl From<crate::store::Error> for DocumentError {
    fn from(error: crate::store::Error) -> Self {
        Self::Failed(error.into())
    }
}

/// Whether `client_id` names a client by its metadata document in `realm`: an https address, in a
/// realm that takes such clients.
pub fn names_document(realm: &Realm, client_id: &str) -> bool {
    realm.settings.client_id_metadata_documents && client_id.starts_with("https://")
}

/// Whether `client` may act in `realm` now: active, and when it is known by its metadata
/// document, in a realm that still takes such clients.
pub fn usable(realm: &Realm, client: &Client) -> bool {
    client.status == Status::Active
        && (client.registration != Registration::MetadataDocument || realm.settings.client_id_metadata_documents)
}

/// The host of a client's address, checked to be one a metadata document may be at: https, with
/// a path below the root, in its canonical form (no `.` or `..` segments, a lowercase host), and
/// no fragment, query, user or password.
fn host_of(client_id: &str) -> Result<String, String> {
    let refused = |why: &str| Err(format!("the client_id {client_id} {why}"));
    let Ok(url) = url::Url::parse(client_id) else { return refused("is not an address") };
    if url.scheme() != "https" {
        return refused("is not an https address");
    }
    if url.as_str() != client_id {
        return refused("is not in its canonical form (no dot segments, a lowercase host)");
    }
    if url.path() == "/" {
        return refused("has no path");
    }
    if url.fragment().is_some() || url.query().is_some() {
        return refused("has a query or a fragment");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return refused("names a user");
    }
    url.host_str().map(str::to_owned).ok_or_else(|| format!("the client_id {client_id} names no host"))
}

/// The scopes the realm lets self-registered clients have, with OpenID Connect's own.
fn allowed_scopes(realm: &Realm) -> Vec<String> {
    let own = realm.settings.registration_scopes.iter().filter(|s| !OIDC_SCOPES.contains(&s.as_str())).cloned();
    OIDC_SCOPES.iter().map(|s| (*s).to_owned()).chain(own).collect()
}

/// The policies' decision on the client at `client_id` asking `scopes` for `resource` in `realm`.
pub fn admission(
    authz: &Authorizer,
    realm: &Realm,
    client_id: &str,
    scopes: &[String],
    resource: Option<&ResourceServer>,
) -> Result<AdmissionVerdict, Error> {
    let host = host_of(client_id).unwrap_or_default();
    let facts = AdmissionFacts {
        realm_id: &realm.id,
        client_id,
        host: &host,
        listed_hosts: &realm.settings.metadata_document_hosts,
        scopes,
        allowed_scopes: &allowed_scopes(realm),
        resource: resource.map(|server| ResourceFacts {
            address: &server.address,
            accepts_self_registered: server.accepts_self_registered,
        }),
    };
    Ok(authz.decide_admission(&facts).map_err(anyhow::Error::new)?)
}

/// Makes the stored client of the metadata document at `client_id` current, when `realm` takes
/// such clients and the policies admit its host: stored at the first request, fetched again once
/// the stored copy is stale. A client an administrator disabled stays as it is.
pub async fn refresh(
    context: &Context,
    authz: &Authorizer,
    realm: &Realm,
    client_id: &str,
    asker: &Asker,
) -> Result<(), DocumentError> {
    if !names_document(realm, client_id) {
        return Ok(());
    }
    let host = host_of(client_id).map_err(DocumentError::Refused)?;
    if let AdmissionVerdict::Deny { refusal, .. } = admission(authz, realm, client_id, &[], None)? {
        let why = match refusal {
            Refusal::UnauthorizedClient => format!("this realm does not take clients from {host}"),
            Refusal::InvalidScope | Refusal::InvalidTarget => {
                format!("this realm does not take the client {client_id}")
            }
        };
        return Err(DocumentError::Refused(why));
    }
    let now = context.clock.now();
    let stored = client_store::find(context.store.pool(), &realm.id, client_id).await?;
    if let Some(stored) = &stored {
        if stored.registration != Registration::MetadataDocument {
            return Err(DocumentError::Refused(format!("the client {client_id} is not known by a metadata document")));
        }
        let fresh = stored.document_fresh_until.is_some_and(|until| now < until);
        if fresh || stored.status != Status::Active {
            return Ok(());
        }
    }
    if stored.is_none() {
        crate::oauth::registration::room_for_one_more(context, realm).await?.map_err(DocumentError::Busy)?;
    }
    let what = format!("the metadata document {client_id}");
    let Ok(_fetching) = context.outbound.anonymous_fetches.try_acquire() else {
        let why = "this service is reading as many metadata documents as it may at once".to_owned();
        return Err(DocumentError::Busy(crate::oauth::registration::Full { why, retry_after_seconds: 1 }));
    };
    let fetched = crate::runtime::outbound::documents::fetch(context, &what, client_id, MAX_DOCUMENT_BYTES)
        .await
        .map_err(DocumentError::Refused)?;
    let document: Value = serde_json::from_slice(&fetched.body)
        .map_err(|_| DocumentError::Refused(format!("{what} is not a JSON document")))?;
    let metadata = read(client_id, &document).map_err(|why| DocumentError::Refused(format!("{what}: {why}")))?;

    let mut client = match &stored {
        Some(stored) => stored.clone(),
        None => {
            let mut client = Client::new(&realm.id, client_id, metadata.auth_method.client_type(), now);
            client.registration = Registration::MetadataDocument;
            client
        }
    };
    client.client_type = metadata.auth_method.client_type();
    metadata.apply(realm, &mut client).map_err(|refused| match refused {
        RegistrationError::InvalidMetadata(why) | RegistrationError::InvalidRedirectUri(why) => {
            DocumentError::Refused(format!("{what}: {why}"))
        }
        RegistrationError::Failed(error) => DocumentError::Failed(error),
        RegistrationError::Full(full) => DocumentError::Busy(full),
        RegistrationError::Closed | RegistrationError::InvalidToken => {
            DocumentError::Refused(format!("{what} cannot be used"))
        }
    })?;
    client.document_fresh_until = Some(now + fetched.keep);
    store(context, realm, stored.as_ref(), client, asker, now).await
}

/// Writes the client a document described: a new client (signing with the realm's keys), or the
/// stored one changed (in the audit trail) or only kept fresh for longer.
async fn store(
    context: &Context,
    realm: &Realm,
    stored: Option<&Client>,
    mut client: Client,
    asker: &Asker,
    now: DateTime<Utc>,
) -> Result<(), DocumentError> {
    let author = crate::oauth::registration::author(realm, &client, asker);
    let mut tx = context.store.begin().await?;
    let change = match stored {
        None => {
            let describe = |client: &Client| crate::oauth::registration::described(context, realm, client);
            return match directory::clients::create(context, tx, client, author.as_author(), describe).await {
                // Another request stored it first.
                Ok(_) | Err(Error::AlreadyExists(_)) => Ok(()),
                Err(error) => Err(error.into()),
            };
        }
        Some(before) => {
            let same = Client {
                updated_at: before.updated_at,
                document_fresh_until: before.document_fresh_until,
                ..client.clone()
            };
            if same == *before {
                client_store::update(&mut *tx, &client).await?;
                tx.commit().await?;
                return Ok(());
            }
            client.updated_at = now;
            client_store::update(&mut *tx, &client).await?;
            Change::of(ChangeAction::Update, client.place(), 200)
                .before(crate::oauth::registration::described(context, realm, before))
                .after(crate::oauth::registration::described(context, realm, &client))
        }
    };
    crate::runtime::changes::commit(context, author.as_author(), tx, change).await?;
    Ok(())
}

/// Checks a fetched document (the metadata of RFC 7591 §2, with the rules for documents): its
/// `client_id` is the address it was fetched from; it names no secret, since anyone may read
/// it; the client authenticates with nothing (`none`, the default) or keys (`private_key_jwt`);
/// and its redirect URIs suit its `application_type`: https on a host other than loopback for
/// `web` (the default), or those of a native app (loopback http, https, a reverse-domain
/// scheme) for `native`.
fn read(address: &str, document: &Value) -> Result<Metadata, String> {
    let Some(object) = document.as_object() else { return Err("it is not a JSON object".into()) };
    if crate::kernel::validate::holds_nul(document) {
        return Err("it holds the character U+0000, which no client's metadata may".into());
    }
    if object.get("client_id").and_then(Value::as_str) != Some(address) {
        return Err("its client_id is not the address it was fetched from".into());
    }
    if object.contains_key("client_secret") || object.contains_key("client_secret_expires_at") {
        return Err("it names a client secret, which a public document cannot hold".into());
    }
    let mut object = object.clone();
    let method = object.entry("token_endpoint_auth_method").or_insert_with(|| Value::from("none"));
    if !matches!(method.as_str(), Some("none" | "private_key_jwt")) {
        return Err("token_endpoint_auth_method must be none or private_key_jwt: such a client holds no secret".into());
    }
    let application_type = match object.get("application_type") {
        None => "web",
        Some(Value::String(kind)) if kind == "web" || kind == "native" => kind.as_str(),
        Some(_) => return Err("application_type must be web or native".into()),
    }
    .to_owned();
    let mut metadata = Metadata::read(&Value::Object(object)).map_err(|refused| match refused {
        RegistrationError::InvalidMetadata(why) | RegistrationError::InvalidRedirectUri(why) => why,
        _ => "it cannot be read".to_owned(),
    })?;
    if application_type == "web" {
        for uri in &metadata.redirect_uris {
            let url = url::Url::parse(uri).map_err(|_| format!("{uri} is not an absolute URI"))?;
            if url.scheme() != "https" || crate::kernel::addresses::is_loopback(&url) {
                return Err(format!(
                    "{uri}: a web application's redirect URIs are https on a host other than loopback"
                ));
            }
        }
    }
    metadata.described.insert("application_type".into(), Value::String(application_type));
    Ok(metadata)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_client_id_is_a_canonical_https_address_with_a_path() {
        assert_eq!(host_of("https://agent.example/client.json").as_deref(), Ok("agent.example"));
        assert_eq!(host_of("https://agent.example:8443/a/b").as_deref(), Ok("agent.example"));
        for refused in [
            "http://agent.example/client.json",
            "https://agent.example",
            "https://agent.example/",
            "https://agent.example/a/../client.json",
            "https://Agent.example/client.json",
            "https://agent.example/client.json?v=1",
            "https://agent.example/client.json#x",
            "https://user@agent.example/client.json",
            "agent",
        ] {
            assert!(host_of(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn a_document_names_itself_holds_no_secret_and_suits_its_application_type() {
        let address = "https://agent.example/client.json";
        let web = json!({ "client_id": address, "redirect_uris": ["https://agent.example/cb"] });
        let metadata = read(address, &web).unwrap();
        assert_eq!(metadata.auth_method.as_str(), "none");
        assert_eq!(metadata.described.get("application_type"), Some(&json!("web")));

        let native = json!({ "client_id": address, "application_type": "native",
            "redirect_uris": ["http://127.0.0.1:33418/cb", "com.example.agent:/cb"] });
        assert!(read(address, &native).is_ok());

        let refusals = [
            (
                json!({ "client_id": "https://other.example/client.json", "redirect_uris": ["https://a.example/cb"] }),
                "client_id",
            ),
            (
                json!({ "client_id": address, "redirect_uris": ["https://a.example/cb"], "client_secret": "s" }),
                "secret",
            ),
            (
                json!({ "client_id": address, "redirect_uris": ["https://a.example/cb"],
                "token_endpoint_auth_method": "client_secret_basic" }),
                "none or private_key_jwt",
            ),
            (json!({ "client_id": address, "redirect_uris": ["http://127.0.0.1:9/cb"] }), "web application"),
            (
                json!({ "client_id": address, "redirect_uris": ["https://a.example/cb"], "application_type": "tv" }),
                "web or native",
            ),
            (json!({ "client_id": address }), "redirect_uris"),
            (json!([address]), "JSON object"),
        ];
        for (document, why) in refusals {
            let error = read(address, &document).expect_err(why);
            assert!(error.contains(why), "{error} should say {why}");
        }
    }
}

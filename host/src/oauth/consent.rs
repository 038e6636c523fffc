//! Consent: what a person allows a third-party client. A client that registered itself is not the
//! realm's own, so the realm cannot consent for the person: each sign-in through it asks the
//! person, naming the client's host, the scopes and the resource, unless an earlier consent for
//! the same client and resource covers every scope asked. A later request for more scopes (the
//! step-up an `insufficient_scope` answer leads to) asks only for those not yet allowed.
//! `prompt=consent` asks again for everything, of any client.
//!
//! People list and withdraw their consents themselves, and administrators do so for them; a
//! withdrawal ends the client's sessions of the person, whose refresh tokens then stop working.

use crate::kernel::clock::iso;
use crate::oauth::signin::browser::Authorization;
use crate::runtime::changes::Author;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::clients::Registration;
use crate::store::consents::{self, Consent};
use crate::store::realms::Realm;
use crate::store::scopes as scope_store;
use crate::store::trail::{Change, ChangeAction, Placed};
use crate::store::users::User;
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

/// What the consent page asks the person for this authorization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// Scopes asked and not yet allowed.
    pub missing: Vec<String>,
    /// Scopes asked that the person allowed earlier.
    pub allowed: Vec<String>,
    /// The resource server's address the tokens will carry as their audience.
    pub resource: Option<String>,
    /// Where the application is served from: the host its redirect URI names, or for a client
    /// known by its metadata document, the host of the document.
    pub host: String,
    /// The descriptions the realm gives its scopes, by name (the first of a name wins).
    pub descriptions: Vec<(String, String)>,
    /// Who is asked: the signed-in person's username.
    pub person: String,
}

impl Question {
    /// How the page names `scope`: the text it has for the standard ones (in the page's
    /// language), else the realm's description of it, else its name.
    pub fn shown(&self, scope: &str, standard: impl Fn(&str) -> Option<&'static str>) -> String {
        if let Some(text) = standard(scope) {
            return text.to_owned();
        }
        match self.descriptions.iter().find(|(name, _)| name == scope) {
            Some((_, description)) => format!("{description} ({scope})"),
            None => scope.to_owned(),
        }
    }
}

/// The question to put to the person before `authorization` is answered, or none when they need
/// not be asked: a realm's own client (unless `prompt=consent`), or a consent covering every scope.
pub async fn question(
    context: &Context,
    realm: &Realm,
    authorization: &Authorization,
    user: &User,
) -> Result<Option<Question>, Error> {
    let client = &authorization.client;
    if !client.third_party() && !authorization.prompt_consent {
        return Ok(None);
    }
    let resource = authorization.resource.clone().unwrap_or_default();
    let earlier = consents::find(context.store.pool(), &user.realm_id, &user.id, &client.id, &resource).await?;
    let covered = earlier.as_ref().is_some_and(|c| authorization.scopes.iter().all(|s| c.scopes.contains(s)));
    if covered && !authorization.prompt_consent {
        return Ok(None);
    }
    let earlier = earlier.map(|consent| consent.scopes).unwrap_or_default();
    let (allowed, missing): (Vec<String>, Vec<String>) =
        authorization.scopes.iter().cloned().partition(|scope| earlier.contains(scope));
    // A client known by its metadata document is named by the host of its address, which the
    // document was read from; any other by where it sends the person back.
    let host = match client.registration {
        Registration::MetadataDocument => host_of(&client.id),
        Registration::Admin | Registration::Dynamic => host_of(&authorization.redirect_uri),
    };
    let descriptions = scope_store::descriptions_in_realm(context.store.pool(), &realm.account_id, &realm.id).await?;
    Ok(Some(Question {
        missing,
        allowed,
        resource: authorization.resource.clone(),
        host,
        descriptions,
        person: user.username.clone(),
    }))
}

/// Where a client is served from, as the person knows it: the host of its metadata document's
/// address, else of its first redirect URI.
pub fn served_from(client: &crate::store::clients::Client) -> Option<String> {
    match client.registration {
        Registration::MetadataDocument => Some(host_of(&client.id)),
        Registration::Admin | Registration::Dynamic => client.redirect_uris.first().map(|uri| host_of(uri)),
    }
}

/// The host of a redirect URI, or for a native app's private-use scheme, the scheme.
fn host_of(uri: &str) -> String {
    match url::Url::parse(uri) {
        Ok(url) => url.host_str().map(str::to_owned).unwrap_or_else(|| format!("{}:", url.scheme())),
        Err(_) => uri.to_owned(),
    }
}

/// Records that the person allowed the authorization's scopes, added to what they allowed the
/// client for the same resource before.
pub async fn give(
    context: &Context,
    authorization: &Authorization,
    user: &User,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let client = &authorization.client;
    let resource = authorization.resource.clone().unwrap_or_default();
    let earlier = consents::find(context.store.pool(), &user.realm_id, &user.id, &client.id, &resource).await?;
    let created_at = earlier.as_ref().map_or(now, |consent| consent.created_at);
    let mut scopes = earlier.map(|consent| consent.scopes).unwrap_or_default();
    for scope in &authorization.scopes {
        if !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }
    let consent = Consent {
        realm_id: user.realm_id.clone(),
        user_id: user.id.clone(),
        client_id: client.id.clone(),
        resource,
        scopes,
        created_at,
        updated_at: now,
    };
    consents::save(context.store.writer(), &consent).await?;
    Ok(())
}

/// Every consent the person gave.
pub async fn of_person(context: &Context, user: &User) -> Result<Vec<Consent>, Error> {
    Ok(consents::of_user(context.store.pool(), &user.realm_id, &user.id).await?)
}

/// Withdraws the person's consents to the client and ends the client's sessions of them; `false`
/// when there was no consent. An administrator's withdrawal is recorded in the trail under
/// `author`; a person's own is not an administrative change.
pub async fn withdraw(
    context: &Context,
    user: &User,
    client_id: &str,
    author: Option<Author<'_>>,
) -> Result<bool, Error> {
    let pool = context.store.pool();
    let before = consents::of_user(pool, &user.realm_id, &user.id).await?;
    let Some(first) = before.iter().find(|consent| consent.client_id == client_id) else { return Ok(false) };
    let now = context.clock.now();
    let mut tx = context.store.begin().await?;
    consents::withdraw(&mut *tx, &user.realm_id, &user.id, client_id).await?;
    crate::store::sessions::end_at_client(&mut *tx, &user.realm_id, &user.id, client_id, "consent_withdrawn", now)
        .await?;
    match author {
        Some(author) => {
            let withdrawn: Vec<&Consent> = before.iter().filter(|consent| consent.client_id == client_id).collect();
            let details = serde_json::json!({
                "userId": user.id,
                "clientId": client_id,
                "consents": withdrawn.iter().map(|c| serde_json::json!({"resource": c.resource, "scopes": c.scopes})).collect::<Vec<_>>(),
            });
            let change = Change::of(ChangeAction::Delete, first.place(), 200).before(details);
            crate::runtime::changes::commit(context, author, tx, change).await?;
        }
        None => tx.commit().await?,
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_named_is_the_redirect_uris_or_a_native_apps_scheme() {
        assert_eq!(host_of("https://agent.example:8443/cb"), "agent.example");
        assert_eq!(host_of("http://127.0.0.1:33418/callback"), "127.0.0.1");
        assert_eq!(host_of("com.example.agent:/cb"), "com.example.agent:");
    }
}

/// What a person allowed a client for one resource server.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsentView {
    pub client_id: String,
    /// The resource server's address the tokens carry as their audience; absent for tokens
    /// without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl ConsentView {
    pub fn of(consent: &Consent) -> Self {
        Self {
            client_id: consent.client_id.to_string(),
            resource: (!consent.resource.is_empty()).then(|| consent.resource.clone()),
            scopes: consent.scopes.clone(),
            created_at: iso(consent.created_at),
            updated_at: iso(consent.updated_at),
        }
    }
}

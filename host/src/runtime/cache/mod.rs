//! Per-host caches of what nearly every request reads: the credential behind an API key, the realm
//! it addresses, and for the token service the client, its signing key, the roles granted to it or
//! held by a person, and the keys that verify tokens; for the login page, the identity providers a
//! client offers.
//!
//! Entries are dropped the moment a change commits: on this host directly, and on every other host
//! through the store's change notifications (PostgreSQL `NOTIFY`, sent by the committing
//! transaction). While notifications cannot be received the caches are bypassed, so a host never
//! answers from an entry it could not keep exact. SQLite is embedded: one host owns the file.

pub mod keys;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

use crate::kernel::ids::{AccountId, RealmId};
use crate::runtime::metrics::{CACHES, CacheLabels};
use crate::store::changes::Follower;
use crate::store::changes::Invalidation;
use crate::store::clients::Client;
use crate::store::delegation::DelegationGrant;
use crate::store::identity_providers::IdentityProvider;
use crate::store::realm_roles::Role;
use crate::store::realms::Realm;
use crate::store::secrets::Credential;
use crate::store::suspensions::Suspension;
use keys::{Jwks, Signer, Verifier};

/// Entries are refreshed from the database at least this often, notifications or not.
const TIME_TO_LIVE: Duration = Duration::from_secs(60);
/// A cache growing past this many entries is emptied (credentials are high-entropy keys: a flood of
/// distinct ones is an attack, not a working set).
const MAX_ENTRIES: usize = 100_000;

/// A credential with the permissions its custom roles grant.
#[derive(Debug, Clone)]
pub struct KnownCredential {
    pub credential: Arc<Credential>,
    pub grants: Arc<BTreeSet<String>>,
}

struct Entry<T> {
    value: T,
    stored: Instant,
}

struct Map<T>(RwLock<HashMap<String, Entry<T>>>);

impl<T: Clone> Map<T> {
    fn new() -> Self {
        Self(RwLock::new(HashMap::new()))
    }

    fn get(&self, key: &str) -> Option<T> {
        let map = self.0.read().unwrap_or_else(|p| p.into_inner());
        map.get(key).filter(|e| e.stored.elapsed() < TIME_TO_LIVE).map(|e| e.value.clone())
    }

    fn put(&self, key: String, value: T) {
        let mut map = self.0.write().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MAX_ENTRIES {
            map.clear();
        }
        map.insert(key, Entry { value, stored: Instant::now() });
    }

    fn retain(&self, keep: impl Fn(&str, &T) -> bool) {
        self.0.write().unwrap_or_else(|p| p.into_inner()).retain(|key, e| keep(key, &e.value));
    }

    fn remove(&self, key: &str) {
        self.0.write().unwrap_or_else(|p| p.into_inner()).remove(key);
    }

    fn clear(&self) {
        self.0.write().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

/// Access tokens whose signature and issuer this host has checked, by the whole token, with their
/// claims. A valid signature stays valid: a token found here skips the signature check only; its
/// key, expiry, session, revocation and client are checked again on every use. The set is emptied
/// when it grows past [`VerifiedTokens::MAX_ENTRIES`] and pruned of expired tokens by the hourly
/// job.
#[derive(Default)]
pub struct VerifiedTokens(RwLock<HashMap<String, VerifiedToken>>);

struct VerifiedToken {
    claims: Arc<serde_json::Map<String, serde_json::Value>>,
    expires_at: DateTime<Utc>,
}

impl VerifiedTokens {
    /// About 2 KiB each (the token and its claims): a few tens of MiB at most.
    const MAX_ENTRIES: usize = 20_000;

    pub fn get(&self, token: &str) -> Option<Arc<serde_json::Map<String, serde_json::Value>>> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).get(token).map(|entry| entry.claims.clone())
    }

    pub fn keep(
        &self,
        token: &str,
        claims: Arc<serde_json::Map<String, serde_json::Value>>,
        expires_at: DateTime<Utc>,
    ) {
        let mut map = self.0.write().unwrap_or_else(|p| p.into_inner());
        if map.len() >= Self::MAX_ENTRIES {
            map.clear();
        }
        map.insert(token.to_owned(), VerifiedToken { claims, expires_at });
    }

    /// Forgets tokens expired at `now`.
    pub fn prune(&self, now: DateTime<Utc>) {
        self.0.write().unwrap_or_else(|p| p.into_inner()).retain(|_, entry| entry.expires_at > now);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.read().unwrap_or_else(|p| p.into_inner()).len()
    }
}

#[derive(Debug, Default)]
struct Revocations {
    entries: HashMap<String, DateTime<Utc>>,
    /// Every revocation in the database is in `entries`.
    complete: bool,
}

/// The caches whose lookups are counted, in the order of `metrics::CACHES`.
#[derive(Debug, Clone, Copy)]
enum Cached {
    Credentials,
    Realms,
    Signers,
    Clients,
    ClientRoles,
    UserRoles,
    Verifiers,
    Grants,
    Suspensions,
    AdminNetworks,
    RealmSigners,
    Jwks,
    OfferedProviders,
}

/// The hit and miss counters of one cache.
#[derive(Debug, Default)]
struct Tally {
    hit: Counter,
    miss: Counter,
}

pub struct Caches {
    /// Hits and misses of each cache, by `Cached`.
    tallies: Vec<Tally>,
    /// By the keyed hash of the API key.
    credentials: Map<KnownCredential>,
    realms: Map<Arc<Realm>>,
    /// The signing key of each client with keys of its own, by `realm/client`.
    signers: Map<Arc<Signer>>,
    /// The signing key of each realm for each algorithm, by `realm/algorithm`.
    realm_signers: Map<Arc<Signer>>,
    /// Each realm's JWK Set as served, by realm.
    jwks: Map<Arc<Jwks>>,
    /// Clients, by `realm/client`.
    clients: Map<Arc<Client>>,
    /// The roles granted to each client itself, by `realm/client`.
    client_roles: Map<Arc<Vec<Role>>>,
    /// The effective roles of each person, by `realm/user`.
    user_roles: Map<Arc<Vec<Role>>>,
    /// Verification keys by `kid`.
    verifiers: Map<Arc<Verifier>>,
    /// The grants not withdrawn of each client for each person, by `realm/client/person`.
    grants: Map<Arc<Vec<DelegationGrant>>>,
    /// The suspensions of each realm whose end was not announced, by realm.
    suspensions: Map<Arc<Vec<Suspension>>>,
    /// The networks each account's admin credentials may be used from, by account.
    admin_networks: Map<Arc<Vec<String>>>,
    /// The Active identity providers each client's login page offers, in order, by `realm/client`.
    offered_providers: Map<Arc<Vec<IdentityProvider>>>,
    /// Access tokens revoked before their expiry, by jti, with that expiry; complete once loaded.
    revoked: RwLock<Revocations>,
    /// Access tokens whose signature was checked; a fact no change can make stale.
    pub verified_tokens: VerifiedTokens,
    /// Whether this host receives every change notification (always, on SQLite).
    synced: AtomicBool,
    /// How many invalidations and resets were applied, for whoever waits for the next one.
    applied: tokio::sync::watch::Sender<u64>,
}

impl std::fmt::Debug for Caches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caches").field("synced", &self.synced.load(Ordering::Relaxed)).finish_non_exhaustive()
    }
}

impl Caches {
    /// Caches that count their lookups in `lookups` (the metrics' family).
    pub fn new(synced: bool, lookups: &Family<CacheLabels, Counter>) -> Self {
        let counter = |cache: &str, result: &str| {
            lookups.get_or_create(&CacheLabels { cache: cache.to_owned(), result: result.to_owned() }).clone()
        };
        let tallies = CACHES.iter().map(|cache| Tally { hit: counter(cache, "hit"), miss: counter(cache, "miss") });
        Self {
            tallies: tallies.collect(),
            credentials: Map::new(),
            realms: Map::new(),
            signers: Map::new(),
            realm_signers: Map::new(),
            jwks: Map::new(),
            clients: Map::new(),
            client_roles: Map::new(),
            user_roles: Map::new(),
            verifiers: Map::new(),
            grants: Map::new(),
            suspensions: Map::new(),
            admin_networks: Map::new(),
            offered_providers: Map::new(),
            revoked: RwLock::new(Revocations::default()),
            verified_tokens: VerifiedTokens::default(),
            synced: AtomicBool::new(synced),
            applied: tokio::sync::watch::Sender::new(0),
        }
    }

    /// Changes each time an invalidation or a reset is applied: what a caller waits on to learn
    /// that another host's change arrived.
    pub fn applied(&self) -> tokio::sync::watch::Receiver<u64> {
        self.applied.subscribe()
    }

    /// Whether the caches are in use: always on SQLite; on PostgreSQL while notifications arrive.
    pub fn is_synced(&self) -> bool {
        self.usable()
    }

    fn usable(&self) -> bool {
        self.synced.load(Ordering::Acquire)
    }

    /// A lookup in `cache` while the caches are in use, counted as a hit or a miss.
    fn counted<T>(&self, cache: Cached, look: impl FnOnce() -> Option<T>) -> Option<T> {
        if !self.usable() {
            return None;
        }
        let found = look();
        if let Some(tally) = self.tallies.get(cache as usize) {
            if found.is_some() {
                tally.hit.inc()
            } else {
                tally.miss.inc()
            };
        }
        found
    }

    pub fn credential(&self, value_hash: &str) -> Option<KnownCredential> {
        self.counted(Cached::Credentials, || self.credentials.get(value_hash))
    }

    /// Keeps the credential under the keyed hash it was presented with (its current value, or its
    /// previous one during an overlap).
    pub fn keep_credential(&self, value_hash: String, known: KnownCredential) {
        if self.usable() {
            self.credentials.put(value_hash, known);
        }
    }

    pub fn realm(&self, id: &str) -> Option<Arc<Realm>> {
        self.counted(Cached::Realms, || self.realms.get(id))
    }

    pub fn keep_realm(&self, realm: Arc<Realm>) {
        if self.usable() {
            self.realms.put(realm.id.to_string(), realm);
        }
    }

    pub fn signer(&self, realm_id: &str, client_id: &str) -> Option<Arc<Signer>> {
        self.counted(Cached::Signers, || self.signers.get(&format!("{realm_id}/{client_id}")))
    }

    pub fn keep_signer(&self, realm_id: &str, client_id: &str, signer: Arc<Signer>) {
        if self.usable() {
            self.signers.put(format!("{realm_id}/{client_id}"), signer);
        }
    }

    pub fn realm_signer(&self, realm_id: &str, algorithm: &str) -> Option<Arc<Signer>> {
        self.counted(Cached::RealmSigners, || self.realm_signers.get(&format!("{realm_id}/{algorithm}")))
    }

    pub fn keep_realm_signer(&self, realm_id: &str, algorithm: &str, signer: Arc<Signer>) {
        if self.usable() {
            self.realm_signers.put(format!("{realm_id}/{algorithm}"), signer);
        }
    }

    pub fn jwks(&self, realm_id: &str) -> Option<Arc<Jwks>> {
        self.counted(Cached::Jwks, || self.jwks.get(realm_id))
    }

    pub fn keep_jwks(&self, realm_id: &str, jwks: Arc<Jwks>) {
        if self.usable() {
            self.jwks.put(realm_id.to_owned(), jwks);
        }
    }

    pub fn client(&self, realm_id: &str, client_id: &str) -> Option<Arc<Client>> {
        self.counted(Cached::Clients, || self.clients.get(&format!("{realm_id}/{client_id}")))
    }

    pub fn keep_client(&self, client: Arc<Client>) {
        if self.usable() {
            self.clients.put(format!("{}/{}", client.realm_id, client.id), client);
        }
    }

    pub fn client_roles(&self, realm_id: &str, client_id: &str) -> Option<Arc<Vec<Role>>> {
        self.counted(Cached::ClientRoles, || self.client_roles.get(&format!("{realm_id}/{client_id}")))
    }

    pub fn keep_client_roles(&self, realm_id: &str, client_id: &str, roles: Arc<Vec<Role>>) {
        if self.usable() {
            self.client_roles.put(format!("{realm_id}/{client_id}"), roles);
        }
    }

    pub fn user_roles(&self, realm_id: &str, user_id: &str) -> Option<Arc<Vec<Role>>> {
        self.counted(Cached::UserRoles, || self.user_roles.get(&format!("{realm_id}/{user_id}")))
    }

    pub fn keep_user_roles(&self, realm_id: &str, user_id: &str, roles: Arc<Vec<Role>>) {
        if self.usable() {
            self.user_roles.put(format!("{realm_id}/{user_id}"), roles);
        }
    }

    /// Whether the access token is revoked, when this host knows every revocation; `None` when it
    /// must ask the database (not loaded yet, or notifications not received).
    pub fn is_revoked(&self, jti: &str) -> Option<bool> {
        let revoked = self.revoked.read().unwrap_or_else(|p| p.into_inner());
        (self.usable() && revoked.complete).then(|| revoked.entries.contains_key(jti))
    }

    /// Takes the revocations read from the database as the complete set (merged with any that
    /// notifications brought meanwhile).
    pub fn keep_revocations(&self, loaded: impl IntoIterator<Item = (String, DateTime<Utc>)>) {
        if self.usable() {
            let mut revoked = self.revoked.write().unwrap_or_else(|p| p.into_inner());
            revoked.entries.extend(loaded);
            revoked.complete = true;
        }
    }

    /// Forgets revocations of tokens that have expired anyway.
    pub fn prune_revocations(&self, now: DateTime<Utc>) {
        self.revoked.write().unwrap_or_else(|p| p.into_inner()).entries.retain(|_, expires_at| *expires_at > now);
    }

    pub fn verifier(&self, kid: &str) -> Option<Arc<Verifier>> {
        self.counted(Cached::Verifiers, || self.verifiers.get(kid))
    }

    pub fn keep_verifier(&self, verifier: Arc<Verifier>) {
        if self.usable() {
            self.verifiers.put(verifier.kid.clone().into(), verifier);
        }
    }

    pub fn grants(&self, realm_id: &str, client_id: &str, person_id: &str) -> Option<Arc<Vec<DelegationGrant>>> {
        self.counted(Cached::Grants, || self.grants.get(&format!("{realm_id}/{client_id}/{person_id}")))
    }

    pub fn keep_grants(&self, realm_id: &str, client_id: &str, person_id: &str, grants: Arc<Vec<DelegationGrant>>) {
        if self.usable() {
            self.grants.put(format!("{realm_id}/{client_id}/{person_id}"), grants);
        }
    }

    pub fn admin_networks(&self, account_id: &str) -> Option<Arc<Vec<String>>> {
        self.counted(Cached::AdminNetworks, || self.admin_networks.get(account_id))
    }

    pub fn keep_admin_networks(&self, account_id: &AccountId, networks: Arc<Vec<String>>) {
        if self.usable() {
            self.admin_networks.put(account_id.to_string(), networks);
        }
    }

    pub fn suspensions(&self, realm_id: &str) -> Option<Arc<Vec<Suspension>>> {
        self.counted(Cached::Suspensions, || self.suspensions.get(realm_id))
    }

    pub fn keep_suspensions(&self, realm_id: &str, suspensions: Arc<Vec<Suspension>>) {
        if self.usable() {
            self.suspensions.put(realm_id.to_owned(), suspensions);
        }
    }

    pub fn offered_providers(&self, realm_id: &str, client_id: &str) -> Option<Arc<Vec<IdentityProvider>>> {
        self.counted(Cached::OfferedProviders, || self.offered_providers.get(&format!("{realm_id}/{client_id}")))
    }

    pub fn keep_offered_providers(&self, realm_id: &str, client_id: &str, providers: Arc<Vec<IdentityProvider>>) {
        if self.usable() {
            self.offered_providers.put(format!("{realm_id}/{client_id}"), providers);
        }
    }

    pub fn apply(&self, invalidation: &Invalidation) {
        match invalidation {
            Invalidation::Account(account) => {
                self.credentials.retain(|_, known| known.credential.secret.account_id != *account);
                self.admin_networks.remove(account);
            }
            Invalidation::Realm(id) => {
                self.realms.retain(|_, realm| realm.id != *id);
                let prefix = format!("{id}/");
                self.clients.retain(|key, _| !key.starts_with(&prefix));
                self.client_roles.retain(|key, _| !key.starts_with(&prefix));
                self.user_roles.retain(|key, _| !key.starts_with(&prefix));
                self.grants.retain(|key, _| !key.starts_with(&prefix));
                self.offered_providers.retain(|key, _| !key.starts_with(&prefix));
                self.suspensions.remove(id);
                self.forget_keys(id);
            }
            Invalidation::Suspensions(realm) => self.suspensions.remove(realm),
            Invalidation::Providers(realm) => {
                let prefix = format!("{realm}/");
                self.offered_providers.retain(|key, _| !key.starts_with(&prefix));
            }
            Invalidation::Delegation(realm) => {
                let prefix = format!("{realm}/");
                self.grants.retain(|key, _| !key.starts_with(&prefix));
            }
            Invalidation::Revoked(jti, expires_at) => {
                self.revoked.write().unwrap_or_else(|p| p.into_inner()).entries.insert(jti.clone(), *expires_at);
            }
            Invalidation::Client(realm_id, client_id) => {
                let key = format!("{realm_id}/{client_id}");
                self.signers.remove(&key);
                self.clients.remove(&key);
                self.client_roles.remove(&key);
                self.offered_providers.remove(&key);
                self.verifiers.retain(|_, v| v.realm_id != *realm_id || v.client_id.as_ref() != Some(client_id));
                self.jwks.remove(realm_id);
            }
            Invalidation::Keys(realm_id) => self.forget_keys(realm_id),
        }
        self.applied.send_modify(|count| *count += 1);
    }

    /// Forgets every signing and verification key of a realm, and its JWKS.
    fn forget_keys(&self, realm_id: &RealmId) {
        let prefix = format!("{realm_id}/");
        self.signers.retain(|key, _| !key.starts_with(&prefix));
        self.realm_signers.retain(|key, _| !key.starts_with(&prefix));
        self.verifiers.retain(|_, verifier| verifier.realm_id != *realm_id);
        self.jwks.remove(realm_id);
    }

    /// Forgets everything and sets whether notifications are being received.
    pub fn reset(&self, synced: bool) {
        self.synced.store(synced, Ordering::Release);
        self.credentials.clear();
        self.realms.clear();
        self.signers.clear();
        self.realm_signers.clear();
        self.jwks.clear();
        self.clients.clear();
        self.client_roles.clear();
        self.user_roles.clear();
        self.verifiers.clear();
        self.grants.clear();
        self.suspensions.clear();
        self.admin_networks.clear();
        self.offered_providers.clear();
        *self.revoked.write().unwrap_or_else(|p| p.into_inner()) = Revocations::default();
        self.applied.send_modify(|count| *count += 1);
    }
}

impl Follower for Caches {
    fn apply(&self, what: &Invalidation) {
        Caches::apply(self, what);
    }

    fn reset(&self, synced: bool) {
        Caches::reset(self, synced);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Status;
    use crate::store::realms::RealmSettings;

    fn realm(id: &str) -> Arc<Realm> {
        Arc::new(Realm {
            id: RealmId::known(id),
            account_id: AccountId::known("a"),
            display_name: id.into(),
            status: Status::Active,
            settings: RealmSettings::default(),
            created_at: DateTime::UNIX_EPOCH,
            updated_at: DateTime::UNIX_EPOCH,
        })
    }

    #[test]
    fn invalidations_round_trip_and_drop_their_entries() {
        let caches = Caches::new(true, &Family::default());
        caches.keep_realm(realm("one"));
        caches.keep_realm(realm("two"));
        let dropped = Invalidation::decode(&Invalidation::Realm(RealmId::known("one")).encode()).unwrap();
        caches.apply(&dropped);
        assert!(caches.realm("one").is_none());
        assert!(caches.realm("two").is_some());
        assert_eq!(Invalidation::decode("nonsense"), None);
    }

    #[test]
    fn an_unsynced_cache_is_bypassed() {
        let caches = Caches::new(true, &Family::default());
        caches.keep_realm(realm("one"));
        caches.reset(false);
        caches.keep_realm(realm("one"));
        assert!(caches.realm("one").is_none());
        caches.reset(true);
        caches.keep_realm(realm("one"));
        assert!(caches.realm("one").is_some());
    }

    #[test]
    fn verified_tokens_are_pruned_at_expiry_and_bounded() {
        let tokens = VerifiedTokens::default();
        let claims = Arc::new(serde_json::Map::new());
        let at = |seconds| DateTime::from_timestamp(seconds, 0).unwrap();
        tokens.keep("early", claims.clone(), at(100));
        tokens.keep("late", claims.clone(), at(200));
        tokens.prune(at(100));
        assert!(tokens.get("early").is_none(), "expired at 100");
        assert!(tokens.get("late").is_some());

        for n in 0..VerifiedTokens::MAX_ENTRIES {
            tokens.keep(&n.to_string(), claims.clone(), at(300));
        }
        assert!(tokens.len() <= VerifiedTokens::MAX_ENTRIES);
        assert!(tokens.get("late").is_none(), "emptied when full");
    }
}

//! Documents the service reads from addresses clients and identity providers name: a client's JWK
//! Set (`jwks_uri`), a client's metadata document, an upstream provider's metadata, keys, token
//! endpoint and user-info. Each is fetched through the host's address-checked HTTP
//! client (public addresses only, checked again after DNS resolution, no redirects), within a
//! time and a size limit, and kept as long as its `Cache-Control` allows, up to an hour.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};

use crate::runtime::context::Context;

/// How long a fetched document is kept when its answer says nothing; and at most.
const DEFAULT_KEEP: TimeDelta = TimeDelta::minutes(5);
const MAX_KEEP: TimeDelta = TimeDelta::hours(1);
/// Fetches any caller can start that run at once on one host.
pub const ANONYMOUS_FETCHES_AT_ONCE: usize = 16;
/// Documents kept at most on each shelf, so that addresses named at will cannot fill the memory.
pub const MAX_KEPT: usize = 10_000;
/// The longest a fetch may take, from connecting to the last byte.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// A document read, and how long it may be kept.
#[derive(Debug)]
pub struct Fetched {
    pub body: Vec<u8>,
    pub keep: TimeDelta,
}

/// Reads the document at `address`, refusing one larger than `max_bytes`. The error says why, in
/// words that name the document as `what` (`"the client's jwks_uri"`).
pub async fn fetch(context: &Context, what: &str, address: &str, max_bytes: usize) -> Result<Fetched, String> {
    let (status, fetched) = call(context, what, address, max_bytes, |http, url| http.get(url)).await?;
    if !status.is_success() {
        return Err(format!("{what} answered {status}"));
    }
    Ok(fetched)
}

/// A server's answer: its status and its body, whatever the status.
#[derive(Debug)]
pub struct Answered {
    pub status: reqwest::StatusCode,
    pub body: Vec<u8>,
}

/// Posts `form` to `address` (an OAuth 2.0 token endpoint), with HTTP Basic credentials when
/// given, and reads the answer, refusing one larger than `max_bytes`.
pub async fn post_form(
    context: &Context,
    what: &str,
    address: &str,
    form: &[(&str, &str)],
    basic: Option<(&str, &str)>,
    max_bytes: usize,
) -> Result<Answered, String> {
    let build = |http: &reqwest::Client, url| {
        let request = http.post(url).form(form);
        match basic {
            // RFC 6749 §2.3.1: each part form-encoded before the Basic encoding.
            Some((id, secret)) => request.basic_auth(form_encoded(id), Some(form_encoded(secret))),
            None => request,
        }
    };
    let (status, fetched) = call(context, what, address, max_bytes, build).await?;
    Ok(Answered { status, body: fetched.body })
}

/// Reads `address` with a bearer token (an OAuth 2.0 user-info address).
pub async fn fetch_with_token(
    context: &Context,
    what: &str,
    address: &str,
    token: &str,
    max_bytes: usize,
) -> Result<Answered, String> {
    let (status, fetched) =
        call(context, what, address, max_bytes, |http, url| http.get(url).bearer_auth(token)).await?;
    Ok(Answered { status, body: fetched.body })
}

fn form_encoded(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// One request to an https `address` through the address-checked client, built by `build`.
async fn call(
    context: &Context,
    what: &str,
    address: &str,
    max_bytes: usize,
    build: impl FnOnce(&reqwest::Client, url::Url) -> reqwest::RequestBuilder,
) -> Result<(reqwest::StatusCode, Fetched), String> {
    let url = url::Url::parse(address).map_err(|_| format!("{what} is not an address"))?;
    if url.scheme() != "https" {
        return Err(format!("{what} is not an https address"));
    }
    if let Some(why) = context.outbound.web.addresses.refuses_literal(&url) {
        return Err(format!("{what} is refused: {why}"));
    }
    let unreachable = |error: reqwest::Error| format!("{what} cannot be read: {error}");
    let request = build(&context.outbound.web.http, url).header(reqwest::header::ACCEPT, "application/json");
    let mut response = request.timeout(FETCH_TIMEOUT).send().await.map_err(unreachable)?;
    let status = response.status();
    let keep = keep_for(response.headers().get(reqwest::header::CACHE_CONTROL).and_then(|v| v.to_str().ok()));
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(unreachable)? {
        body.extend_from_slice(&chunk);
        if body.len() > max_bytes {
            return Err(format!("{what} holds more than {} KiB", max_bytes / 1024));
        }
    }
    Ok((status, Fetched { body, keep }))
}

/// Whose addresses a document comes from. Each shelf has its own bound, so that the addresses
/// anyone can name (a self-registered client's `jwks_uri`) never crowd out those an administrator
/// configured (an identity provider's metadata and keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shelf {
    /// Documents a client names: its JWK Set.
    Clients,
    /// Documents a realm's identity providers name: their metadata and keys.
    Providers,
}

/// The documents fetched, by shelf and address, each until its answer's time runs out: kept as
/// what their reader made of them (a parsed JWK Set, say), so that each use reads no bytes again.
#[derive(Debug, Default)]
pub struct KeptDocuments {
    documents: Mutex<HashMap<(Shelf, String), Kept>>,
}

#[derive(Debug)]
struct Kept {
    document: Arc<dyn Any + Send + Sync>,
    at: DateTime<Utc>,
    until: DateTime<Utc>,
}

impl KeptDocuments {
    /// The document of `T` kept for `address` at `now`; with `again` (the kept copy lacked what was
    /// looked for), none unless it is younger than `again`'s time.
    pub fn kept<T: Any + Send + Sync>(
        &self,
        (shelf, address): (Shelf, &str),
        now: DateTime<Utc>,
        again: Option<TimeDelta>,
    ) -> Option<Arc<T>> {
        let documents = self.documents.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let kept = documents.get(&(shelf, address.to_owned()))?;
        let fresh = now < kept.until && again.is_none_or(|after| now - kept.at < after);
        fresh.then(|| kept.document.clone().downcast::<T>().ok()).flatten()
    }

    /// Keeps `document` for `address` from `now` for `keep` (while the shelf holds fewer than
    /// [`MAX_KEPT`]), and forgets those whose time ran out.
    pub fn keep<T: Any + Send + Sync>(
        &self,
        (shelf, address): (Shelf, &str),
        document: Arc<T>,
        now: DateTime<Utc>,
        keep: TimeDelta,
    ) {
        let mut documents = self.documents.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        documents.retain(|_, kept| kept.until > now);
        let on_shelf = documents.keys().filter(|(kept_on, _)| *kept_on == shelf).count();
        if keep > TimeDelta::zero() && on_shelf < MAX_KEPT {
            documents.insert((shelf, address.to_owned()), Kept { document, at: now, until: now + keep });
        }
    }
}

/// How long a fetched document is kept: its `max-age`, at most an hour; nothing with `no-store`
/// or `no-cache`; five minutes when the answer says nothing.
fn keep_for(cache_control: Option<&str>) -> TimeDelta {
    let Some(text) = cache_control else { return DEFAULT_KEEP };
    let directives: Vec<&str> = text.split(',').map(str::trim).collect();
    if directives.iter().any(|d| d.eq_ignore_ascii_case("no-store") || d.eq_ignore_ascii_case("no-cache")) {
        return TimeDelta::zero();
    }
    directives
        .iter()
        .find_map(|d| d.strip_prefix("max-age=").and_then(|seconds| seconds.parse::<i64>().ok()))
        .map_or(DEFAULT_KEEP, |seconds| TimeDelta::seconds(seconds.max(0)).min(MAX_KEEP))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_shelf_of_clients_leaves_room_on_the_providers_and_a_document_is_read_as_kept() {
        let kept = KeptDocuments::default();
        let now = DateTime::<Utc>::UNIX_EPOCH;
        for n in 0..MAX_KEPT + 1 {
            kept.keep((Shelf::Clients, &format!("https://client-{n}.example/jwks")), Arc::new(n), now, MAX_KEEP);
        }
        let last = format!("https://client-{MAX_KEPT}.example/jwks");
        assert!(kept.kept::<usize>((Shelf::Clients, &last), now, None).is_none(), "the full shelf keeps no more");
        let provider = "https://provider.example/jwks";
        kept.keep((Shelf::Providers, provider), Arc::new(String::from("keys")), now, MAX_KEEP);
        let read = kept.kept::<String>((Shelf::Providers, provider), now, None);
        assert_eq!(read.as_deref().map(String::as_str), Some("keys"));
        assert!(kept.kept::<usize>((Shelf::Providers, provider), now, None).is_none(), "kept as a String");
        assert!(kept.kept::<String>((Shelf::Providers, provider), now + MAX_KEEP, None).is_none(), "its time ran out");
    }

    #[test]
    fn a_document_is_kept_as_its_cache_control_says_within_an_hour() {
        assert_eq!(keep_for(None), DEFAULT_KEEP);
        assert_eq!(keep_for(Some("public, max-age=120")), TimeDelta::seconds(120));
        assert_eq!(keep_for(Some("max-age=86400")), MAX_KEEP);
        assert_eq!(keep_for(Some("no-store")), TimeDelta::zero());
        assert_eq!(keep_for(Some("private")), DEFAULT_KEEP);
    }

    mod properties {
        use proptest::prelude::*;

        use super::super::*;

        proptest! {
            /// Whatever a `Cache-Control` header says, a document is kept for no time to an hour.
            #[test]
            fn a_document_is_kept_at_most_an_hour(header in any::<String>()) {
                let keep = keep_for(Some(&header));
                prop_assert!(keep >= TimeDelta::zero() && keep <= MAX_KEEP);
            }

            /// `max-age` is kept as said, up to an hour.
            #[test]
            fn max_age_is_kept_as_said_up_to_an_hour(seconds in 0i64..10_000_000) {
                let keep = keep_for(Some(&format!("public, max-age={seconds}")));
                prop_assert_eq!(keep, TimeDelta::seconds(seconds).min(MAX_KEEP));
            }
        }
    }
}

//! Signing in through an external identity provider, at the browser's end:
//!
//! - `GET …/auth/upstream/{provider}`: a button of the login page, for a provider the client
//!   offers: the browser goes to the provider, the authorization request kept until it is back.
//! - `GET /realms/{realm}/broker/{provider}/callback`: the provider's answer (the address to
//!   register at the provider). The sign-in it names by its `state` must have been started by
//!   this browser (a cookie binds them), for this provider, within ten minutes, and is good once;
//!   the person the provider vouches for is then signed in and the client answered as after a
//!   password, or the login page says why not.
//!
//! - `GET /realms/{realm}/connections/{provider}/callback`: a connection provider's answer, for a
//!   person who was sent there to connect an account (an authorization request with `connect`):
//!   the browser must still be signed in as that person; the account's tokens are kept, and the
//!   client answered with its code, or told `access_denied` when the account was not connected.
//!
//! [`Page::upstream`] sends the browser to a provider: from a button, from `idp_hint`, or from
//! home-realm discovery (an address typed at an organization's domain). [`Page::connect`] sends it
//! to a connection provider.

use axum::Extension;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;

use super::Form;
use super::authorize::{
    CARRIED, Page, answer_signed_in, carried, code_response, denied, origin_of, refused, requested, texts_for,
};
use super::cookies::{SESSION_COOKIE, append_cookie, cookie, cookie_text};
use super::login_page;
use crate::http::AppState;
use crate::http::address::ClientAddress;
use crate::oauth::federation::{self, connections, sign_in};
use crate::oauth::signin::browser::{self, Denial};
use crate::oauth::signin::federated::{self, FederatedError, Refused};
use crate::oauth::signin::texts::Texts;
use crate::store::identity_providers::IdentityProvider;
use crate::store::realms::Realm;
use crate::store::users::User;

/// The cookie binding a sign-in at a provider to the browser that started it.
const UPSTREAM_COOKIE: &str = "castellan_upstream";

/// `GET …/auth/upstream/{provider}`: a provider's button on the login page.
pub async fn start(
    State(state): State<AppState>,
    Path((realm_id, provider_id)): Path<(String, String)>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let request = match requested(&state, &realm_id, Form::from_query(query.as_deref())).await {
        Ok(request) => request,
        Err(answer) => return *answer,
    };
    let page = request.page(&state, &headers);
    match request.providers.iter().find(|provider| provider.id.as_str() == provider_id) {
        Some(provider) => page.upstream(provider, None).await,
        None => page.login("", Some((StatusCode::NOT_FOUND, page.texts().upstream_failed))),
    }
}

/// `GET /realms/{realm}/broker/{provider}/callback`: the provider's answer.
pub async fn callback(
    State(state): State<AppState>,
    Path((realm_id, provider_id)): Path<(String, String)>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let Back { answer, realm, waiting, request } =
        match back(&state, &realm_id, &provider_id, &headers, query, Purpose::SignIn).await {
            Ok(back) => back,
            Err(answer) => return *answer,
        };
    let page = request.page(&state, &headers);
    let origin = origin_of(address, &headers);
    let texts = page.texts();
    let mut response = match federation::active(&state, &realm, waiting.provider_id()).await {
        Ok(Some(provider)) => {
            let returned =
                sign_in::Answer { code: answer.get("code"), iss: answer.get("iss"), error: answer.get("error") };
            let vouched = sign_in::claims(&state, &realm, &provider, &waiting, returned).await;
            let client = &request.authorization.client;
            match federated::sign_in(&state, &state.protection, &realm, client, &provider, vouched, &origin).await {
                Ok(signed_in) => answer_signed_in(&page, &signed_in, &origin).await,
                Err(FederatedError::Refused(why)) => page.login("", Some(refusal_text(why, texts))),
                Err(FederatedError::Failed(failure)) => refused(&state, &realm, failure.into()),
            }
        }
        Ok(None) => page.login("", Some((StatusCode::OK, texts.upstream_failed))),
        Err(failure) => refused(&state, &realm, failure.into()),
    };
    append_cookie(&mut response, &cookie_text(&state, &realm, UPSTREAM_COOKIE, "", Some(0)));
    onward(response, texts)
}

/// A redirect to the client turned into a page that goes on to it: the provider's answer may be the
/// redirect of a form on the provider's site, whose `form-action` would stop a second redirect.
/// The cookies set stay.
fn onward(response: Response, texts: &'static Texts) -> Response {
    let location = response.headers().get(header::LOCATION).and_then(|value| value.to_str().ok());
    let Some(location) = location.filter(|_| response.status() == StatusCode::SEE_OTHER) else { return response };
    let mut page = login_page::onward(location, texts);
    for cookie in response.headers().get_all(header::SET_COOKIE) {
        page.headers_mut().append(header::SET_COOKIE, cookie.clone());
    }
    page
}

/// What a provider's answer was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    SignIn,
    Connection,
}

/// A provider's answer, with the sign-in it names and the client's request that sign-in keeps.
struct Back {
    answer: Form,
    realm: std::sync::Arc<Realm>,
    waiting: sign_in::Waiting,
    request: super::authorize::Requested,
}

/// Reads a provider's answer: the sign-in its `state` names, taken, when this browser started it
/// with this provider for `purpose`, and the client's request it kept, checked again; else the
/// answer to give.
async fn back(
    state: &AppState,
    realm_id: &str,
    provider_id: &str,
    headers: &HeaderMap,
    query: Option<String>,
    purpose: Purpose,
) -> Result<Back, Box<Response>> {
    let lost = || Box::new(lost(answer_texts(headers)));
    let answer = Form::from_query(query.as_deref()).map_err(|_| lost())?;
    let realm = super::realm(state, realm_id).await.map_err(|_| lost())?;
    let Some(sign_in_state) = answer.get("state") else { return Err(lost()) };
    let bound = cookie(headers, UPSTREAM_COOKIE);
    let waiting = match sign_in::take(state, &realm, provider_id, sign_in_state, bound).await {
        // A connection's answer is not a sign-in's, nor the other way round.
        Ok(Some(waiting)) if waiting.user_id().is_some() == (purpose == Purpose::Connection) => waiting,
        Ok(_) => return Err(lost()),
        Err(failure) => return Err(Box::new(refused(state, &realm, failure.into()))),
    };
    let request = requested(state, realm_id, Ok(Form::from_pairs(waiting.request.clone()))).await?;
    Ok(Back { answer, realm, waiting, request })
}

/// What the login page says of a federated sign-in refused.
fn refusal_text(refused: Refused, texts: &'static Texts) -> (StatusCode, &'static str) {
    match refused {
        Refused::SourceBlocked => (StatusCode::TOO_MANY_REQUESTS, texts.too_many_attempts),
        Refused::Upstream => (StatusCode::OK, texts.upstream_failed),
        Refused::AccountExists => (StatusCode::OK, texts.account_not_linked),
        Refused::UserDisabled => (StatusCode::OK, texts.disabled),
    }
}

fn answer_texts(headers: &HeaderMap) -> &'static Texts {
    texts_for(&Form::from_pairs(Vec::new()), headers)
}

/// The answer to a provider's answer that names no sign-in this browser is waiting for.
fn lost(texts: &'static Texts) -> Response {
    login_page::shown(StatusCode::BAD_REQUEST, texts.sign_in_lost_title, texts.sign_in_lost, texts)
}

impl Page<'_> {
    /// Sends the browser to `provider`, with the address the person typed as its `login_hint`.
    pub async fn upstream(&self, provider: &IdentityProvider, login_hint: Option<&str>) -> Response {
        let Page { state, realm, form, .. } = *self;
        let request = carried(form, CARRIED);
        match sign_in::start(state, realm, provider, &request, login_hint).await {
            Ok(started) => sent(state, realm, &started),
            Err(sign_in::Failure::Failed(failure)) => refused(state, realm, failure.into()),
            Err(failure) => {
                tracing::warn!(realm = %realm.id, provider = %provider.id, %failure, "a provider cannot be signed in through");
                self.login("", Some((StatusCode::BAD_GATEWAY, self.texts().upstream_failed)))
            }
        }
    }
}

/// The browser sent to a provider, with the cookie that binds the sign-in to it.
fn sent(state: &AppState, realm: &Realm, started: &sign_in::Started) -> Response {
    let mut response = login_page::see_other(&started.address);
    let lifetime = sign_in::LIFETIME.num_seconds();
    append_cookie(&mut response, &cookie_text(state, realm, UPSTREAM_COOKIE, &started.cookie, Some(lifetime)));
    response
}

impl Page<'_> {
    /// Sends the signed-in `user` to the connection provider `provider_id` to connect an account;
    /// the request, without its `connect`, is answered once they are back.
    pub async fn connect(&self, provider_id: &str, user: &User) -> Response {
        let Page { state, realm, form, authorization, .. } = *self;
        let request: Vec<(&str, &str)> =
            carried(form, CARRIED).into_iter().filter(|(name, _)| *name != "connect").collect();
        let provider = match connections::active_provider(state, &realm.id, provider_id).await {
            Ok(Some(provider)) => provider,
            Ok(None) => return denied(state, realm, authorization, Denial::InvalidRequest, GONE),
            Err(failure) => return refused(state, realm, failure.into()),
        };
        match connections::start(state, realm, &provider, &user.id, &request).await {
            Ok(started) => sent(state, realm, &started),
            Err(sign_in::Failure::Failed(failure)) => refused(state, realm, failure.into()),
            Err(failure) => {
                tracing::warn!(realm = %realm.id, provider = provider_id, %failure, "an account cannot be connected");
                let why = "the connection provider cannot be reached";
                denied(state, realm, authorization, Denial::TemporarilyUnavailable, why)
            }
        }
    }
}

const GONE: &str = "the connection provider is no longer active";

/// `GET /realms/{realm}/connections/{provider}/callback`: a connection provider's answer.
pub async fn connected(
    State(state): State<AppState>,
    Path((realm_id, provider_id)): Path<(String, String)>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let Back { answer, realm, waiting, request } =
        match back(&state, &realm_id, &provider_id, &headers, query, Purpose::Connection).await {
            Ok(back) => back,
            Err(answer) => return *answer,
        };
    let page = request.page(&state, &headers);
    let authorization = &request.authorization;
    // Still signed in, as the person who set out to connect the account.
    let signed_in = match cookie(&headers, SESSION_COOKIE) {
        Some(value) => browser::signed_in(&state, &realm, value).await,
        None => Ok(None),
    };
    let (session, user) = match signed_in {
        Ok(Some((session, user))) if waiting.user_id() == Some(user.id.as_str()) => (session, user),
        Ok(_) => return page.login("", Some((StatusCode::OK, page.texts().took_too_long))),
        Err(failure) => return refused(&state, &realm, failure.into()),
    };
    let returned = sign_in::Answer { code: answer.get("code"), iss: answer.get("iss"), error: answer.get("error") };
    let mut response = match connections::active_provider(&state, &realm.id, waiting.provider_id()).await {
        Ok(Some(provider)) => match connections::finish(&state, &realm, &provider, &waiting, returned).await {
            Ok(_) => code_response(&page, &session, &user, &origin_of(address, &headers)).await,
            Err(sign_in::Failure::Failed(failure)) => refused(&state, &realm, failure.into()),
            Err(failure) => {
                tracing::warn!(realm = %realm.id, provider = provider_id, %failure, "an account was not connected");
                denied(&state, &realm, authorization, Denial::AccessDenied, "the account was not connected")
            }
        },
        Ok(None) => denied(&state, &realm, authorization, Denial::InvalidRequest, GONE),
        Err(failure) => refused(&state, &realm, failure.into()),
    };
    append_cookie(&mut response, &cookie_text(&state, &realm, UPSTREAM_COOKIE, "", Some(0)));
    onward(response, page.texts())
}

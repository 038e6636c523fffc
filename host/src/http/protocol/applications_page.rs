//! `GET|POST /realms/{realm}/account/applications`: the page where a person signed in to the realm
//! in this browser sees what they allowed third-party applications (each application, its scopes
//! and resources) and withdraws it. The browser's realm session (`castellan_session`) names the
//! person; a withdrawal is a form with a CSRF token bound to the browser, like the sign-in pages.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::authorize::texts_for;
use super::cookies::{SESSION_COOKIE, append_cookie, cookie, fresh_form, genuine_form};
use super::login_page::{self, Allowed};
use super::{Form, OAuthError};
use crate::http::AppState;
use crate::oauth::consent;
use crate::oauth::signin::browser;
use crate::oauth::signin::texts::Texts;
use crate::oauth::tokens::issuer;
use crate::store::realms::Realm;
use crate::store::users::User;

/// `GET`: the list.
pub async fn shown(State(state): State<AppState>, Path(realm_id): Path<String>, headers: HeaderMap) -> Response {
    let texts = texts_for(&Form::default(), &headers);
    let Ok(realm) = super::realm(&state, &realm_id).await else { return no_realm() };
    match person(&state, &realm, &headers).await {
        Ok(Some(user)) => list(&state, &realm, &user, texts, None).await,
        Ok(None) => login_page::shown(StatusCode::UNAUTHORIZED, texts.not_signed_in, texts.sign_in_first, texts),
        Err(response) => response,
    }
}

/// `POST`: withdraws the consents to the application `client_id` names, then lists again.
pub async fn withdrawn(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
    form: Result<Form, OAuthError>,
) -> Response {
    let texts = texts_for(&Form::default(), &headers);
    let Ok(realm) = super::realm(&state, &realm_id).await else { return no_realm() };
    let user = match person(&state, &realm, &headers).await {
        Ok(Some(user)) => user,
        Ok(None) => {
            return login_page::shown(StatusCode::UNAUTHORIZED, texts.not_signed_in, texts.sign_in_first, texts);
        }
        Err(response) => return response,
    };
    let Ok(form) = form else { return list(&state, &realm, &user, texts, Some(texts.form_expired)).await };
    if !genuine_form(&state, &headers, &form) {
        return list(&state, &realm, &user, texts, Some(texts.form_expired)).await;
    }
    let client_id = form.get("client_id").unwrap_or("");
    match consent::withdraw(&state, &user, client_id, None).await {
        Ok(_) => list(&state, &realm, &user, texts, Some(texts.withdrawn)).await,
        Err(failure) => unavailable(&failure),
    }
}

/// The person this browser is signed in to the realm as, if any.
pub(super) async fn person(state: &AppState, realm: &Realm, headers: &HeaderMap) -> Result<Option<User>, Response> {
    let Some(value) = cookie(headers, SESSION_COOKIE) else { return Ok(None) };
    match browser::signed_in(state, realm, value).await {
        Ok(found) => Ok(found.map(|(_, user)| user)),
        Err(failure) => Err(unavailable(&failure)),
    }
}

async fn list(state: &AppState, realm: &Realm, user: &User, texts: &'static Texts, notice: Option<&str>) -> Response {
    let consents = match consent::of_person(state, user).await {
        Ok(consents) => consents,
        Err(failure) => return unavailable(&failure),
    };
    let mut allowed: Vec<Allowed> = Vec::new();
    // Per application: where it is served from and when the person first allowed it, which tell
    // apart two applications of the same name.
    let mut known: Vec<(Option<String>, chrono::DateTime<chrono::Utc>)> = Vec::new();
    for given in &consents {
        let client = crate::oauth::tokens::find_client(state, &realm.id, &given.client_id).await.ok().flatten();
        let name = client.as_ref().map_or_else(|| given.client_id.to_string(), |client| client.name.clone());
        let mut line = given.scopes.join(", ");
        if !given.resource.is_empty() {
            line = format!("{line} ({} {})", texts.consent_for_resource, given.resource);
        }
        match allowed.iter().position(|one| one.client_id == given.client_id.as_str()) {
            Some(at) => {
                allowed[at].lines.push(line);
                known[at].1 = known[at].1.min(given.created_at);
            }
            None => {
                allowed.push(Allowed { name, lines: vec![line], client_id: given.client_id.to_string() });
                known.push((client.as_deref().and_then(consent::served_from), given.created_at));
            }
        }
    }
    let names: Vec<String> = allowed.iter().map(|one| one.name.clone()).collect();
    for (one, (host, first)) in allowed.iter_mut().zip(&known) {
        if names.iter().filter(|name| **name == one.name).count() > 1 {
            let first = first.format("%Y-%m-%d %H:%M UTC");
            one.name = match host {
                Some(host) => format!("{} ({host}; {} {first})", one.name, texts.first_allowed),
                None => format!("{} ({} {first})", one.name, texts.first_allowed),
            };
        }
    }
    let (csrf, form_cookie) = fresh_form(state, realm);
    let action = format!("{}/account/applications", issuer(state, &realm.id));
    let mut response = login_page::applications(texts, &action, &csrf, &allowed, notice);
    append_cookie(&mut response, &form_cookie);
    response
}

pub(super) fn no_realm() -> Response {
    login_page::problem(StatusCode::NOT_FOUND, "No such realm", "This address names no active realm.")
}

fn unavailable(failure: &crate::runtime::error::Error) -> Response {
    tracing::error!(error = %failure, "the applications page failed");
    login_page::problem(StatusCode::SERVICE_UNAVAILABLE, "This is not possible right now", "Try again in a moment.")
}

//! The end-session endpoint (OpenID Connect RP-Initiated Logout 1.0). With an `id_token_hint` the
//! realm issued in this browser's own sign-in, the browser is signed out at once; otherwise (no
//! hint, another person's, another browser's) the person is asked first, so that no other site
//! can sign a browser out by sending it here. A `post_logout_redirect_uri` must
//! be one the client registered, compared exactly; the answer goes there with `state`, or to a page.

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::authorize::{carried, texts_for};
use super::cookies::{SESSION_COOKIE, append_cookie, cookie, cookie_text, fresh_form, genuine_form};
use super::login_page;
use super::{Form, OAuthError};
use crate::http::AppState;
use crate::oauth::signin::sign_out;
use crate::oauth::tokens::{self, IdTokenHint, issuer};
use crate::store::clients::Client;
use crate::store::realms::Realm;

/// The parameters a confirmation carries back.
const CARRIED: &[&str] = &["id_token_hint", "post_logout_redirect_uri", "state", "client_id", "ui_locales"];

/// `GET …/logout`: the request in the query string.
pub async fn get(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    match Form::from_query(query.as_deref()) {
        Ok(form) => end_session(&state, &realm_id, &headers, &form, false).await,
        Err(refused) => unreadable(&refused),
    }
}

/// `POST …/logout`: the request as a form, or the person's confirmation.
pub async fn post(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
    form: Result<Form, OAuthError>,
) -> Response {
    match form {
        Ok(form) => end_session(&state, &realm_id, &headers, &form, true).await,
        Err(refused) => unreadable(&refused),
    }
}

fn unreadable(refused: &OAuthError) -> Response {
    login_page::problem(StatusCode::BAD_REQUEST, "This sign-out request cannot be read", &refused.description)
}

async fn end_session(state: &AppState, realm_id: &str, headers: &HeaderMap, form: &Form, posted: bool) -> Response {
    let Ok(realm) = super::realm(state, realm_id).await else {
        return login_page::problem(StatusCode::NOT_FOUND, "No such realm", "This address names no active realm.");
    };
    let hint = match form.get("id_token_hint") {
        Some(token) => match tokens::id_token_hint(state, &realm.id, token).await {
            Ok(Some(hint)) => Some(hint),
            Ok(None) => return bad_request("The id_token_hint is not an ID token this realm issued."),
            Err(failure) => return unavailable(&failure),
        },
        None => None,
    };
    let client = match client_of(state, &realm, hint.as_ref(), form.get("client_id")).await {
        Ok(client) => client,
        Err(response) => return *response,
    };
    let destination = match form.get("post_logout_redirect_uri") {
        Some(uri) => match &client {
            Some(client) if client.post_logout_redirect_uris.iter().any(|registered| registered == uri) => Some(uri),
            Some(_) => return bad_request("The post_logout_redirect_uri is not one the client registered."),
            None => return bad_request("A post_logout_redirect_uri needs an id_token_hint or a client_id."),
        },
        None => None,
    };
    let redirect_origin = destination.map(login_page::form_target);
    // Confirmed: a post from the page this browser was shown.
    let confirmed = posted && genuine_form(state, headers, form);
    let session_cookie = cookie(headers, SESSION_COOKIE);
    let hinted_session = hint.as_ref().and_then(|hint| hint.session_id.as_ref());
    let hint_is_ours = match sign_out::hint_names_this_browser(state, &realm, session_cookie, hinted_session).await {
        Ok(ours) => ours,
        Err(failure) => return unavailable(&failure),
    };
    if !hint_is_ours && !confirmed {
        let (csrf, form_cookie) = fresh_form(state, &realm);
        let action = format!("{}/protocol/openid-connect/logout", issuer(state, &realm.id));
        let origin = redirect_origin.as_deref().unwrap_or("");
        let texts = texts_for(form, headers);
        let mut page = login_page::confirm_sign_out(&action, &carried(form, CARRIED), &csrf, origin, texts);
        append_cookie(&mut page, &form_cookie);
        return page;
    }
    // The browser's own sign-in ends, with every client session opened from it; a hinted session
    // of anyone else stays as it is.
    let hinted_session = hinted_session.filter(|_| hint_is_ours);
    if let Err(failure) = sign_out::sign_out(state, &realm, session_cookie, hinted_session).await {
        return unavailable(&failure);
    }
    let mut response = match destination.and_then(|uri| url::Url::parse(uri).ok()) {
        Some(mut url) => {
            if let Some(request_state) = form.get("state") {
                url.query_pairs_mut().append_pair("state", request_state);
            }
            let mut response = StatusCode::SEE_OTHER.into_response();
            if let Ok(location) = HeaderValue::from_str(url.as_str()) {
                response.headers_mut().insert(header::LOCATION, location);
            }
            login_page::secure(response.headers_mut());
            response
        }
        None => {
            let texts = texts_for(form, headers);
            login_page::shown(StatusCode::OK, texts.signed_out, texts.close_window, texts)
        }
    };
    append_cookie(&mut response, &cookie_text(state, &realm, SESSION_COOKIE, "", Some(0)));
    response
}

/// The client the request concerns: the hint's, or the one `client_id` names (they must agree).
async fn client_of(
    state: &AppState,
    realm: &Realm,
    hint: Option<&IdTokenHint>,
    named: Option<&str>,
) -> Result<Option<std::sync::Arc<Client>>, Box<Response>> {
    let id = match (hint, named) {
        (Some(hint), Some(named)) if hint.client_id != named => {
            return Err(Box::new(bad_request("The client_id is not the client the id_token_hint was issued to.")));
        }
        (Some(hint), _) => hint.client_id.as_str(),
        (None, Some(named)) => named,
        (None, None) => return Ok(None),
    };
    match tokens::find_client(state, &realm.id, id).await {
        Ok(Some(client)) => Ok(Some(client)),
        Ok(None) => Err(Box::new(bad_request("No client of this realm has this client_id."))),
        Err(failure) => Err(Box::new(unavailable(&failure))),
    }
}

fn bad_request(explanation: &str) -> Response {
    login_page::problem(StatusCode::BAD_REQUEST, "This sign-out request cannot be answered", explanation)
}

fn unavailable(failure: &crate::runtime::error::Error) -> Response {
    tracing::error!(error = %failure, "a sign-out failed");
    login_page::problem(
        StatusCode::SERVICE_UNAVAILABLE,
        "Signing out is not possible right now",
        "Try again in a moment.",
    )
}

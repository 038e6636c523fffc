//! `GET|POST /realms/{realm}/account/password?code=…`: a page that sets a person's password with a
//! reset code given to them alone, outside any authorization request. It is where the link the
//! first start prints for the Owner of the first account leads. The rules are password
//! recovery's (`signin::recovery::reset`): the code works once, and the realm's password rules apply.

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::authorize::texts_for;
use super::cookies::{append_cookie, fresh_form, genuine_form};
use super::login_page::{self, Field, FormPage, Frame, Problem};
use super::sign_in_steps::password_refused;
use super::{Form, OAuthError};
use crate::http::AppState;
use crate::oauth::signin::{SignInError, recovery};
use crate::oauth::tokens::issuer;
use crate::store::realms::Realm;

/// `GET`: the form, the code from the link in it.
pub async fn shown(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let Ok(form) = Form::from_query(query.as_deref()) else { return unusable() };
    let Ok(realm) = super::realm(&state, &realm_id).await else { return unusable() };
    let Some(code) = form.get("code") else { return unusable() };
    render(&state, &realm, &form, &headers, code, None)
}

/// `POST`: the new password with the code.
pub async fn set(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
    form: Result<Form, OAuthError>,
) -> Response {
    let Ok(form) = form else { return unusable() };
    let Ok(realm) = super::realm(&state, &realm_id).await else { return unusable() };
    let texts = texts_for(&form, &headers);
    let code = form.get("code").unwrap_or("");
    if !genuine_form(&state, &headers, &form) {
        return render(&state, &realm, &form, &headers, code, Some(texts.form_expired));
    }
    let problem = match recovery::reset(&state, &realm, code, form.get("new_password").unwrap_or("")).await {
        Ok(()) => return login_page::shown(StatusCode::OK, texts.password_set, texts.close_window, texts),
        Err(SignInError::Refused(refusal)) => password_refused(&refusal, texts).unwrap_or(texts.code_invalid),
        Err(SignInError::Failed(failure)) => {
            tracing::error!(error = %failure, "setting a password failed");
            return login_page::problem(
                StatusCode::SERVICE_UNAVAILABLE,
                "This is not possible right now",
                "Try again in a moment.",
            );
        }
    };
    render(&state, &realm, &form, &headers, code, Some(problem))
}

fn render(
    state: &AppState,
    realm: &Realm,
    form: &Form,
    headers: &HeaderMap,
    code: &str,
    problem: Option<&str>,
) -> Response {
    let texts = texts_for(form, headers);
    let (csrf, form_cookie) = fresh_form(state, realm);
    let endpoint = format!("{}/account", issuer(state, &realm.id));
    let frame = Frame::plain(&realm.display_name, &endpoint, &csrf, texts);
    let page = FormPage {
        title: texts.choose_password.to_owned(),
        path: "password",
        fields: vec![Field::password("new_password", texts.new_password, "new-password")],
        hidden: vec![("code", code)],
        button: texts.save_password,
        problem: problem.map(|text| Problem { text, field: Some("new_password") }),
        ..FormPage::default()
    };
    let status = if problem.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
    let mut response = login_page::form_page(&frame, &page, status);
    append_cookie(&mut response, &form_cookie);
    response
}

fn unusable() -> Response {
    login_page::problem(StatusCode::BAD_REQUEST, "This link cannot be used", "It names no code, or no active realm.")
}

//! The hosted login page and the pages shown when an authorization request cannot be answered by
//! a redirect: server-rendered HTML that works without JavaScript, with every value escaped, a
//! strict Content-Security-Policy and no framing.

use std::fmt::Write as _;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::crypto::generate_secret;

/// Text escaped for HTML element content and double-quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            _ => escaped.push(c),
        }
    }
    escaped
}

/// The login form of an authorization request.
#[derive(Debug, Clone)]
pub struct LoginForm<'a> {
    /// The client's name, which the page is titled with.
    pub client_name: &'a str,
    /// Where the form posts.
    pub action: &'a str,
    /// The authorization request's parameters, posted back unchanged with the credentials.
    pub carried: &'a [(&'a str, &'a str)],
    /// The form's CSRF token.
    pub csrf: &'a str,
    pub username: &'a str,
    /// Why the last attempt was refused, shown beside the field it concerns.
    pub error: Option<&'a str>,
    /// The origin the form's answer redirects to, which `form-action` must allow.
    pub redirect_origin: &'a str,
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1c1e21}\
main{max-width:22rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:8px;\
box-shadow:0 1px 4px rgba(0,0,0,.15)}h1{font-size:1.4rem;margin:0 0 1.5rem}\
label{display:block;font-weight:600;margin:1rem 0 .3rem}input{width:100%;box-sizing:border-box;\
padding:.6rem;font-size:1rem;border:1px solid #8a8d91;border-radius:4px}\
input:focus,button:focus{outline:3px solid #1a73e8;outline-offset:1px}\
button{margin-top:1.5rem;width:100%;padding:.7rem;font-size:1rem;border:0;border-radius:4px;\
background:#1a56c4;color:#fff;cursor:pointer}.error{color:#b00020;margin:.5rem 0 0}";

/// The login page, answered `status`.
pub fn login(form: &LoginForm<'_>, status: StatusCode) -> Response {
    let nonce = generate_secret("");
    let LoginForm { client_name, action, carried, csrf, username, error, redirect_origin } = form;
    let mut hidden = String::new();
    for (name, value) in *carried {
        let _ = write!(hidden, r#"<input type="hidden" name="{}" value="{}">"#, escape(name), escape(value));
    }
    // The error is tied to the field it concerns, and announced when the page loads.
    let (described, invalid, message) = match error {
        Some(text) => (
            r#" aria-describedby="sign-in-error""#,
            r#" aria-invalid="true""#,
            format!(r#"<p id="sign-in-error" class="error" role="alert">{}</p>"#, escape(text)),
        ),
        None => ("", "", String::new()),
    };
    let autofocus = if username.is_empty() { " autofocus" } else { "" };
    let password_focus = if username.is_empty() { "" } else { " autofocus" };
    let body = format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in to {client}</title>
<style nonce="{nonce}">{STYLE}</style>
</head>
<body>
<main>
<h1>Sign in to {client}</h1>
<form method="post" action="{action}">
{hidden}<input type="hidden" name="csrf" value="{csrf}">
<label for="username">Username or email</label>
<input id="username" name="username" type="text" autocomplete="username" required value="{username}"{autofocus}{described}{invalid}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required{password_focus}{described}{invalid}>
{message}
<button type="submit">Sign in</button>
</form>
</main>
</body>
</html>
"#,
        client = escape(client_name),
        action = escape(action),
        csrf = escape(csrf),
        username = escape(username),
    );
    let policy = format!(
        "default-src 'none'; style-src 'nonce-{nonce}'; form-action 'self' {redirect_origin}; \
         frame-ancestors 'none'; base-uri 'none'"
    );
    page(status, body, &policy)
}

/// The question a sign-out without an ID token hint asks, so that no other site can sign a browser
/// out by sending it to the endpoint: a button that posts the request back with a CSRF token.
/// `redirect_origin` is where the answer may send the browser, which `form-action` must allow.
pub fn confirm_sign_out(action: &str, carried: &[(&str, &str)], csrf: &str, redirect_origin: &str) -> Response {
    let nonce = generate_secret("");
    let mut hidden = String::new();
    for (name, value) in carried {
        let _ = write!(hidden, r#"<input type="hidden" name="{}" value="{}">"#, escape(name), escape(value));
    }
    let body = format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign out</title>
<style nonce="{nonce}">{STYLE}</style>
</head>
<body>
<main>
<h1>Sign out?</h1>
<form method="post" action="{action}">
{hidden}<input type="hidden" name="csrf" value="{csrf}">
<button type="submit" autofocus>Sign out</button>
</form>
</main>
</body>
</html>
"#,
        action = escape(action),
        csrf = escape(csrf),
    );
    let policy = format!(
        "default-src 'none'; style-src 'nonce-{nonce}'; form-action 'self' {redirect_origin}; frame-ancestors 'none'; \
         base-uri 'none'"
    );
    page(StatusCode::OK, body, &policy)
}

/// A page telling why an authorization request was not answered, for requests whose client or
/// redirect URI cannot be trusted with the answer.
pub fn problem(status: StatusCode, title: &str, explanation: &str) -> Response {
    let nonce = generate_secret("");
    let body = format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style nonce="{nonce}">{STYLE}</style>
</head>
<body>
<main>
<h1>{title}</h1>
<p>{explanation}</p>
</main>
</body>
</html>
"#,
        title = escape(title),
        explanation = escape(explanation),
    );
    let policy = format!("default-src 'none'; style-src 'nonce-{nonce}'; frame-ancestors 'none'; base-uri 'none'");
    page(status, body, &policy)
}

fn page(status: StatusCode, body: String, policy: &str) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    secure(headers);
    if let Ok(policy) = HeaderValue::from_str(policy) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    response
}

/// Headers every answer of the authorization endpoint carries: never cached, never framed, no
/// referrer leaking the request's parameters.
pub fn secure(headers: &mut HeaderMap) {
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_quotes_are_escaped() {
        assert_eq!(escape(r#"<a href="x">'&'</a>"#), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    }
}

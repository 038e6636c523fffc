//! The hosted login page and the pages shown when an authorization request cannot be answered by
//! a redirect: server-rendered HTML that works without JavaScript, with every value escaped, a
//! strict Content-Security-Policy and no framing.

use std::fmt::Write as _;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::crypto::generate_secret;

/// The Content-Security-Policy source that lets a form's answer go on to `uri`: its origin, or for
/// an address without one (a native app's private-use scheme, RFC 8252) its scheme.
pub fn form_target(uri: &str) -> String {
    match url::Url::parse(uri) {
        Ok(url) => match url.origin() {
            origin @ url::Origin::Tuple(..) => origin.ascii_serialization(),
            url::Origin::Opaque(_) => format!("{}:", url.scheme()),
        },
        Err(_) => String::new(),
    }
}

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

/// A language the pages are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    English,
    French,
}

/// The words of the pages in one language.
#[derive(Debug)]
pub struct Texts {
    /// The `lang` of the page.
    pub tag: &'static str,
    /// "Sign in to", followed by the client's name.
    pub sign_in_to: &'static str,
    pub username: &'static str,
    pub password: &'static str,
    pub sign_in: &'static str,
    pub wrong_credentials: &'static str,
    pub too_many_attempts: &'static str,
    pub locked_out: &'static str,
    pub disabled: &'static str,
    pub change_password: &'static str,
    pub sign_out_question: &'static str,
    pub sign_out: &'static str,
    pub signed_out: &'static str,
    pub close_window: &'static str,
    pub choose_password: &'static str,
    pub new_password: &'static str,
    pub save_password: &'static str,
    pub password_length: &'static str,
    pub password_breached: &'static str,
    pub password_changed: &'static str,
    pub took_too_long: &'static str,
}

const ENGLISH: Texts = Texts {
    tag: "en",
    sign_in_to: "Sign in to",
    username: "Username or email",
    password: "Password",
    sign_in: "Sign in",
    wrong_credentials: "The username or password is not correct.",
    too_many_attempts: "Too many sign-in attempts. Wait a few minutes, then try again.",
    locked_out: "Too many failed sign-ins. Try again later.",
    disabled: "This account is disabled.",
    change_password: "Your password must be changed before you can sign in. Use password recovery to set a new one.",
    sign_out_question: "Sign out?",
    sign_out: "Sign out",
    signed_out: "You are signed out",
    close_window: "You can close this window.",
    choose_password: "Choose a new password",
    new_password: "New password",
    save_password: "Save the password",
    password_length: "The password is too short or too long for this service.",
    password_breached: "This password appears in a list of breached passwords. Choose another.",
    password_changed: "Your password was changed. Sign in with the new one.",
    took_too_long: "That took too long. Sign in again.",
};

const FRENCH: Texts = Texts {
    tag: "fr",
    sign_in_to: "Connexion à",
    username: "Nom d’utilisateur ou adresse e-mail",
    password: "Mot de passe",
    sign_in: "Se connecter",
    wrong_credentials: "Le nom d’utilisateur ou le mot de passe est incorrect.",
    too_many_attempts: "Trop de tentatives de connexion. Patientez quelques minutes, puis réessayez.",
    locked_out: "Trop d’échecs de connexion. Réessayez plus tard.",
    disabled: "Ce compte est désactivé.",
    change_password: "Votre mot de passe doit être changé avant de vous connecter. Utilisez la récupération du mot \
                      de passe pour en choisir un nouveau.",
    sign_out_question: "Se déconnecter ?",
    sign_out: "Se déconnecter",
    signed_out: "Vous êtes déconnecté",
    close_window: "Vous pouvez fermer cette fenêtre.",
    choose_password: "Choisissez un nouveau mot de passe",
    new_password: "Nouveau mot de passe",
    save_password: "Enregistrer le mot de passe",
    password_length: "Le mot de passe est trop court ou trop long pour ce service.",
    password_breached: "Ce mot de passe figure dans une liste de mots de passe divulgués. Choisissez-en un autre.",
    password_changed: "Votre mot de passe a été changé. Connectez-vous avec le nouveau.",
    took_too_long: "Le délai est dépassé. Connectez-vous à nouveau.",
};

/// The languages the pages are written in, as `ui_locales_supported` names them.
pub const SUPPORTED: [&str; 2] = ["en", "fr"];

impl Language {
    /// The first language of `ui_locales` (OIDC Core §3.1.2.1: space-separated, in order of
    /// preference) the pages are written in, else the browser's most preferred of
    /// `Accept-Language`, else English.
    pub fn choose(ui_locales: Option<&str>, accept_language: Option<&str>) -> Self {
        let from_ui = ui_locales.and_then(|text| text.split(' ').find_map(Self::of_tag));
        from_ui.or_else(|| accept_language.and_then(Self::preferred)).unwrap_or(Self::English)
    }

    fn of_tag(tag: &str) -> Option<Self> {
        let primary = tag.split(['-', '_']).next()?.trim();
        if primary.eq_ignore_ascii_case("en") {
            Some(Self::English)
        } else if primary.eq_ignore_ascii_case("fr") {
            Some(Self::French)
        } else {
            None
        }
    }

    /// RFC 9110 §12.5.4: the supported language of the highest weight, the first named on a tie.
    fn preferred(header: &str) -> Option<Self> {
        let mut best: Option<(Self, f32)> = None;
        for item in header.split(',').take(32) {
            let mut parts = item.split(';');
            let Some(language) = parts.next().and_then(Self::of_tag) else { continue };
            let weight = parts
                .find_map(|p| p.trim().strip_prefix("q=").and_then(|q| q.trim().parse::<f32>().ok()))
                .unwrap_or(1.0);
            if weight > 0.0 && best.is_none_or(|(_, w)| weight > w) {
                best = Some((language, weight));
            }
        }
        best.map(|(language, _)| language)
    }

    pub fn texts(self) -> &'static Texts {
        match self {
            Self::English => &ENGLISH,
            Self::French => &FRENCH,
        }
    }
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
    pub texts: &'static Texts,
    /// The client's logo (an https address) and colour (`#rrggbb`, checked when stored).
    pub logo_uri: Option<&'a str>,
    pub color: Option<&'a str>,
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
    let LoginForm { client_name, action, carried, csrf, username, error, redirect_origin, texts, logo_uri, color } =
        form;
    // The error is tied to the field it concerns, and announced when the page loads.
    let (described, invalid, message) = match error {
        Some(text) => (
            r#" aria-describedby="sign-in-error""#,
            r#" aria-invalid="true""#,
            format!(r#"<p id="sign-in-error" class="error" role="alert">{}</p>"#, escape(text)),
        ),
        None => ("", "", String::new()),
    };
    let logo = logo_uri.map(|uri| format!(r#"<img src="{}" alt="" height="48">"#, escape(uri))).unwrap_or_default();
    // Pictures only from the logo's origin; none at all without a logo.
    let images = logo_uri.and_then(|uri| url::Url::parse(uri).ok()).map(|uri| uri.origin().ascii_serialization());
    // A colour is `#rrggbb`, checked when the client was stored: safe inside the style.
    let brand = color
        .filter(|c| c.len() == 7 && c.starts_with('#') && c[1..].bytes().all(|b| b.is_ascii_hexdigit()))
        .map(|c| format!("button{{background:{c}}}input:focus,button:focus{{outline-color:{c}}}"))
        .unwrap_or_default();
    let autofocus = if username.is_empty() { " autofocus" } else { "" };
    let password_focus = if username.is_empty() { "" } else { " autofocus" };
    let title = format!("{} {}", escape(texts.sign_in_to), escape(client_name));
    let main = format!(
        r#"{logo}<h1>{title}</h1>
<form method="post" action="{action}">
{hidden}<input type="hidden" name="csrf" value="{csrf}">
<label for="username">{username_label}</label>
<input id="username" name="username" type="text" autocomplete="username" required value="{username}"{autofocus}{described}{invalid}>
<label for="password">{password_label}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required{password_focus}{described}{invalid}>
{message}
<button type="submit">{sign_in}</button>
</form>"#,
        hidden = hidden_fields(carried),
        username_label = escape(texts.username),
        password_label = escape(texts.password),
        sign_in = escape(texts.sign_in),
        action = escape(action),
        csrf = escape(csrf),
        username = escape(username),
    );
    let document =
        Document { texts, title: &title, style: &brand, main: &main, images, form_targets: Some(redirect_origin) };
    document.answer(status)
}

/// The step of a person who typed the right password but must change it: one field for the new
/// password, posted back with the request, the CSRF token and the change ticket.
pub fn change_password(form: &LoginForm<'_>, ticket: &str, status: StatusCode) -> Response {
    let LoginForm { action, carried, csrf, error, redirect_origin, texts, .. } = form;
    let (described, message) = match error {
        Some(text) => (
            r#" aria-describedby="password-error" aria-invalid="true""#,
            format!(r#"<p id="password-error" class="error" role="alert">{}</p>"#, escape(text)),
        ),
        None => ("", String::new()),
    };
    let title = escape(texts.choose_password);
    let main = format!(
        r#"<h1>{title}</h1>
<form method="post" action="{action}">
{hidden}<input type="hidden" name="csrf" value="{csrf}"><input type="hidden" name="ticket" value="{ticket}">
<label for="new-password">{label}</label>
<input id="new-password" name="new_password" type="password" autocomplete="new-password" required autofocus{described}>
{message}
<button type="submit">{save}</button>
</form>"#,
        hidden = hidden_fields(carried),
        action = escape(action),
        csrf = escape(csrf),
        ticket = escape(ticket),
        label = escape(texts.new_password),
        save = escape(texts.save_password),
    );
    let document =
        Document { texts, title: &title, style: "", main: &main, images: None, form_targets: Some(redirect_origin) };
    document.answer(status)
}

/// The question a sign-out without an ID token hint asks, so that no other site can sign a browser
/// out by sending it to the endpoint: a button that posts the request back with a CSRF token.
/// `redirect_origin` is where the answer may send the browser, which `form-action` must allow.
pub fn confirm_sign_out(
    action: &str,
    carried: &[(&str, &str)],
    csrf: &str,
    redirect_origin: &str,
    texts: &'static Texts,
) -> Response {
    let title = escape(texts.sign_out_question);
    let main = format!(
        r#"<h1>{title}</h1>
<form method="post" action="{action}">
{hidden}<input type="hidden" name="csrf" value="{csrf}">
<button type="submit" autofocus>{sign_out}</button>
</form>"#,
        hidden = hidden_fields(carried),
        sign_out = escape(texts.sign_out),
        action = escape(action),
        csrf = escape(csrf),
    );
    let document =
        Document { texts, title: &title, style: "", main: &main, images: None, form_targets: Some(redirect_origin) };
    document.answer(StatusCode::OK)
}

/// A page telling why an authorization request was not answered, for requests whose client or
/// redirect URI cannot be trusted with the answer.
pub fn problem(status: StatusCode, title: &str, explanation: &str) -> Response {
    shown(status, title, explanation, &ENGLISH)
}

/// A page with a title and one paragraph, in the language of `texts`.
pub fn shown(status: StatusCode, title: &str, explanation: &str, texts: &'static Texts) -> Response {
    let title = escape(title);
    let main = format!("<h1>{title}</h1>\n<p>{}</p>", escape(explanation));
    let document = Document { texts, title: &title, style: "", main: &main, images: None, form_targets: None };
    document.answer(status)
}

/// The hidden inputs carrying a request's parameters back.
fn hidden_fields(carried: &[(&str, &str)]) -> String {
    let mut hidden = String::new();
    for (name, value) in carried {
        let _ = write!(hidden, r#"<input type="hidden" name="{}" value="{}">"#, escape(name), escape(value));
    }
    hidden
}

/// A whole page: its language, escaped title, style beyond the common one, the inside of `<main>`,
/// and what its Content-Security-Policy allows besides its own style.
struct Document<'a> {
    texts: &'static Texts,
    title: &'a str,
    style: &'a str,
    main: &'a str,
    /// The one origin pictures may come from; none without.
    images: Option<String>,
    /// Where its form's answer may send the browser, besides the service (no form without).
    form_targets: Option<&'a str>,
}

impl Document<'_> {
    fn answer(&self, status: StatusCode) -> Response {
        let nonce = generate_secret("");
        let Document { texts, title, style, main, images, form_targets } = self;
        let body = format!(
            r#"<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style nonce="{nonce}">{STYLE}{style}</style>
</head>
<body>
<main>
{main}
</main>
</body>
</html>
"#,
            lang = texts.tag,
        );
        let images = images.as_deref().unwrap_or("'none'");
        let forms = form_targets.map(|targets| format!(" form-action 'self' {targets};")).unwrap_or_default();
        let policy = format!(
            "default-src 'none'; style-src 'nonce-{nonce}'; img-src {images};{forms} frame-ancestors 'none'; \
             base-uri 'none'"
        );
        page(status, body, &policy)
    }
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
    fn the_language_is_the_first_supported_of_ui_locales_then_the_browsers_preferred() {
        assert_eq!(Language::choose(Some("de-CH fr-CA en"), Some("en")), Language::French);
        assert_eq!(Language::choose(Some("de"), Some("de;q=1, fr;q=0.8, en;q=0.5")), Language::French);
        assert_eq!(Language::choose(None, Some("en-GB;q=0.4, fr-FR;q=0.9")), Language::French);
        assert_eq!(Language::choose(None, Some("fr;q=0, en;q=0.1")), Language::English);
        assert_eq!(Language::choose(None, Some("de")), Language::English);
        assert_eq!(Language::choose(None, None), Language::English);
    }

    #[test]
    fn a_form_may_go_on_to_the_origin_of_a_web_address_or_the_scheme_of_a_native_apps() {
        assert_eq!(form_target("https://app.example:8443/cb?x=1"), "https://app.example:8443");
        assert_eq!(form_target("com.example.app:/callback"), "com.example.app:");
    }

    #[test]
    fn markup_and_quotes_are_escaped() {
        assert_eq!(escape(r#"<a href="x">'&'</a>"#), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    }
}

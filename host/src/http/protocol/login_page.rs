//! The hosted sign-in pages, and the pages shown when an authorization request cannot be answered
//! by a redirect: server-rendered HTML that works without JavaScript, written with maud (which
//! escapes every value it is given), with a strict Content-Security-Policy and no framing. Every form of the sign-in is drawn by one
//! renderer ([`form_page`]): its fields labelled, an error tied to the field it concerns, the
//! authorization request carried along in hidden fields.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{DOCTYPE, Markup, PreEscaped, html};

use crate::kernel::crypto::generate_secret;
use crate::oauth::signin::texts::{Language, Texts};

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

/// What every page of one authorization request shares: the request, and its client's brand.
#[derive(Debug, Clone)]
pub struct Frame<'a> {
    /// The client's name, which the login page is titled with.
    pub client_name: &'a str,
    /// The authorization endpoint's address: forms post to paths under it, links lead to them.
    pub endpoint: &'a str,
    /// The authorization request's parameters, posted back unchanged with each form.
    pub carried: &'a [(&'a str, &'a str)],
    /// The form's CSRF token.
    pub csrf: &'a str,
    /// Where the request's answer redirects to, which `form-action` must allow.
    pub redirect_origin: &'a str,
    pub texts: &'static Texts,
    /// The client's logo (an https address) and colour (`#rrggbb`, checked when stored).
    pub logo_uri: Option<&'a str>,
    pub color: Option<&'a str>,
}

impl<'a> Frame<'a> {
    /// The frame of a form that serves no authorization request: unbranded, carrying nothing,
    /// posting under `endpoint` and back to this service only.
    pub fn plain(name: &'a str, endpoint: &'a str, csrf: &'a str, texts: &'static Texts) -> Self {
        Frame {
            client_name: name,
            endpoint,
            carried: &[],
            csrf,
            redirect_origin: "",
            texts,
            logo_uri: None,
            color: None,
        }
    }

    /// The address of `path` under the endpoint (`""`: the endpoint), the request in its query.
    pub fn link(&self, path: &str) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query.extend_pairs(self.carried.iter());
        let separator = if path.is_empty() { "" } else { "/" };
        format!("{}{separator}{path}?{}", self.endpoint, query.finish())
    }

    /// The endpoint's address with the request in its query, its `prompt` replaced by `prompt`.
    pub fn link_prompting(&self, prompt: &str) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query.extend_pairs(self.carried.iter().filter(|(name, _)| *name != "prompt"));
        query.append_pair("prompt", prompt);
        format!("{}?{}", self.endpoint, query.finish())
    }
}

/// One input of a form.
#[derive(Debug, Clone, Copy)]
pub struct Field<'a> {
    pub name: &'static str,
    pub label: &'static str,
    /// `text`, `email` or `password`.
    pub kind: &'static str,
    /// The `autocomplete` token that lets password managers fill it.
    pub autocomplete: &'static str,
    pub value: &'a str,
    pub required: bool,
}

impl<'a> Field<'a> {
    pub fn text(name: &'static str, label: &'static str, autocomplete: &'static str, value: &'a str) -> Self {
        Self { name, label, kind: "text", autocomplete, value, required: true }
    }

    pub fn password(name: &'static str, label: &'static str, autocomplete: &'static str) -> Self {
        Self { name, label, kind: "password", autocomplete, value: "", required: true }
    }
}

/// Why a form came back, and which of its fields that concerns (`None`: all of them).
#[derive(Debug, Clone, Copy)]
pub struct Problem<'a> {
    pub text: &'a str,
    pub field: Option<&'static str>,
}

/// A form of the sign-in.
#[derive(Debug, Clone, Default)]
pub struct FormPage<'a> {
    pub title: String,
    /// A paragraph above the fields.
    pub intro: Option<&'a str>,
    /// Lists under the paragraph, each with the sentence that introduces it.
    pub lists: Vec<(&'static str, Vec<String>)>,
    /// Where it posts, under the endpoint.
    pub path: &'static str,
    pub fields: Vec<Field<'a>>,
    /// Hidden values beyond the request and the CSRF token.
    pub hidden: Vec<(&'static str, &'a str)>,
    /// The form's button; none (empty) draws no form, where the page's passkey is its one way on.
    pub button: &'static str,
    /// A second button, posting `decision=deny` where the first posts `decision=allow`.
    pub refusal: Option<&'static str>,
    /// Another way on from the same form: a button posting `action` with this value, and its
    /// words; it needs none of the form's fields.
    pub alternative: Option<(&'static str, &'static str)>,
    pub problem: Option<Problem<'a>>,
    /// Other ways to go on, under the form, each a link drawn as a button: address and words (the
    /// login page's external identity providers).
    pub others: Vec<(String, String)>,
    /// Links under the form: address and words.
    pub links: Vec<(String, &'static str)>,
    /// An address the page reloads every two seconds, for a page that waits.
    pub refresh: Option<String>,
    /// Sign-in with a passkey, offered beside the form where the browser can.
    pub passkey: Option<PasskeyOffer>,
    /// Sign-up with a passkey instead of a password, offered in the form where the browser can.
    pub passkey_sign_up: Option<PasskeySignUpOffer>,
}

/// The passkey a sign-up form may create instead of a password: the options of
/// `navigator.credentials.create()` (JSON), for the account id `user_id`.
#[derive(Debug, Clone)]
pub struct PasskeySignUpOffer {
    pub options: String,
    pub user_id: String,
    /// The address of the passkey script.
    pub script: String,
}

/// The passkey sign-in a login page offers: a second form, shown by the passkey script only where
/// the browser has WebAuthn, that posts the assertion to `passkey` under the endpoint.
#[derive(Debug, Clone)]
pub struct PasskeyOffer {
    /// The challenge, bound to the page's form token.
    pub challenge: String,
    /// The relying party id.
    pub rp_id: String,
    /// The address of the passkey script.
    pub script: String,
}

/// A form page, answered `status`, in the client's brand.
pub fn form_page(frame: &Frame<'_>, page: &FormPage<'_>, status: StatusCode) -> Response {
    let Frame { endpoint, carried, csrf, redirect_origin, texts, logo_uri, color, .. } = frame;
    let concerned = |field: &Field<'_>| page.problem.is_some_and(|p| p.field.is_none_or(|name| name == field.name));
    // The focus goes to the first field the problem concerns, else the first empty one.
    let focused = page
        .fields
        .iter()
        .position(&concerned)
        .or_else(|| page.fields.iter().position(|f| f.value.is_empty()))
        .unwrap_or(0);
    let button_focus = page.fields.is_empty();
    let main = html! {
        @if let Some(uri) = logo_uri { img src=(uri) alt="" height="48"; }
        h1 { (page.title) }
        @if let Some(text) = page.intro { p { (text) } }
        @for (sentence, items) in page.lists.iter().filter(|(_, items)| !items.is_empty()) {
            p { (sentence) }
            ul { @for item in items { li { (item) } } }
        }
        @if !page.button.is_empty() { form method="post" action={ (endpoint) "/" (page.path) } {
            (hidden_fields(carried))
            input type="hidden" name="csrf" value=(csrf);
            (hidden_fields(&page.hidden))
            @for (at, field) in page.fields.iter().enumerate() {
                @let id = field.name.replace('_', "-");
                @let invalid = concerned(field);
                label for=(id) { (field.label) }
                input id=(id) name=(field.name) type=(field.kind) autocomplete=(field.autocomplete)
                    value=[(!field.value.is_empty()).then_some(field.value)] required[field.required]
                    autofocus[at == focused] aria-describedby=[invalid.then_some("form-error")]
                    aria-invalid=[invalid.then_some("true")];
            }
            @if let Some(offer) = &page.passkey_sign_up {
                input type="hidden" name="user_handle" value=(offer.user_id);
                input type="hidden" name="credential" value="";
            }
            @if let Some(problem) = page.problem { p id="form-error" class="error" role="alert" { (problem.text) } }
            @match page.refusal {
                None => { button type="submit" autofocus[button_focus] { (page.button) } }
                Some(refusal) => {
                    button type="submit" name="decision" value="allow" autofocus[button_focus] { (page.button) }
                    button type="submit" name="decision" value="deny" class="secondary" { (refusal) }
                }
            }
            @if let Some((action, words)) = page.alternative {
                button type="submit" name="action" value=(action) class="secondary" formnovalidate { (words) }
            }
            @if let Some(offer) = &page.passkey_sign_up {
                button type="button" id="passkey-sign-up" class="secondary" hidden data-options=(offer.options) {
                    (texts.sign_up_with_passkey)
                }
                p id="passkey-error" class="error" role="alert" hidden { (texts.passkey_not_added) }
            }
        } }
        @if let Some(offer) = &page.passkey {
            form id="passkey-sign-in" method="post" action={ (endpoint) "/passkey" } hidden
                data-challenge=(offer.challenge) data-rp=(offer.rp_id) data-lookup={ (endpoint) "/passkey/options" } {
                (hidden_fields(carried))
                input type="hidden" name="csrf" value=(csrf);
                input type="hidden" name="credential" value="";
                button type="submit" class="secondary" { (texts.sign_in_with_passkey) }
                p id="passkey-error" class="error" role="alert" hidden { (texts.passkey_failed) }
            }
        }
        @for (href, text) in &page.others { p { a class="button" href=(href) { (text) } } }
        @for (href, text) in &page.links { p { a href=(href) { (text) } } }
    };
    let (images, brand) = branded(logo_uri, color);
    let document = Document {
        texts,
        title: &page.title,
        style: &brand,
        main,
        images,
        form_targets: Some(redirect_origin),
        refresh: page.refresh.as_deref().map(|address| (2, address)),
        script: (page.passkey.as_ref().map(|offer| offer.script.as_str()))
            .or(page.passkey_sign_up.as_ref().map(|offer| offer.script.as_str())),
    };
    document.answer(status)
}

/// What a page in a client's brand allows and adds: the origin of its logo, where pictures may
/// come from (none at all without a logo), and the style of its colour.
pub(super) fn branded(logo_uri: &Option<&str>, color: &Option<&str>) -> (Option<String>, String) {
    let images = logo_uri.and_then(|uri| url::Url::parse(uri).ok()).map(|uri| uri.origin().ascii_serialization());
    // A colour is `#rrggbb`, checked when the client was stored: safe inside the style.
    let brand = color
        .filter(|c| c.len() == 7 && c.starts_with('#') && c[1..].bytes().all(|b| b.is_ascii_hexdigit()))
        .map(|c| format!("button{{background:{c}}}input:focus,button:focus{{outline-color:{c}}}"))
        .unwrap_or_default();
    (images, brand)
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
    let main = html! {
        h1 { (texts.sign_out_question) }
        form method="post" action=(action) {
            (hidden_fields(carried))
            input type="hidden" name="csrf" value=(csrf);
            button type="submit" autofocus { (texts.sign_out) }
        }
    };
    let document = Document {
        texts,
        title: texts.sign_out_question,
        style: "",
        main,
        images: None,
        form_targets: Some(redirect_origin),
        refresh: None,
        script: None,
    };
    document.answer(StatusCode::OK)
}

/// One application on the page of what a person allowed: its name, lines about it, and the value
/// its withdrawal posts as `client_id`.
#[derive(Debug, Clone)]
pub struct Allowed {
    pub name: String,
    pub lines: Vec<String>,
    pub client_id: String,
}

/// The page listing what the person allowed applications, each with a button that withdraws it
/// (a form posting `client_id` and the CSRF token to `action`), and `notice` above the list.
pub fn applications(
    texts: &'static Texts,
    action: &str,
    csrf: &str,
    allowed: &[Allowed],
    notice: Option<&str>,
) -> Response {
    let main = html! {
        h1 { (texts.your_applications) }
        @if let Some(notice) = notice { p role="status" { (notice) } }
        @if allowed.is_empty() { p { (texts.no_applications) } }
        @for one in allowed {
            section {
                h2 { (one.name) }
                ul { @for line in &one.lines { li { (line) } } }
                form method="post" action=(action) {
                    input type="hidden" name="client_id" value=(one.client_id);
                    input type="hidden" name="csrf" value=(csrf);
                    button type="submit" class="secondary" { (texts.withdraw) }
                }
            }
        }
    };
    let style = "h2{font-size:1.1rem;margin:1.5rem 0 .5rem}section+section{border-top:1px solid #dadce0}";
    let title = texts.your_applications;
    let document =
        Document { texts, title, style, main, images: None, form_targets: Some(""), refresh: None, script: None };
    document.answer(StatusCode::OK)
}

/// A page telling why an authorization request was not answered, for requests whose client or
/// redirect URI cannot be trusted with the answer.
pub fn problem(status: StatusCode, title: &str, explanation: &str) -> Response {
    shown(status, title, explanation, Language::english())
}

/// A page with a title and one paragraph, in the language of `texts`.
pub fn shown(status: StatusCode, title: &str, explanation: &str, texts: &'static Texts) -> Response {
    let main = html! { h1 { (title) } p { (explanation) } };
    let document =
        Document { texts, title, style: "", main, images: None, form_targets: None, refresh: None, script: None };
    document.answer(status)
}

/// A page that goes on to `address` at once, with a link for a browser that does not: the end of
/// a sign-in that came back from another site's form, so that the last step is a navigation of
/// its own rather than a redirect of that form (whose `form-action` may not allow it).
pub fn onward(address: &str, texts: &'static Texts) -> Response {
    let main = html! { h1 { (texts.signing_in) } p { a href=(address) { (texts.continue_on) } } };
    let document = Document {
        texts,
        title: texts.signing_in,
        style: "",
        main,
        images: None,
        form_targets: None,
        refresh: Some((0, address)),
        script: None,
    };
    document.answer(StatusCode::OK)
}

/// The hidden inputs carrying a request's parameters back.
pub(super) fn hidden_fields(carried: &[(&str, &str)]) -> Markup {
    html! { @for (name, value) in carried { input type="hidden" name=(name) value=(value); } }
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1c1e21}\
main{max-width:22rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:8px;\
box-shadow:0 1px 4px rgba(0,0,0,.15)}h1{font-size:1.4rem;margin:0 0 1.5rem}\
label{display:block;font-weight:600;margin:1rem 0 .3rem}input{width:100%;box-sizing:border-box;\
padding:.6rem;font-size:1rem;border:1px solid #8a8d91;border-radius:4px}\
input:focus,button:focus,a:focus{outline:3px solid #1a73e8;outline-offset:1px}\
button{margin-top:1.5rem;width:100%;padding:.7rem;font-size:1rem;border:0;border-radius:4px;\
background:#1a56c4;color:#fff;cursor:pointer}button.secondary{background:#fff;color:#1c1e21;\
border:1px solid #8a8d91}a.button{display:block;box-sizing:border-box;width:100%;padding:.7rem;\
text-align:center;text-decoration:none;border:1px solid #8a8d91;border-radius:4px;color:#1c1e21}li{margin:.2rem 0}.error{color:#b00020;margin:.5rem 0 0}a{color:#1a56c4}";

/// A whole page: its language, title, style beyond the common one, the inside of `<main>`, and
/// what its Content-Security-Policy allows besides its own style.
pub(super) struct Document<'a> {
    pub(super) texts: &'static Texts,
    pub(super) title: &'a str,
    pub(super) style: &'a str,
    pub(super) main: Markup,
    /// The one origin pictures may come from; none without.
    pub(super) images: Option<String>,
    /// Where its form's answer may send the browser, besides the service (no form without).
    pub(super) form_targets: Option<&'a str>,
    /// An address to reload every two seconds.
    pub(super) refresh: Option<(u32, &'a str)>,
    /// The address of a script of the service the page runs (under the page's nonce), which may
    /// call the service back.
    pub(super) script: Option<&'a str>,
}

impl Document<'_> {
    pub(super) fn answer(self, status: StatusCode) -> Response {
        let nonce = generate_secret("");
        let Document { texts, title, style, main, images, form_targets, refresh, script } = self;
        let body = html! {
            (DOCTYPE)
            html lang=(texts.tag) {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width, initial-scale=1";
                    @if let Some((seconds, address)) = refresh {
                        meta http-equiv="refresh" content={ (seconds) ";url=" (address) };
                    }
                    title { (title) }
                    style nonce=(nonce) { (PreEscaped(STYLE)) (PreEscaped(style)) }
                }
                body {
                    main { (main) }
                    @if let Some(source) = script { script nonce=(nonce) src=(source) {} }
                }
            }
        };
        let images = images.as_deref().unwrap_or("'none'");
        let forms = form_targets.map(|targets| format!(" form-action 'self' {targets};")).unwrap_or_default();
        let scripts =
            if script.is_some() { format!(" script-src 'nonce-{nonce}'; connect-src 'self';") } else { String::new() };
        let policy = format!(
            "default-src 'none'; style-src 'nonce-{nonce}'; img-src {images};{forms}{scripts} frame-ancestors 'none'; \
             base-uri 'none'"
        );
        page(status, body.into_string(), &policy)
    }
}

/// An HTML page with the headers of every page of the sign-in (and of the console), and its
/// Content-Security-Policy.
pub(crate) fn page(status: StatusCode, body: String, policy: &str) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    secure(headers);
    if let Ok(policy) = HeaderValue::from_str(policy) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    response
}

/// A 303 to `address`, with the headers of every answer of the sign-in.
pub fn see_other(address: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(location) = HeaderValue::from_str(address) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    secure(response.headers_mut());
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
    fn a_form_may_go_on_to_the_origin_of_a_web_address_or_the_scheme_of_a_native_apps() {
        assert_eq!(form_target("https://app.example:8443/cb?x=1"), "https://app.example:8443");
        assert_eq!(form_target("com.example.app:/callback"), "com.example.app:");
    }

    async fn body(response: Response) -> String {
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn every_value_of_a_form_page_is_text_never_markup() {
        let hostile = r#"x"><script>alert('&')</script>"#;
        let texts = Language::english();
        let carried = [("state", hostile)];
        let frame =
            Frame { carried: &carried, logo_uri: Some(hostile), ..Frame::plain(hostile, "/auth", hostile, texts) };
        let page = FormPage {
            title: hostile.to_owned(),
            intro: Some(hostile),
            lists: vec![("Lists:", vec![hostile.to_owned()])],
            path: "login",
            fields: vec![Field::text("username", "Username", "username", hostile)],
            button: "Go",
            problem: Some(Problem { text: hostile, field: Some("username") }),
            others: vec![(hostile.to_owned(), hostile.to_owned())],
            refresh: Some(hostile.to_owned()),
            ..FormPage::default()
        };
        let drawn = body(form_page(&frame, &page, StatusCode::OK)).await;
        assert!(!drawn.contains("<script") && !drawn.contains(r#"x">"#), "{drawn}");
        assert!(drawn.contains("x&quot;&gt;&lt;script&gt;alert('&amp;')&lt;/script&gt;"), "{drawn}");
        assert!(drawn.contains(r#"<input type="hidden" name="state" value="x&quot;&gt;"#), "{drawn}");
        let confirmed = body(confirm_sign_out(hostile, &carried, hostile, "", texts)).await;
        assert!(!confirmed.contains("<script"), "{confirmed}");
        let shown_page = body(shown(StatusCode::OK, hostile, hostile, texts)).await;
        assert!(!shown_page.contains("<script"), "{shown_page}");
    }
}

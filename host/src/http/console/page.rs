//! The console's pages: one shell (skip link, navigation, the person and their sign-out), the
//! headers every page carries, and the pages that explain a refusal or a failure.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::{Console, Listed};
use crate::http::protocol::login_page::{self, secure};
use crate::kernel::crypto::generate_secret;
use crate::runtime::error::Error;

/// The sections of the navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Summary,
    Incidents,
    Exposures,
    /// The realms, their webhooks and their delegation grants.
    Realms,
    Captures,
    SignatureCheck,
    /// API secrets and the team.
    Account,
    /// The change trail and the access log.
    Trail,
}

const SECTIONS: [(Section, &str, &str); 8] = [
    (Section::Summary, "/console/attack-protection", "Attack protection"),
    (Section::Incidents, "/console/attack-protection/incidents", "Incidents"),
    (Section::Exposures, "/console/attack-protection/exposures", "Exposures"),
    (Section::Realms, "/console/realms", "Realms"),
    (Section::Captures, "/console/webhooks/captures", "Capture endpoints"),
    (Section::SignatureCheck, "/console/webhooks/signature-check", "Signature check"),
    (Section::Account, "/console/team", "Team and secrets"),
    (Section::Trail, "/console/audit-trail", "Trail and logs"),
];

/// Colours meet WCAG AA contrast on their backgrounds; focus is always visible.
const STYLE: &str = "\
*{box-sizing:border-box}body{font-family:system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1c1e21;line-height:1.45}\
a{color:#1a4fb0}a:focus,button:focus,input:focus,select:focus,summary:focus,main:focus{outline:3px solid #1a73e8;outline-offset:2px}\
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem}.skip:focus{left:.5rem}\
header{display:flex;flex-wrap:wrap;align-items:center;gap:1rem;background:#1c2733;color:#fff;padding:.6rem 1.2rem}\
header a{color:#fff}header .brand{font-weight:700;margin-right:1rem;text-decoration:none}\
header nav ul{display:flex;gap:1rem;list-style:none;margin:0;padding:0}\
header nav a[aria-current=page]{text-decoration:underline 3px;text-underline-offset:6px}\
header .who{margin-left:auto;display:flex;gap:.8rem;align-items:center}\
main{max-width:72rem;margin:1.5rem auto;padding:0 1.2rem}h1{font-size:1.6rem;margin:.2rem 0 1rem}\
h2{font-size:1.2rem;margin:1.6rem 0 .6rem}section,.panel{background:#fff;border-radius:6px;padding:1rem 1.2rem;\
box-shadow:0 1px 3px rgba(0,0,0,.12);margin-bottom:1.2rem}\
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.45rem .5rem;border-bottom:1px solid #d5d8dc;\
vertical-align:top}th{font-weight:600}caption{text-align:left;font-weight:600;padding:.3rem 0}td.n,th.n{text-align:right}\
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));gap:.8rem;margin:0;padding:0}\
.figures div{background:#fff;border-radius:6px;padding:.7rem 1rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}\
.figures dt{font-size:.9rem;color:#4a4f55}.figures dd{margin:0;font-size:1.6rem;font-weight:700}\
form.filters{display:flex;flex-wrap:wrap;gap:.8rem;align-items:flex-end;margin-bottom:1rem}\
label{display:block;font-weight:600;font-size:.9rem;margin-bottom:.2rem}input,select{font-size:1rem;padding:.35rem .45rem;\
border:1px solid #6b7075;border-radius:4px;background:#fff;color:#1c1e21}\
button{font-size:1rem;padding:.4rem .9rem;border-radius:4px;border:1px solid #1a4fb0;background:#1a4fb0;color:#fff;cursor:pointer}\
button.quiet{background:#fff;color:#1a4fb0}header button{background:transparent;border-color:#fff;color:#fff}\
button.danger{background:#a3141f;border-color:#a3141f}form.inline{display:inline}\
.pages{display:flex;gap:1rem;align-items:center;margin-top:1rem}.notice{border-left:4px solid #a3141f;padding:.6rem 1rem;background:#fff}\
label.inline{display:inline;font-weight:400}fieldset{border:1px solid #d5d8dc;border-radius:4px;margin:.6rem 0}\
form div{margin:.4rem 0}pre{white-space:pre-wrap;word-break:break-all;background:#f4f5f7;padding:.5rem}\
.tag{display:inline-block;padding:0 .4rem;border:1px solid currentColor;border-radius:3px;font-size:.85rem}\
svg text{font-family:system-ui,sans-serif;font-size:11px;fill:#1c1e21}";

/// A page of a signed-in person.
pub struct Shell<'a> {
    pub console: &'a Console,
    pub section: Section,
    pub title: &'a str,
}

impl Shell<'_> {
    /// The whole page around `content`, answered with `status`.
    pub fn answer(&self, status: StatusCode, content: Markup) -> Response {
        self.answer_with_script(status, content, None)
    }

    /// The page with a script of the console's own, allowed by the page's nonce alone.
    pub fn answer_with_script(&self, status: StatusCode, content: Markup, script: Option<&str>) -> Response {
        let nonce = generate_secret("");
        let who = self.console.caller.actor.username.as_deref().unwrap_or("you");
        let body = html! {
            (DOCTYPE)
            html lang="en" {
                (head(self.title, &nonce))
                body {
                    a.skip href="#main" { "Skip to content" }
                    header {
                        a.brand href="/console" { "Castellan" }
                        nav aria-label="Console" {
                            ul {
                                @for (section, address, name) in SECTIONS {
                                    li { a href=(address) aria-current=[(section == self.section).then_some("page")] { (name) } }
                                }
                            }
                        }
                        div.who {
                            span { "Signed in as " strong { (who) } }
                            form.inline method="post" action="/console/sign-out" {
                                (csrf(self.console))
                                button type="submit" { "Sign out" }
                            }
                        }
                    }
                    main #main tabindex="-1" {
                        h1 { (self.title) }
                        (content)
                    }
                    @if let Some(script) = script { script nonce=(nonce) { (PreEscaped(script)) } }
                }
            }
        };
        respond(status, body.into_string(), &nonce)
    }
}

/// The `head` of every page: its title and the style its nonce allows.
fn head(title: &str, nonce: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) " · Castellan console" }
            style nonce=(nonce) { (PreEscaped(STYLE)) }
        }
    }
}

/// The hidden field that carries the session's CSRF token in every form.
pub fn csrf(console: &Console) -> Markup {
    html! { input type="hidden" name="csrf" value=(console.session.csrf_token); }
}

/// The form that turns something Active off, or anything else back on: its `status` is the current.
pub fn switch(console: &Console, action: &str, status: &str, name: &str) -> Markup {
    let (next, label) = if status == "Active" { ("Disabled", "Turn off") } else { ("Active", "Turn on") };
    html! {
        form.inline method="post" action=(action) {
            (csrf(console)) input type="hidden" name="status" value=(next);
            button.quiet type="submit" { (label) " " (name) }
        }
    }
}

/// The form that removes something (`action` ends in `/delete`).
pub fn remove(console: &Console, action: &str, name: &str) -> Markup {
    html! { form.inline method="post" action=(action) { (csrf(console)) button.danger type="submit" { "Remove " (name) } } }
}

/// Previous and next links of a paged list, each keeping the page's other parameters (`kept`,
/// each as `&name=value`).
pub fn pages<T>(listed: &Listed<T>, kept: &str) -> Markup {
    let total_pages = listed.total_pages();
    html! {
        nav.pages aria-label="Pages" {
            @if listed.page_number > 1 { a href={ "?pageNumber=" (listed.page_number - 1) (kept) } rel="prev" { "Previous page" } }
            @if listed.total_at_least {
                span { "Page " (listed.page_number) " of more than " (total_pages) }
            } @else {
                span { "Page " (listed.page_number) " of " (total_pages.max(1)) }
            }
            @if i64::from(listed.page_number) < total_pages || (listed.total_at_least && listed.items.len() == listed.page_size as usize) {
                a href={ "?pageNumber=" (listed.page_number + 1) (kept) } rel="next" { "Next page" }
            }
        }
    }
}

/// A page without the shell: for whoever is not signed in.
pub fn plain(status: StatusCode, title: &str, message: &str, link: Option<(&str, &str)>) -> Response {
    let nonce = generate_secret("");
    let body = html! {
        (DOCTYPE)
        html lang="en" {
            (head(title, &nonce))
            body {
                main #main {
                    h1 { (title) }
                    p { (message) }
                    @if let Some((address, text)) = link { p { a href=(address) { (text) } } }
                }
            }
        }
    };
    respond(status, body.into_string(), &nonce)
}

/// An operation refused what the page asked: its status and first message, for people. A failure
/// of the service is told as one, in general words.
pub fn refused(error: &Error) -> Response {
    let status = error.status();
    let title = match status {
        _ if status.is_server_error() => return failure(error),
        StatusCode::FORBIDDEN => "Not permitted",
        StatusCode::NOT_FOUND => "Not found",
        StatusCode::TOO_MANY_REQUESTS => "Too many requests",
        _ => "Refused",
    };
    let message = match error {
        Error::Validation(refused) => refused.first().map(|n| n.message.clone()),
        _ => None,
    };
    let message = message.unwrap_or_else(|| error.to_string());
    plain(status, title, &message, Some(("/console", "Back to the console")))
}

/// The service could not answer.
pub fn failure(error: &Error) -> Response {
    if error.status().is_server_error() {
        tracing::error!(%error, "a console page failed");
    }
    let message = "The service could not answer this page. Try again in a moment.";
    plain(error.status(), "Something went wrong", message, Some(("/console", "Back to the console")))
}

/// A piece of a page, for a page's script to put in place.
pub fn fragment(content: Markup) -> Response {
    respond(StatusCode::OK, content.into_string(), &generate_secret(""))
}

/// A 303 to `address`, with the headers of every console answer.
pub fn see_other(address: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(location) = HeaderValue::from_str(address) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    secure(response.headers_mut());
    response
}

fn respond(status: StatusCode, body: String, nonce: &str) -> Response {
    let policy = format!(
        "default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'; img-src 'self'; \
         connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    );
    login_page::page(status, body, &policy)
}

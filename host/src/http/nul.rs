//! U+0000 in a request's path or query. No identifier, name or search term holds it, PostgreSQL
//! cannot store it in text and SQLite can, so it is refused at the edge, the same on every backend,
//! before a handler reads the request: in the admin envelope (`ValidationFailed` naming the path
//! or query parameter) or, at the protocol endpoints, as an RFC 6749 `invalid_request`.

use axum::extract::{MatchedPath, OriginalUri, Request};
use axum::http::Uri;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use url::form_urlencoded;

use super::protocol::forbidden_character;
use crate::kernel::validate::Rule;
use crate::runtime::error::Error;

/// The part of the request that holds U+0000 (percent-encoded: no request line carries the byte
/// itself): the path parameter of `template` (or `path` when it names none), or the query
/// parameter.
pub fn holder(uri: &Uri, template: Option<&str>) -> Option<String> {
    let whole = uri.path_and_query().map_or("", |p| p.as_str());
    if !whole.contains("%00") {
        return None;
    }
    let named: Vec<&str> = template.map(|t| t.split('/').collect()).unwrap_or_default();
    for (index, segment) in uri.path().split('/').enumerate() {
        if percent_decoded_holds_nul(segment) {
            // A trailing wildcard (`{*rest}`) names every segment from its own on.
            let wildcard = named.last().filter(|n| n.starts_with("{*")).map(|_| named.len() - 1);
            let at = wildcard.map_or(index, |start| index.min(start));
            let name = named.get(at).and_then(|n| n.strip_prefix('{')).and_then(|n| n.strip_suffix('}'));
            return Some(name.map_or("path", |n| n.trim_start_matches('*')).to_owned());
        }
    }
    let query = uri.query()?;
    form_urlencoded::parse(query.as_bytes())
        .find(|(name, value)| name.contains('\0') || value.contains('\0'))
        .map(|(name, _)| name.replace('\0', ""))
}

fn percent_decoded_holds_nul(segment: &str) -> bool {
    percent_encoding::percent_decode_str(segment).any(|byte| byte == 0)
}

/// The part of the request that holds U+0000. Inside a nested router the request's URI lacks the
/// prefix its matched template has, so the original URI is read.
fn holder_of(request: &Request) -> Option<String> {
    let uri = request.extensions().get::<OriginalUri>().map_or(request.uri(), |original| &original.0);
    holder(uri, request.extensions().get::<MatchedPath>().map(MatchedPath::as_str))
}

/// For the admin API and the other JSON edges.
pub async fn refuse_in_admin(request: Request, next: Next) -> Response {
    match holder_of(&request) {
        Some(field) => {
            let message = format!("{field} contains the character U+0000");
            Error::invalid(field, Rule::Character, message).into_response()
        }
        None => next.run(request).await,
    }
}

/// For the protocol endpoints.
pub async fn refuse_in_protocol(request: Request, next: Next) -> Response {
    match holder_of(&request) {
        Some(field) => forbidden_character(&field).into_response(),
        None => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(uri: &str, template: Option<&str>) -> Option<String> {
        holder(&uri.parse::<Uri>().unwrap(), template)
    }

    #[test]
    fn names_the_path_parameter_or_query_parameter_that_holds_it() {
        assert_eq!(found("/realms/%00", Some("/realms/{realm}")).as_deref(), Some("realm"));
        assert_eq!(found("/realms/a%00b/clients", Some("/realms/{realm}/clients")).as_deref(), Some("realm"));
        assert_eq!(found("/captures/t/%00", Some("/captures/{token}/{*rest}")).as_deref(), Some("rest"));
        assert_eq!(found("/captures/t/a/b/%00", Some("/captures/{token}/{*rest}")).as_deref(), Some("rest"));
        assert_eq!(found("/api/v1/admin/realms/%00", Some("/api/v1/admin/realms/{realm}")).as_deref(), Some("realm"));
        assert_eq!(found("/realms/%00", None).as_deref(), Some("path"));
        assert_eq!(found("/realms?searchTerm=%00", Some("/realms")).as_deref(), Some("searchTerm"));
        assert_eq!(found("/realms?a=1&sort%00By=x", Some("/realms")).as_deref(), Some("sortBy"));
    }

    #[test]
    fn other_text_passes() {
        assert_eq!(found("/realms/acme?searchTerm=100%25", Some("/realms/{realm}")), None);
        assert_eq!(found("/realms/a%2500", Some("/realms/{realm}")), None);
        assert_eq!(found("/realms/a%20b?x=%0A", Some("/realms/{realm}")), None);
    }
}

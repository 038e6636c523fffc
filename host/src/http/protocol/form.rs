//! The form-encoded parameters of a protocol request (a body, or a query string read by the same
//! rules).

use std::collections::HashSet;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, StatusCode, header};

use super::{MAX_SCOPES, OAuthError};
use crate::http::AppState;
use crate::runtime::error::OAuthCode;

/// Most parameters one protocol form may carry; a form with more is refused before the rest is
/// read. The longest grant (token exchange with client authentication in the body) needs eleven.
pub const MAX_FORM_PARAMETERS: usize = 64;
/// A form-encoded request body (RFC 6749 §3.2: no parameter more than once), read in one pass:
/// at most [`MAX_FORM_PARAMETERS`] parameters, none repeated, no U+0000 in a name or value.
#[derive(Debug, Default)]
pub struct Form {
    pairs: Vec<(String, String)>,
}

impl FromRequest<AppState> for Form {
    type Rejection = OAuthError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, OAuthError> {
        Self::require_form_type(request.headers())?;
        let bytes = Bytes::from_request(request, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                OAuthError::new(
                    OAuthCode::PayloadTooLarge,
                    format!("the body is larger than {} bytes", state.settings.max_body_bytes),
                )
            } else {
                OAuthError::new(OAuthCode::UnreadableBody, "the body could not be read")
            }
        })?;
        Self::parse_body(&bytes)
    }
}

impl Form {
    fn require_form_type(headers: &HeaderMap) -> Result<(), OAuthError> {
        let form_type = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"));
        if form_type {
            Ok(())
        } else {
            Err(OAuthError::new(
                OAuthCode::UnsupportedContentType,
                "the body must be application/x-www-form-urlencoded",
            ))
        }
    }

    /// A form of parameters read before, and kept.
    pub fn from_pairs(pairs: Vec<(String, String)>) -> Self {
        Self { pairs }
    }

    /// The parameters of a query string (none when absent), read by the same rules as a body.
    pub fn from_query(query: Option<&str>) -> Result<Self, OAuthError> {
        Self::parse_body(query.unwrap_or("").as_bytes())
    }

    fn parse_body(body: &[u8]) -> Result<Self, OAuthError> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        let mut names = HashSet::new();
        for (name, value) in url::form_urlencoded::parse(body) {
            if pairs.len() == MAX_FORM_PARAMETERS {
                return Err(OAuthError::new(
                    OAuthCode::TooManyParameters,
                    format!("a request carries at most {MAX_FORM_PARAMETERS} parameters"),
                ));
            }
            if name.contains('\0') || value.contains('\0') {
                return Err(forbidden_character(&name));
            }
            if !names.insert(name.clone()) {
                return Err(OAuthError::new(OAuthCode::RepeatedParameter, format!("{name} is sent more than once")));
            }
            pairs.push((name.into_owned(), value.into_owned()));
        }
        Ok(Self { pairs })
    }

    /// The parameter's value; an empty value counts as absent (RFC 6749 §3.1).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty())
    }

    pub fn require(&self, name: &str) -> Result<&str, OAuthError> {
        self.get(name).ok_or_else(|| OAuthError::new(OAuthCode::MissingParameter, format!("{name} is required")))
    }

    /// The distinct scopes of `scope` (RFC 6749 §3.3: space-delimited, order without meaning), in
    /// the order first named; `None` without the parameter.
    pub fn scopes(&self) -> Result<Option<Vec<String>>, OAuthError> {
        let Some(text) = self.get("scope") else { return Ok(None) };
        let mut seen = HashSet::new();
        let mut scopes = Vec::new();
        for scope in text.split(' ').filter(|s| !s.is_empty()) {
            if seen.insert(scope) {
                if scopes.len() == MAX_SCOPES {
                    return Err(OAuthError::new(
                        OAuthCode::TooManyScopes,
                        format!("a request names at most {MAX_SCOPES} scopes"),
                    ));
                }
                scopes.push(scope.to_owned());
            }
        }
        Ok(Some(scopes))
    }
}

/// The refusal of text holding U+0000, which no identifier, name or secret contains (and which
/// PostgreSQL cannot store): the same on every backend.
pub fn forbidden_character(name: &str) -> OAuthError {
    let name: String = name.chars().filter(|c| *c != '\0').collect();
    OAuthError::new(OAuthCode::ForbiddenCharacter, format!("{name} contains the character U+0000"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(body: &str) -> Result<Form, OAuthError> {
        Form::parse_body(body.as_bytes())
    }

    fn refusal(body: &str) -> &'static str {
        form(body).err().map_or("accepted", |e| e.code.as_str())
    }

    #[test]
    fn requested_scopes_are_split_once_each_in_the_order_first_named() {
        let scopes = form("scope=+a++b+a+c").unwrap().scopes().unwrap();
        assert_eq!(scopes, Some(vec!["a".to_owned(), "b".to_owned(), "c".to_owned()]));
        assert_eq!(form("grant_type=x").unwrap().scopes().unwrap(), None);
        let at_limit: Vec<String> = (0..MAX_SCOPES).map(|i| format!("s{i}")).collect();
        let repeated = format!("scope={}+s0+s1", at_limit.join("+"));
        assert_eq!(form(&repeated).unwrap().scopes().unwrap().map(|s| s.len()), Some(MAX_SCOPES));
        let over = format!("scope={}+one-more", at_limit.join("+"));
        assert_eq!(form(&over).unwrap().scopes().err().map(|e| e.code), Some(OAuthCode::TooManyScopes));
    }

    #[test]
    fn a_form_is_refused_at_its_first_parameter_past_the_limit_or_repeated() {
        let fits: Vec<String> = (0..MAX_FORM_PARAMETERS).map(|i| format!("p{i}=")).collect();
        assert!(form(&fits.join("&")).is_ok());
        assert_eq!(refusal(&format!("{}&one=more", fits.join("&"))), "TooManyParameters");
        assert_eq!(refusal("a=1&b=2&a=3"), "RepeatedParameter");
        assert_eq!(refusal("a=x%00y"), "ForbiddenCharacter");
        assert_eq!(refusal("a%00=1"), "ForbiddenCharacter");
    }

    mod properties {
        use proptest::prelude::*;

        use super::super::*;

        fn text_without_nul() -> impl Strategy<Value = String> {
            any::<String>().prop_map(|s| s.replace('\0', ""))
        }

        proptest! {
            /// Parameters sent once each, of any text without U+0000, are read back as sent (an
            /// empty value as absent).
            #[test]
            fn parameters_sent_once_are_read_back_as_sent(
                pairs in prop::collection::btree_map(
                    text_without_nul().prop_filter("a name", |n| !n.is_empty()),
                    text_without_nul(),
                    0..MAX_FORM_PARAMETERS,
                ),
            ) {
                let mut body = url::form_urlencoded::Serializer::new(String::new());
                for (name, value) in &pairs {
                    body.append_pair(name, value);
                }
                let form = Form::parse_body(body.finish().as_bytes()).unwrap();
                for (name, value) in &pairs {
                    prop_assert_eq!(form.get(name), Some(value.as_str()).filter(|v| !v.is_empty()));
                }
            }

            /// Any bytes are read or refused, never more than the limit of parameters kept.
            #[test]
            fn any_body_is_read_or_refused_within_the_limit(body in prop::collection::vec(any::<u8>(), 0..2048)) {
                if let Ok(form) = Form::parse_body(&body) {
                    prop_assert!(form.pairs.len() <= MAX_FORM_PARAMETERS);
                    prop_assert!(form.pairs.iter().all(|(n, v)| !n.contains('\0') && !v.contains('\0')));
                }
            }
        }
    }
}

//! Admission of clients known by a metadata document, decided by `policies/metadata_documents.cedar`:
//! may a client whose `client_id` is the address of its metadata document, served from this
//! host, sign people in to this realm for these scopes and this resource?
//!
//! The host builds the facts from the realm's settings and the request; the policies decide. The
//! service asks twice: before it fetches a document (the host alone, nothing asked yet), and for
//! every authorization request of such a client.

use std::collections::HashSet;

use cedar_policy::{Entity, RestrictedExpression};

use super::refusals::{Code, Ruling, strings};
use super::{Authorizer, EvaluationError, uid};

/// Why a metadata-document client is not admitted; each is an OAuth error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// Not from a host the realm admits (or nothing permits it at all).
    UnauthorizedClient,
    InvalidScope,
    InvalidTarget,
}

impl Code for Refusal {
    const ACTION: &'static str = "admit";
    const UNPERMITTED: Self = Self::UnauthorizedClient;

    fn all() -> &'static [Self] {
        &[Self::UnauthorizedClient, Self::InvalidScope, Self::InvalidTarget]
    }

    fn code(self) -> &'static str {
        match self {
            Self::UnauthorizedClient => "unauthorized_client",
            Self::InvalidScope => "invalid_scope",
            Self::InvalidTarget => "invalid_target",
        }
    }
}

/// Allowed, or refused with the code of the policy that answers.
pub type AdmissionVerdict = Ruling<Refusal>;

/// The resource server a request names, as the policies see it.
#[derive(Debug, Clone, Copy)]
pub struct ResourceFacts<'a> {
    pub address: &'a str,
    /// Whether it accepts self-registered clients' tokens.
    pub accepts_self_registered: bool,
}

/// A metadata-document client's request, as the policies see it.
#[derive(Debug, Clone, Copy)]
pub struct AdmissionFacts<'a> {
    pub realm_id: &'a str,
    /// The client's id: its metadata document's address.
    pub client_id: &'a str,
    /// The host of that address.
    pub host: &'a str,
    /// The realm's `metadataDocumentHosts`.
    pub listed_hosts: &'a [String],
    /// The scopes asked for; none before the document is fetched.
    pub scopes: &'a [String],
    /// The scopes the realm lets self-registered clients have.
    pub allowed_scopes: &'a [String],
    pub resource: Option<ResourceFacts<'a>>,
}

/// The patterns of a host list that match `host`: the host itself, `*.` before each domain it
/// is under, and `*`. `a.b.example` gives `a.b.example`, `*.b.example`, `*.example` and `*`.
pub fn host_patterns(host: &str) -> Vec<String> {
    let mut patterns = vec![host.to_owned(), "*".to_owned()];
    let mut rest = host;
    while let Some((_, parent)) = rest.split_once('.') {
        patterns.push(format!("*.{parent}"));
        rest = parent;
    }
    patterns
}

impl Authorizer {
    /// Decides whether the client of `facts` is admitted for what it asks.
    pub fn decide_admission(&self, facts: &AdmissionFacts<'_>) -> Result<AdmissionVerdict, EvaluationError> {
        let client = uid("MetadataDocumentClient", facts.client_id)?;
        let realm = uid("Realm", facts.realm_id)?;
        let entities = vec![
            Entity::new_no_attrs(client.clone(), HashSet::new()),
            Entity::new_no_attrs(realm.clone(), HashSet::new()),
        ];
        let mut context = vec![
            ("host".to_owned(), RestrictedExpression::new_string(facts.host.to_owned())),
            ("host_patterns".to_owned(), strings(&host_patterns(facts.host))),
            ("listed_hosts".to_owned(), strings(facts.listed_hosts)),
            ("scopes".to_owned(), strings(facts.scopes)),
            ("allowed_scopes".to_owned(), strings(facts.allowed_scopes)),
        ];
        if let Some(resource) = facts.resource {
            context.push(("resource".to_owned(), RestrictedExpression::new_string(resource.address.to_owned())));
            context.push((
                "resource_accepts_self_registered".to_owned(),
                RestrictedExpression::new_bool(resource.accepts_self_registered),
            ));
        }
        self.admission.decide(self, (client, realm), context, entities)
    }
}

/// Admission cases of `policies/fixtures` (files with `"kind": "admission"`).
pub(super) mod fixtures {
    use std::path::Path;

    use serde::Deserialize;

    use super::super::fixtures::{CaseOutcome, Expected};
    use super::{AdmissionFacts, Authorizer, ResourceFacts};

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub(in crate::authz) struct Case {
        name: String,
        /// The realm's `metadataDocumentHosts`.
        listed_hosts: Vec<String>,
        /// The realm's `registrationScopes` with `openid`, `profile` and `email`.
        #[serde(default)]
        allowed_scopes: Vec<String>,
        /// The client's id, an https address.
        client_id: String,
        #[serde(default)]
        scopes: Vec<String>,
        #[serde(default)]
        resource: Option<CaseResource>,
        decision: Expected,
        #[serde(default, rename = "errorCode")]
        error_code: Option<String>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct CaseResource {
        address: String,
        accepts_self_registered_clients: bool,
    }

    pub(in crate::authz) fn run_case(authorizer: &Authorizer, path: &Path, case: Case) -> Result<CaseOutcome, String> {
        let failed = |why: String| format!("{}: case `{}`: {why}", path.display(), case.name);
        let host = url::Url::parse(&case.client_id)
            .ok()
            .and_then(|url| url.host_str().map(str::to_owned))
            .ok_or_else(|| failed("clientId must be an address with a host".into()))?;
        let facts = AdmissionFacts {
            realm_id: "fixture-realm",
            client_id: &case.client_id,
            host: &host,
            listed_hosts: &case.listed_hosts,
            scopes: &case.scopes,
            allowed_scopes: &case.allowed_scopes,
            resource: case.resource.as_ref().map(|r| ResourceFacts {
                address: &r.address,
                accepts_self_registered: r.accepts_self_registered_clients,
            }),
        };
        let verdict = authorizer.decide_admission(&facts).map_err(|e| failed(e.to_string()))?;
        let (passed, detail) = verdict.judged(case.decision, case.error_code.as_deref());
        Ok(CaseOutcome { file: path.to_owned(), name: case.name, passed, detail })
    }

    #[cfg(test)]
    mod tests {
        use super::super::host_patterns;

        #[test]
        fn a_host_matches_itself_its_parent_domains_wildcards_and_the_star() {
            assert_eq!(host_patterns("a.b.example"), ["a.b.example", "*", "*.b.example", "*.example"]);
            assert_eq!(host_patterns("localhost"), ["localhost", "*"]);
        }
    }
}

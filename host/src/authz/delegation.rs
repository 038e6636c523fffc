//! Delegation ceilings, decided by `policies/delegation.cedar`.
//!
//! The host builds the entities from the grant, the subject token and the request; the policies
//! decide; a refusal's error code and precedence come from the annotations of the policy that
//! refused. One decision is made per grant: a request is allowed when one grant allows all of it.

use std::collections::{HashMap, HashSet};

use cedar_policy::{Entity, EntityUid, RestrictedExpression};
use chrono::{DateTime, Utc};

use super::refusals::{Code, Ruling, evaluation, strings};
use super::{Authorizer, EvaluationError, uid};

/// Why a grant does not allow an exchange; each is an `error_code` of the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Refusal {
    NotPermitted,
    ScopesExceedGrant,
    ResourceExceedsGrant,
    DepthExceeded,
    /// The sign-in behind the subject token is below the grant's level of assurance.
    AssuranceTooLow,
}

impl Code for Refusal {
    const ACTION: &'static str = "delegate";
    // No permit applied (a grant of another client or person): no delegation at all.
    const UNPERMITTED: Self = Self::NotPermitted;

    fn all() -> &'static [Self] {
        &[
            Self::NotPermitted,
            Self::ScopesExceedGrant,
            Self::ResourceExceedsGrant,
            Self::DepthExceeded,
            Self::AssuranceTooLow,
        ]
    }

    fn code(self) -> &'static str {
        Refusal::code(self)
    }
}

impl Refusal {
    pub fn code(self) -> &'static str {
        match self {
            Self::NotPermitted => "DelegationNotPermitted",
            Self::ScopesExceedGrant => "DelegationScopesExceedGrant",
            Self::ResourceExceedsGrant => "DelegationResourceExceedsGrant",
            Self::DepthExceeded => "DelegationDepthExceeded",
            Self::AssuranceTooLow => "DelegationAssuranceTooLow",
        }
    }
}

/// A grant as the policies see it.
#[derive(Debug, Clone, Copy)]
pub struct GrantFacts<'a> {
    pub id: &'a str,
    pub client_id: &'a str,
    pub subject_user_id: &'a str,
    pub scopes: &'a [String],
    pub max_depth: i64,
    pub allowed_resources: &'a [String],
    pub organization_id: Option<&'a str>,
    /// Epoch milliseconds.
    pub expires_at: Option<DateTime<Utc>>,
    /// The rank of the least level of assurance the grant asks for (1 to 4).
    pub minimum_level: Option<i64>,
}

/// The exchange asked for, as the policies see it.
#[derive(Debug, Clone, Copy)]
pub struct ExchangeFacts<'a> {
    pub realm_id: &'a str,
    /// The acting client.
    pub client_id: &'a str,
    /// The person the subject token is about.
    pub person_id: &'a str,
    /// The organizations the person belongs to, of those the grant names.
    pub person_organizations: &'a [String],
    /// Epoch milliseconds.
    pub now: DateTime<Utc>,
    pub scopes: &'a [String],
    pub subject_scopes: &'a [String],
    pub client_scopes: &'a [String],
    /// Actors already in the subject token.
    pub depth: i64,
    pub resource: Option<&'a str>,
    /// The rank of the level the sign-in behind the subject token reached (1 to 4).
    pub subject_level: i64,
}

/// Allowed, or refused with the code of the policy that answers.
pub type DelegationVerdict = Ruling<Refusal>;

impl Authorizer {
    /// Decides whether `grant` allows the whole `exchange`.
    pub fn decide_delegation(
        &self,
        grant: &GrantFacts<'_>,
        exchange: &ExchangeFacts<'_>,
    ) -> Result<DelegationVerdict, EvaluationError> {
        let client = uid("Client", &format!("{}/{}", exchange.realm_id, exchange.client_id))?;
        let person = uid("Person", exchange.person_id)?;
        let grant_uid = uid("DelegationGrant", grant.id)?;
        let organizations: Vec<EntityUid> =
            exchange.person_organizations.iter().map(|id| uid("Organization", id)).collect::<Result<_, _>>()?;

        let mut entities = vec![
            Entity::new_no_attrs(client.clone(), HashSet::new()),
            Entity::new_no_attrs(person.clone(), organizations.iter().cloned().collect()),
        ];
        entities.extend(organizations.iter().map(|org| Entity::new_no_attrs(org.clone(), HashSet::new())));
        let grant_client = uid("Client", &format!("{}/{}", exchange.realm_id, grant.client_id))?;
        let grant_subject = uid("Person", grant.subject_user_id)?;
        let mut attributes = HashMap::from([
            ("client".to_owned(), RestrictedExpression::new_entity_uid(grant_client)),
            ("subject".to_owned(), RestrictedExpression::new_entity_uid(grant_subject)),
            ("scopes".to_owned(), strings(grant.scopes)),
            ("max_depth".to_owned(), RestrictedExpression::new_long(grant.max_depth)),
            ("allowed_resources".to_owned(), strings(grant.allowed_resources)),
        ]);
        if let Some(organization) = grant.organization_id {
            let organization = uid("Organization", organization)?;
            if !organizations.contains(&organization) {
                entities.push(Entity::new_no_attrs(organization.clone(), HashSet::new()));
            }
            attributes.insert("organization".into(), RestrictedExpression::new_entity_uid(organization));
        }
        if let Some(until) = grant.expires_at {
            attributes.insert("expires_at".into(), RestrictedExpression::new_long(until.timestamp_millis()));
        }
        if let Some(level) = grant.minimum_level {
            attributes.insert("minimum_level".into(), RestrictedExpression::new_long(level));
        }
        entities.push(Entity::new(grant_uid.clone(), attributes, HashSet::new()).map_err(evaluation)?);

        let mut context = vec![
            ("grant".to_owned(), RestrictedExpression::new_entity_uid(grant_uid)),
            ("now".to_owned(), RestrictedExpression::new_long(exchange.now.timestamp_millis())),
            ("scopes".to_owned(), strings(exchange.scopes)),
            ("subject_scopes".to_owned(), strings(exchange.subject_scopes)),
            ("client_scopes".to_owned(), strings(exchange.client_scopes)),
            ("depth".to_owned(), RestrictedExpression::new_long(exchange.depth)),
            ("subject_level".to_owned(), RestrictedExpression::new_long(exchange.subject_level)),
        ];
        if let Some(resource) = exchange.resource {
            context.push(("resource".to_owned(), RestrictedExpression::new_string(resource.to_owned())));
        }
        self.delegation.decide(self, (client, person), context, entities)
    }
}

/// Delegation cases of `policies/fixtures` (files with `"kind": "delegation"`).
pub(super) mod fixtures {
    use std::path::Path;

    use chrono::{DateTime, TimeDelta, Utc};
    use serde::Deserialize;

    use super::super::fixtures::{CaseOutcome, Expected};
    use super::{Authorizer, ExchangeFacts, GrantFacts};

    /// The instant every fixture is decided at.
    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_800_000_000_000).unwrap_or_default()
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub(in crate::authz) struct Case {
        name: String,
        grant: CaseGrant,
        request: CaseRequest,
        decision: Expected,
        #[serde(default, rename = "errorCode")]
        error_code: Option<String>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct CaseGrant {
        #[serde(default = "agent")]
        client: String,
        #[serde(default = "person")]
        subject: String,
        scopes: Vec<String>,
        #[serde(default)]
        max_depth: i64,
        #[serde(default)]
        allowed_resources: Vec<String>,
        #[serde(default)]
        organization: Option<String>,
        /// Seconds from now; negative when the term has passed.
        #[serde(default)]
        expires_in_seconds: Option<i64>,
        /// The least level of assurance, by rank (1 to 4).
        #[serde(default)]
        minimum_level: Option<i64>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct CaseRequest {
        #[serde(default = "agent")]
        client: String,
        #[serde(default = "person")]
        person: String,
        scopes: Vec<String>,
        subject_scopes: Vec<String>,
        /// The scopes the client may request; the grant's when absent.
        #[serde(default)]
        client_scopes: Option<Vec<String>>,
        #[serde(default)]
        depth: i64,
        #[serde(default)]
        resource: Option<String>,
        #[serde(default)]
        organizations: Vec<String>,
        /// The rank of the subject token's sign-in (1 when absent).
        #[serde(default = "one")]
        subject_level: i64,
    }

    fn one() -> i64 {
        1
    }

    fn agent() -> String {
        "agent".into()
    }

    fn person() -> String {
        "ada".into()
    }

    pub(in crate::authz) fn run_case(authorizer: &Authorizer, path: &Path, case: Case) -> Result<CaseOutcome, String> {
        let grant = GrantFacts {
            id: "fixture-grant",
            client_id: &case.grant.client,
            subject_user_id: &case.grant.subject,
            scopes: &case.grant.scopes,
            max_depth: case.grant.max_depth,
            allowed_resources: &case.grant.allowed_resources,
            organization_id: case.grant.organization.as_deref(),
            expires_at: case.grant.expires_in_seconds.map(|s| now() + TimeDelta::seconds(s)),
            minimum_level: case.grant.minimum_level,
        };
        let request = &case.request;
        let exchange = ExchangeFacts {
            realm_id: "fixture-realm",
            client_id: &request.client,
            person_id: &request.person,
            person_organizations: &request.organizations,
            now: now(),
            scopes: &request.scopes,
            subject_scopes: &request.subject_scopes,
            client_scopes: request.client_scopes.as_deref().unwrap_or(&case.grant.scopes),
            depth: request.depth,
            resource: request.resource.as_deref(),
            subject_level: request.subject_level,
        };
        let verdict = authorizer
            .decide_delegation(&grant, &exchange)
            .map_err(|e| format!("{}: case `{}`: {e}", path.display(), case.name))?;
        let (passed, detail) = verdict.judged(case.decision, case.error_code.as_deref());
        Ok(CaseOutcome { file: path.to_owned(), name: case.name, passed, detail })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::{Authorizer, PolicyError};

    /// The service's policies with one more file, loaded.
    fn load_with(extra: &str) -> Result<Authorizer, PolicyError> {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../policies");
        let dir = std::env::temp_dir().join(format!("castellan-policies-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(&source).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
            }
        }
        std::fs::write(dir.join("extra.cedar"), extra).unwrap();
        let loaded = Authorizer::load(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        loaded
    }

    const DELEGATE: &str = "Castellan::Action::\"delegate\"";

    #[test]
    fn every_refusing_delegation_policy_names_a_known_code_and_a_precedence() {
        assert!(load_with("").is_ok());
        let body = format!("forbid (principal, action == {DELEGATE}, resource) when {{ context.depth > 9 }};");
        let error = load_with(&format!("@id(\"x\")\n{body}")).expect_err("refused").to_string();
        assert!(error.contains("x: no @errorCode"), "{error}");
        let unknown = format!("@id(\"y\")\n@errorCode(\"Nope\")\n@precedence(\"8\")\n{body}");
        let error = load_with(&unknown).expect_err("refused").to_string();
        assert!(error.contains("y: @errorCode(\"Nope\") is not an error code of `delegate`"), "{error}");
        let unordered = format!("@id(\"z\")\n@errorCode(\"DelegationDepthExceeded\")\n{body}");
        let error = load_with(&unordered).expect_err("refused").to_string();
        assert!(error.contains("z: @precedence must be a whole number"), "{error}");
    }
}

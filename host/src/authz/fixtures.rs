//! Request cases with their expected decisions (`policies/fixtures/*.json`), run by
//! `castellan policies check` and by the test suite.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{Authorizer, PolicyFiles, Principal, PrincipalKind, Resource, Verdict};
use crate::kernel::ids::AccountId;

/// `castellan policies check`: loads the policies (refused unless they validate against the
/// schema), runs the fixtures among them (`fixtures/*.json`), and reports both with the role ×
/// permission matrix, each labelled with where the policies come from. An error when anything
/// does not validate or a fixture fails.
pub fn check(files: &PolicyFiles) -> anyhow::Result<String> {
    let authz = Authorizer::from_files(files)?;
    let mut report = format!("{} policies of {} validate against their schema\n", authz.policy_count(), files.origin);
    let outcomes = run(&authz, files).map_err(anyhow::Error::msg)?;
    if !outcomes.is_empty() {
        let failed: Vec<_> = outcomes.iter().filter(|o| !o.passed).collect();
        for outcome in &failed {
            report.push_str(&format!("FAIL {}: {}: {}\n", outcome.file.display(), outcome.name, outcome.detail));
        }
        report.push_str(&format!("{} fixture cases, {} failed\n", outcomes.len(), failed.len()));
        if !failed.is_empty() {
            anyhow::bail!("policy fixtures failed:\n{report}");
        }
    }
    report.push_str(&format!("\nRoles × permissions of {}:\n{}\n", files.origin, authz.role_matrix()?));
    Ok(report)
}

const OWN_ACCOUNT: &str = "fixture-account";
const OTHER_ACCOUNT: &str = "other-account";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FixtureFile {
    description: String,
    /// `admin` (the default): admin permission cases; `delegation`: token exchange cases;
    /// `admission`: metadata-document client cases.
    #[serde(default)]
    kind: Kind,
    cases: Vec<serde_json::Value>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    #[default]
    Admin,
    Delegation,
    Admission,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    principal: CasePrincipal,
    action: String,
    resource: CaseResource,
    decision: Expected,
    #[serde(default, rename = "errorCode")]
    error_code: Option<String>,
    /// The admin operation called (`PUT /realms/{realm}`); none by default.
    #[serde(default)]
    operation: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CasePrincipal {
    #[serde(default)]
    roles: Vec<String>,
    #[serde(default)]
    grants: Vec<String>,
    #[serde(default)]
    scopes: Option<Vec<String>>,
    #[serde(default)]
    person: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseResource {
    #[serde(rename = "type")]
    kind: String,
    /// `own`, `other` (another account's) or `none` (does not exist).
    owner: String,
    /// The realm's id (of a realm, or of a client's realm); `fixture-realm` by default.
    #[serde(default)]
    realm: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(super) enum Expected {
    #[serde(rename = "ALLOW")]
    Allow,
    #[serde(rename = "DENY")]
    Deny,
}

/// The outcome of one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseOutcome {
    pub file: PathBuf,
    pub name: String,
    pub passed: bool,
    pub detail: String,
}

/// Runs every case of every fixture file (`fixtures/*.json`) among `files`.
pub fn run(authorizer: &Authorizer, files: &PolicyFiles) -> Result<Vec<CaseOutcome>, String> {
    let mut outcomes = Vec::new();
    for (path, text) in files.of("fixtures", "json") {
        let file: FixtureFile =
            serde_json::from_str(text).map_err(|e| format!("invalid fixture file {}: {e}", path.display()))?;
        if file.cases.is_empty() {
            return Err(format!("{} ({}) has no cases", path.display(), file.description));
        }
        for case in file.cases {
            let outcome = match file.kind {
                Kind::Admin => run_case(authorizer, path, parse_case(path, case)?)?,
                Kind::Delegation => super::delegation::fixtures::run_case(authorizer, path, parse_case(path, case)?)?,
                Kind::Admission => super::admission::fixtures::run_case(authorizer, path, parse_case(path, case)?)?,
            };
            outcomes.push(outcome);
        }
    }
    Ok(outcomes)
}

fn parse_case<T: serde::de::DeserializeOwned>(path: &Path, case: serde_json::Value) -> Result<T, String> {
    let name = case.get("name").and_then(serde_json::Value::as_str).unwrap_or("?").to_owned();
    serde_json::from_value(case).map_err(|e| format!("{}: case `{name}`: {e}", path.display()))
}

fn run_case(authorizer: &Authorizer, path: &Path, case: Case) -> Result<CaseOutcome, String> {
    let principal = Principal {
        id: "fixture-caller".into(),
        account_id: AccountId::known(OWN_ACCOUNT),
        kind: if case.principal.person { PrincipalKind::Person } else { PrincipalKind::Credential },
        roles: case.principal.roles,
        grants: case.principal.grants.into_iter().collect(),
        scopes: case.principal.scopes.map(|s| s.into_iter().collect::<BTreeSet<_>>()),
    };
    let owner = match case.resource.owner.as_str() {
        "own" => Some(OWN_ACCOUNT.to_owned()),
        "other" => Some(OTHER_ACCOUNT.to_owned()),
        "none" => None,
        other => return Err(format!("{}: case `{}`: unknown owner `{other}`", path.display(), case.name)),
    };
    let realm = case.resource.realm.unwrap_or_else(|| "fixture-realm".into());
    let resource = match case.resource.kind.as_str() {
        "Account" => Resource::Account(owner.unwrap_or_else(|| "missing-account".into())),
        "Realm" => Resource::Realm { id: realm, owner: owner.map(AccountId::known) },
        "Client" => {
            Resource::Client { realm_id: realm, id: "fixture-client".into(), owner: owner.map(AccountId::known) }
        }
        "Secret" => Resource::Secret { id: "fixture-secret".into(), owner: owner.map(AccountId::known) },
        "AccountRole" => Resource::AccountRole { id: "fixture-role".into(), owner: owner.map(AccountId::known) },
        other => return Err(format!("{}: case `{}`: unknown resource type `{other}`", path.display(), case.name)),
    };
    let verdict = authorizer
        .decide(&principal, &case.action, &resource, &case.operation)
        .map_err(|e| format!("{}: case `{}`: {e}", path.display(), case.name))?;
    let (passed, detail) = match (&verdict, case.decision) {
        (Verdict::Allow, Expected::Allow) => (true, "allowed".to_owned()),
        (Verdict::Deny { code, policies }, Expected::Deny) => {
            let code_matches = case.error_code.as_deref().is_none_or(|want| want == code.as_str());
            (code_matches, format!("denied with {} by [{}]", code.as_str(), policies.join(", ")))
        }
        (Verdict::Allow, Expected::Deny) => (false, "allowed, expected DENY".to_owned()),
        (Verdict::Deny { code, .. }, Expected::Allow) => {
            (false, format!("denied with {}, expected ALLOW", code.as_str()))
        }
    };
    Ok(CaseOutcome { file: path.to_owned(), name: case.name, passed, detail })
}

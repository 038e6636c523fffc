//! Admin permissions, decided by the Cedar policies in `policies/`.
//!
//! This is the only module that talks to Cedar. The host builds the caller, the resource and the
//! request context; the policies decide; a refusal's error code comes from the `@errorCode`
//! annotation of the policy that refused.

pub mod admission;
pub mod caller;
pub mod delegation;
pub mod files;
pub mod fixtures;
mod refusals;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::LazyLock;

use cedar_policy::{
    Context, Decision, Entities, Entity, EntityId, EntityTypeName, EntityUid, PolicyId, PolicySet, Request,
    RestrictedExpression, Schema, ValidationMode, Validator,
};

pub use self::files::PolicyFiles;
use crate::kernel::error_code::ErrorCode;
use crate::kernel::ids::AccountId;

/// Permission names the code asks about; the schema must declare each (checked at load).
pub mod permission {
    pub const ACCOUNT_READ: &str = "account:read";
    pub const ACCOUNT_UPDATE: &str = "account:update";
    pub const AUDIT_READ: &str = "audit:read";
    pub const REALM_READ: &str = "realm:read";
    pub const REALM_CREATE: &str = "realm:create";
    pub const REALM_UPDATE: &str = "realm:update";
    pub const REALM_DELETE: &str = "realm:delete";
    pub const CLIENT_READ: &str = "client:read";
    pub const CLIENT_CREATE: &str = "client:create";
    pub const CLIENT_UPDATE: &str = "client:update";
    pub const CLIENT_DELETE: &str = "client:delete";
    pub const USER_READ: &str = "user:read";
    pub const USER_CREATE: &str = "user:create";
    pub const USER_UPDATE: &str = "user:update";
    pub const USER_DELETE: &str = "user:delete";
    pub const USER_IMPERSONATE: &str = "user:impersonate";
    pub const SCOPE_READ: &str = "scope:read";
    pub const SCOPE_CREATE: &str = "scope:create";
    pub const SCOPE_UPDATE: &str = "scope:update";
    pub const SCOPE_DELETE: &str = "scope:delete";
    pub const ORGANIZATION_READ: &str = "organization:read";
    pub const ORGANIZATION_CREATE: &str = "organization:create";
    pub const ORGANIZATION_UPDATE: &str = "organization:update";
    pub const ORGANIZATION_DELETE: &str = "organization:delete";
    pub const SESSION_READ: &str = "session:read";
    pub const SESSION_DELETE: &str = "session:delete";
    pub const ROLE_READ: &str = "role:read";
    pub const ROLE_CREATE: &str = "role:create";
    pub const ROLE_UPDATE: &str = "role:update";
    pub const ROLE_DELETE: &str = "role:delete";
    pub const SECRET_READ: &str = "secret:read";
    pub const SECRET_CREATE: &str = "secret:create";
    pub const SECRET_UPDATE: &str = "secret:update";
    pub const SECRET_DELETE: &str = "secret:delete";
    pub const WEBHOOK_READ: &str = "webhook:read";
    pub const WEBHOOK_CREATE: &str = "webhook:create";
    pub const WEBHOOK_UPDATE: &str = "webhook:update";
    pub const WEBHOOK_DELETE: &str = "webhook:delete";

    pub const USED: &[&str] = &[
        ACCOUNT_READ,
        ACCOUNT_UPDATE,
        AUDIT_READ,
        REALM_READ,
        REALM_CREATE,
        REALM_UPDATE,
        REALM_DELETE,
        CLIENT_READ,
        CLIENT_CREATE,
        CLIENT_UPDATE,
        CLIENT_DELETE,
        USER_READ,
        USER_CREATE,
        USER_UPDATE,
        USER_DELETE,
        USER_IMPERSONATE,
        SCOPE_READ,
        SCOPE_CREATE,
        SCOPE_UPDATE,
        SCOPE_DELETE,
        ORGANIZATION_READ,
        ORGANIZATION_CREATE,
        ORGANIZATION_UPDATE,
        ORGANIZATION_DELETE,
        SESSION_READ,
        SESSION_DELETE,
        ROLE_READ,
        ROLE_CREATE,
        ROLE_UPDATE,
        ROLE_DELETE,
        SECRET_READ,
        SECRET_CREATE,
        SECRET_UPDATE,
        SECRET_DELETE,
        WEBHOOK_READ,
        WEBHOOK_CREATE,
        WEBHOOK_UPDATE,
        WEBHOOK_DELETE,
    ];
}

/// The built-in account roles, each a `Castellan::Role` entity the policies name.
pub const BUILTIN_ROLES: &[&str] = &["Owner", "Admin", "Developer", "Auditor"];

/// Action groups that are not permissions one can grant.
const UMBRELLA_GROUPS: &[&str] = &["read", "act"];

const NAMESPACE: &str = "Castellan";

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error(
        "cannot read the policies folder {path}: {cause}. Give the folder holding schema.cedarschema and the \
         *.cedar policies with --policies (or CASTELLAN_POLICIES), or leave it unset to use the policies built \
         into castellan (`castellan policies export DIR` writes them out)"
    )]
    Folder { path: PathBuf, cause: std::io::Error },
    #[error("cannot read {path}: {cause}")]
    Read { path: PathBuf, cause: std::io::Error },
    #[error("{origin}: no schema ({})", files::SCHEMA)]
    NoSchema { origin: String },
    #[error("invalid schema {path}: {message}")]
    Schema { path: PathBuf, message: String },
    #[error("cannot parse {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    Policy { path: PathBuf, message: String },
    #[error("policies do not validate against the schema:\n{0}")]
    Invalid(String),
    #[error("the schema does not declare the permission `{0}` the service checks")]
    MissingPermission(String),
    #[error("{0}: no policies (*.cedar)")]
    Empty(String),
}

/// Who asks: an account's person or credential, with what its roles and scopes allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The credential or person id.
    pub id: String,
    pub account_id: AccountId,
    pub kind: PrincipalKind,
    /// Built-in roles held.
    pub roles: Vec<String>,
    /// Permissions granted by custom roles held.
    pub grants: BTreeSet<String>,
    /// Permissions the credential is bounded by, if any.
    pub scopes: Option<BTreeSet<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrincipalKind {
    Person,
    Credential,
}

impl PrincipalKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Person => "Person",
            Self::Credential => "Credential",
        }
    }
}

/// What a request acts on. An `owner` of `None` means the resource does not exist (or is not
/// known), which the policies refuse exactly like another account's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resource {
    Account(String),
    Realm { id: String, owner: Option<AccountId> },
    Client { realm_id: String, id: String, owner: Option<AccountId> },
    Secret { id: String, owner: Option<AccountId> },
    AccountRole { id: String, owner: Option<AccountId> },
}

/// Permitted, or refused with the code of the refusing policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Deny { code: ErrorCode, policies: Vec<String> },
}

#[derive(Debug, thiserror::Error)]
#[error("authorization request could not be evaluated: {0}")]
pub struct EvaluationError(String);

struct ActionInfo {
    uid: EntityUid,
    /// The action's entity and those of its groups, so `action in group` evaluates.
    entities: Vec<Entity>,
    /// The names that grant it: its own and its groups'.
    granted_by: Vec<String>,
}

/// The validated schema and policies, ready to decide.
pub struct Authorizer {
    schema: Schema,
    policies: PolicySet,
    /// The policies about `delegate`, which delegation decisions evaluate alone.
    delegation: refusals::Refusing<delegation::Refusal>,
    /// The policies about `admit`, which admission decisions evaluate alone.
    admission: refusals::Refusing<admission::Refusal>,
    actions: HashMap<String, ActionInfo>,
    permissions: BTreeSet<String>,
    cedar: cedar_policy::Authorizer,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer").field("policies", &self.policies.policies().count()).finish_non_exhaustive()
    }
}

impl Authorizer {
    /// Loads `schema.cedarschema` and every `*.cedar` in `dir`, and refuses anything that does not
    /// validate strictly. Each policy must carry a unique `@id`.
    pub fn load(dir: &Path) -> Result<Self, PolicyError> {
        Self::from_files(&PolicyFiles::read(dir)?)
    }

    /// Validates and indexes a set of policy files (see [`Self::load`]). An error names the file,
    /// and the line and column where the parser or the validator points.
    pub fn from_files(files: &PolicyFiles) -> Result<Self, PolicyError> {
        let schema_path = PathBuf::from(files::SCHEMA);
        let schema_text =
            files.get(files::SCHEMA).ok_or_else(|| PolicyError::NoSchema { origin: files.origin.clone() })?;
        let (schema, _warnings) = Schema::from_cedarschema_str(schema_text).map_err(|e| PolicyError::Schema {
            path: files.name_of(&schema_path),
            message: located(&e, schema_text),
        })?;

        let mut policies = PolicySet::new();
        // Where each policy was read, to place what the validator says of it.
        let mut sources: HashMap<PolicyId, (&Path, &str)> = HashMap::new();
        for (path, text) in files.of("", "cedar") {
            let parsed = PolicySet::from_str(text).map_err(|errors| PolicyError::Parse {
                path: files.name_of(path),
                message: errors.iter().map(|e| located(e, text)).collect::<Vec<_>>().join("\n"),
            })?;
            for policy in parsed.policies() {
                let Some(id) = policy.annotation("id") else {
                    return Err(PolicyError::Policy {
                        path: files.name_of(path),
                        message: format!("a policy has no @id annotation:\n{policy}"),
                    });
                };
                let id = PolicyId::new(id);
                sources.insert(id.clone(), (path, text));
                policies
                    .add(policy.new_id(id))
                    .map_err(|e| PolicyError::Policy { path: files.name_of(path), message: e.to_string() })?;
            }
        }
        if sources.is_empty() {
            return Err(PolicyError::Empty(files.origin.clone()));
        }
        let validation = Validator::new(schema.clone()).validate(&policies, ValidationMode::Strict);
        if !validation.validation_passed() {
            let mut report = String::new();
            for error in validation.validation_errors() {
                let _ = match sources.get(error.policy_id()) {
                    Some((path, text)) => {
                        writeln!(report, "  {}: {}", files.name_of(path).display(), located(error, text))
                    }
                    None => writeln!(report, "  {error}"),
                };
            }
            return Err(PolicyError::Invalid(report));
        }

        let (actions, permissions) = index_actions(&schema)?;
        for used in permission::USED {
            if !actions.contains_key(*used) {
                return Err(PolicyError::MissingPermission((*used).to_owned()));
            }
        }
        let delegation = refusals::Refusing::of(&schema, &policies)?;
        let admission = refusals::Refusing::of(&schema, &policies)?;
        Ok(Self {
            schema,
            policies,
            delegation,
            admission,
            actions,
            permissions,
            cedar: cedar_policy::Authorizer::new(),
        })
    }

    /// Every permission name a role or a scope may list (actions and their groups).
    pub fn permissions(&self) -> &BTreeSet<String> {
        &self.permissions
    }

    pub fn policy_count(&self) -> usize {
        self.policies.policies().count()
    }

    /// Decides whether `principal` may do `action` on `resource` through the admin `operation` it
    /// calls (`PUT /realms/{realm}`: the method and the route as the OpenAPI document names it).
    pub fn decide(
        &self,
        principal: &Principal,
        action: &str,
        resource: &Resource,
        operation: &str,
    ) -> Result<Verdict, EvaluationError> {
        let info = self.actions.get(action).ok_or_else(|| EvaluationError(format!("unknown action {action}")))?;
        let principal_uid = uid("Caller", &principal.id)?;
        let account_uid = uid("Account", &principal.account_id)?;
        let mut entities = info.entities.clone();

        let roles: HashSet<EntityUid> =
            principal.roles.iter().map(|role| uid("Role", role)).collect::<Result<_, _>>()?;
        let strings = |set: &BTreeSet<String>| {
            RestrictedExpression::new_set(set.iter().cloned().map(RestrictedExpression::new_string))
        };
        let empty = BTreeSet::new();
        let attributes = HashMap::from([
            ("account".to_owned(), RestrictedExpression::new_entity_uid(account_uid.clone())),
            ("kind".to_owned(), RestrictedExpression::new_string(principal.kind.as_str().to_owned())),
            ("grants".to_owned(), strings(&principal.grants)),
            ("scoped".to_owned(), RestrictedExpression::new_bool(principal.scopes.is_some())),
            ("scopes".to_owned(), strings(principal.scopes.as_ref().unwrap_or(&empty))),
        ]);
        entities
            .push(Entity::new(principal_uid.clone(), attributes, roles).map_err(|e| EvaluationError(e.to_string()))?);
        for role in &principal.roles {
            entities.push(Entity::new_no_attrs(uid("Role", role)?, HashSet::new()));
        }

        let resource_uid = self.resource_entities(resource, &mut entities)?;
        if !entities.iter().any(|e| e.uid() == account_uid) {
            entities.push(Entity::new_no_attrs(account_uid, HashSet::new()));
        }

        let context = Context::from_pairs([
            (
                "permissions".to_owned(),
                RestrictedExpression::new_set(info.granted_by.iter().cloned().map(RestrictedExpression::new_string)),
            ),
            ("operation".to_owned(), RestrictedExpression::new_string(operation.to_owned())),
        ])
        .map_err(|e| EvaluationError(e.to_string()))?;
        let request = Request::new(principal_uid, info.uid.clone(), resource_uid, context, Some(&self.schema))
            .map_err(|e| EvaluationError(e.to_string()))?;
        let entities = Entities::from_entities(entities, None).map_err(|e| EvaluationError(e.to_string()))?;
        let response = self.cedar.is_authorized(&request, &self.policies, &entities);
        if let Some(error) = response.diagnostics().errors().next() {
            return Err(EvaluationError(error.to_string()));
        }
        Ok(match response.decision() {
            Decision::Allow => Verdict::Allow,
            Decision::Deny => {
                // Sorted, so that when several refusals apply the same one always names the code.
                let mut policies: Vec<String> = response.diagnostics().reason().map(ToString::to_string).collect();
                policies.sort();
                let code = policies
                    .iter()
                    .find_map(|id| self.policies.annotation(&PolicyId::new(id), "errorCode"))
                    .map_or(ErrorCode::Forbidden, ErrorCode::from_policy_annotation);
                Verdict::Deny { code, policies }
            }
        })
    }

    /// Pushes the resource's entity and its ancestors; returns its uid.
    fn resource_entities(&self, resource: &Resource, entities: &mut Vec<Entity>) -> Result<EntityUid, EvaluationError> {
        let owned = |kind: &str, id: &str, owner: &Option<AccountId>, entities: &mut Vec<Entity>| {
            let this = uid(kind, id)?;
            let parents = match owner {
                Some(account) => {
                    let account = uid("Account", account)?;
                    entities.push(Entity::new_no_attrs(account.clone(), HashSet::new()));
                    HashSet::from([account])
                }
                None => HashSet::new(),
            };
            entities.push(Entity::new_no_attrs(this.clone(), parents));
            Ok::<_, EvaluationError>(this)
        };
        match resource {
            Resource::Account(id) => uid("Account", id),
            Resource::Realm { id, owner } => owned("Realm", id, owner, entities),
            Resource::Secret { id, owner } => owned("Secret", id, owner, entities),
            Resource::AccountRole { id, owner } => owned("AccountRole", id, owner, entities),
            Resource::Client { realm_id, id, owner } => {
                let realm = owned("Realm", realm_id, owner, entities)?;
                let this = uid("Client", &format!("{realm_id}/{id}"))?;
                entities.push(Entity::new_no_attrs(this.clone(), HashSet::from([realm])));
                Ok(this)
            }
        }
    }

    /// The role × permission table of the built-in roles, as `policies check` prints it.
    pub fn role_matrix(&self) -> Result<String, EvaluationError> {
        let mut table = String::new();
        let width = self.permissions.iter().map(String::len).max().unwrap_or(10);
        let _ = write!(table, "{:width$}", "permission");
        for role in BUILTIN_ROLES {
            let _ = write!(table, "  {role:>9}");
        }
        table.push('\n');
        let account = AccountId::known("matrix-account");
        for action in self.actions.keys().collect::<BTreeSet<_>>() {
            let _ = write!(table, "{action:width$}");
            for role in BUILTIN_ROLES {
                let principal = Principal {
                    id: format!("matrix-{role}"),
                    account_id: account.clone(),
                    kind: PrincipalKind::Credential,
                    roles: vec![(*role).to_owned()],
                    grants: BTreeSet::new(),
                    scopes: None,
                };
                let resource =
                    Resource::Realm { id: "matrix-realm".into(), owner: Some(AccountId::known(account.clone())) };
                let mark = match self.decide(&principal, action, &resource, "")? {
                    Verdict::Allow => "allow",
                    Verdict::Deny { .. } => "-",
                };
                let _ = write!(table, "  {mark:>9}");
            }
            table.push('\n');
        }
        Ok(table)
    }
}

/// An error of Cedar's parser or validator, with the line and column it points at in `text`.
fn located(error: &(impl miette::Diagnostic + std::fmt::Display), text: &str) -> String {
    let at = error.labels().and_then(|mut labels| labels.next()).map(|label| files::position(text, label.offset()));
    let help = error.help().map(|help| format!(" ({help})")).unwrap_or_default();
    match at {
        Some(at) => format!("{at}: {error}{help}"),
        None => format!("{error}{help}"),
    }
}

/// The entity types requests are built of, parsed once: parsing a name runs Cedar's parser, which
/// costs more than the rest of building an entity.
static TYPE_NAMES: LazyLock<HashMap<&'static str, EntityTypeName>> = LazyLock::new(|| {
    [
        "Account",
        "Role",
        "Realm",
        "Client",
        "Secret",
        "AccountRole",
        "Caller",
        "Organization",
        "Person",
        "DelegationGrant",
    ]
    .into_iter()
    .filter_map(|kind| EntityTypeName::from_str(&format!("{NAMESPACE}::{kind}")).ok().map(|name| (kind, name)))
    .collect()
});

fn uid(kind: &str, id: &str) -> Result<EntityUid, EvaluationError> {
    let type_name = match TYPE_NAMES.get(kind) {
        Some(name) => name.clone(),
        None => {
            EntityTypeName::from_str(&format!("{NAMESPACE}::{kind}")).map_err(|e| EvaluationError(e.to_string()))?
        }
    };
    Ok(EntityUid::from_type_name_and_id(type_name, EntityId::new(id)))
}

/// The requestable actions (those that apply to a principal) with their group entities, and the
/// names that can be granted.
fn index_actions(schema: &Schema) -> Result<(HashMap<String, ActionInfo>, BTreeSet<String>), PolicyError> {
    let invalid = |message: String| PolicyError::Schema { path: PathBuf::from("schema.cedarschema"), message };
    let all = schema.action_entities().map_err(|e| invalid(e.to_string()))?;
    let groups: HashSet<EntityUid> = schema.action_groups().cloned().collect();
    let mut actions = HashMap::new();
    let mut permissions = BTreeSet::new();
    for action in schema.actions() {
        let name = action.id().unescaped().to_owned();
        let ancestors: Vec<EntityUid> = all.ancestors(action).map(|iter| iter.cloned().collect()).unwrap_or_default();
        // Only actions under `read` or `act` are admin permissions; `delegate` is decided apart.
        let umbrella = |uid: &EntityUid| UMBRELLA_GROUPS.contains(&uid.id().unescaped());
        if !umbrella(action) && !ancestors.iter().any(umbrella) {
            continue;
        }
        if !UMBRELLA_GROUPS.contains(&name.as_str()) {
            permissions.insert(name.clone());
        }
        if groups.contains(action) {
            continue;
        }
        let mut entities = Vec::new();
        for member in std::iter::once(action).chain(ancestors.iter()) {
            if let Some(entity) = all.get(member) {
                entities.push(entity.clone());
            }
        }
        let granted_by = std::iter::once(action)
            .chain(ancestors.iter())
            .map(|uid| uid.id().unescaped().to_owned())
            .filter(|name| !UMBRELLA_GROUPS.contains(&name.as_str()))
            .collect();
        actions.insert(name, ActionInfo { uid: action.clone(), entities, granted_by });
    }
    Ok((actions, permissions))
}

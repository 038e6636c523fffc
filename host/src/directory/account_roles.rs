//! The account's own roles, beside the built-in Owner, Admin, Developer and Auditor: named sets
//! of permissions that people of the team and credentials hold. Their names are unique in the
//! account and never change.

use crate::authz::Authorizer;
use crate::authz::BUILTIN_ROLES;
use crate::authz::caller::Caller;
use crate::kernel::clock::iso;
use crate::kernel::validate::{Body, Notification, Refusals, Rule, list_of, text};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::roles::{self as role_store, AccountRole};
use crate::store::trail::{Change, ChangeAction, Placed};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// Creates `role`; its name must be free in the account.
pub async fn create(context: &Context, role: AccountRole, by: Author<'_>) -> Result<AccountRole, Error> {
    let mut tx = context.store.begin().await?;
    if !role_store::insert(&mut *tx, &role).await? {
        return Err(Error::AlreadyExists("role"));
    }
    let change = Change::of(ChangeAction::Create, role.place(), 201).after(RoleView::from(&role));
    changes::commit(context, by, tx, change).await?;
    Ok(role)
}

/// Changes `before` into `role` (its description and permissions).
pub async fn update(
    context: &Context,
    before: &AccountRole,
    mut role: AccountRole,
    by: Author<'_>,
) -> Result<AccountRole, Error> {
    role.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    role_store::update(&mut *tx, &role).await?;
    let change =
        Change::of(ChangeAction::Update, role.place(), 200).before(RoleView::from(before)).after(RoleView::from(&role));
    changes::commit(context, by, tx, change).await?;
    Ok(role)
}

/// Deletes `role`: the people and credentials that held it lose what it granted.
pub async fn delete(context: &Context, role: &AccountRole, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    role_store::delete(&mut *tx, &role.account_id, &role.id).await?;
    let change = Change::of(ChangeAction::Delete, role.place(), 200).before(RoleView::from(role));
    changes::commit(context, by, tx, change).await
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleView {
    pub id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Permission names (`realm:read`, `client:write`, …); see `GET /roles/permissions`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub permissions: Vec<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<&AccountRole> for RoleView {
    fn from(role: &AccountRole) -> Self {
        Self {
            id: role.id.clone().into(),
            name: role.name.clone(),
            description: role.description.clone(),
            permissions: role.permissions.clone(),
            created_at: iso(role.created_at),
            updated_at: iso(role.updated_at),
        }
    }
}

/// The body of a role's creation. An update takes the same fields, each optional, and cannot change
/// the name.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct RoleInput {
    /// 1–64 characters, unique in the account, not a built-in role name; cannot change.
    #[schema(value_type = String, required = true)]
    pub(crate) name: Option<String>,
    /// Up to 1024 characters; empty removes it.
    #[schema(value_type = Option<String>)]
    pub(crate) description: Option<Option<String>>,
    /// At least one permission name.
    #[schema(value_type = Vec<String>, required = true)]
    pub(crate) permissions: Option<Vec<String>>,
}

impl RoleInput {
    /// The fields `body` gives (a creation must give the name and the permissions); permissions
    /// are names the policies know.
    pub(crate) fn read(authz: &Authorizer, body: &mut Body, creating: bool) -> Self {
        let known = authz.permissions().clone();
        let permission_name = move |path: &str, value: &Value| -> Result<String, Refusals> {
            let name = text(1, 64)(path, value)?;
            if known.contains(&name) {
                Ok(name)
            } else {
                Err(vec![Notification::new(path, Rule::OneOf, format!("{path}: unknown permission {name}"))])
            }
        };
        let permissions = |path: &str, value: &Value| {
            let names = list_of(200, &permission_name)(path, value)?;
            if names.is_empty() {
                return Err(vec![Notification::new(
                    path,
                    Rule::MinLength,
                    format!("{path} must list at least one permission"),
                )]);
            }
            Ok(names)
        };
        let (name, permissions) = if creating {
            (body.required("name", text(1, 64)), body.required("permissions", permissions))
        } else {
            (body.optional("name", text(1, 64)), body.optional("permissions", permissions))
        };
        let description =
            body.has("description").then(|| body.optional("description", text(0, 1024)).filter(|d| !d.is_empty()));
        Self { name, permissions, description }
    }

    /// Changes the fields given on `role`, but its name.
    pub(crate) fn apply(self, role: &mut AccountRole) {
        role.permissions = self.permissions.unwrap_or(std::mem::take(&mut role.permissions));
        role.description = self.description.unwrap_or(role.description.take());
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionsView {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub built_in_roles: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub permissions: Vec<String>,
}

/// Checks a list of account roles the caller gives to a credential or a person: at least one, each
/// a built-in role or a custom role of the account, and never more than the caller holds (an Owner
/// may give any).
pub(crate) async fn grantable_roles(
    context: &Context,
    caller: &Caller,
) -> Result<impl Fn(&str, &Value) -> Result<Vec<String>, Refusals> + use<>, Error> {
    let custom: Vec<String> = role_store::all_of_account(context.store.pool(), caller.account_id())
        .await?
        .into_iter()
        .map(|r| r.name)
        .collect();
    let caller = caller.clone();
    Ok(move |path: &str, value: &Value| {
        let role_name = |path: &str, value: &Value| -> Result<String, Refusals> {
            let role = text(1, 64)(path, value)?;
            let builtin = BUILTIN_ROLES.contains(&role.as_str());
            if !builtin && !custom.contains(&role) {
                return Err(vec![Notification::new(path, Rule::NotFound, format!("{path}: no role named {role}"))]);
            }
            if !(caller.holds_role("Owner") || builtin && caller.holds_role(&role)) {
                return Err(vec![Notification::new(
                    path,
                    Rule::Escalation,
                    format!("{path}: only roles you hold can be given"),
                )]);
            }
            Ok(role)
        };
        let roles = list_of(16, &role_name)(path, value)?;
        if roles.is_empty() {
            return Err(vec![Notification::new(path, Rule::MinLength, format!("{path} must list at least one role"))]);
        }
        Ok(roles)
    })
}

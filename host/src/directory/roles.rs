//! Roles of a realm (realm roles, and roles exclusive to one client) and their grants to people,
//! groups and clients themselves: each change checked, written, trailed and announced here.

use crate::kernel::clock::iso;
use crate::kernel::validate::{Body, Notification, Refusals, Rule, parsed, text};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::realm_roles::{self as role_store, Holder, Role};
use crate::store::trail::{Change, ChangeAction, Place, Placed, ResourceKind};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

/// Creates `role`; its name must be free among the realm roles, or among its client's roles.
pub async fn create(context: &Context, role: Role, by: Author<'_>) -> Result<Role, Error> {
    let mut tx = context.store.begin().await?;
    if !role_store::insert(&mut *tx, &role).await? {
        return Err(Error::AlreadyExists("role"));
    }
    changes::commit(context, by, tx, Change::of(ChangeAction::Create, role.place(), 201).after(RoleView::of(&role)))
        .await?;
    Ok(role)
}

/// Changes `before` into `role`; a new name must be free where the role lives.
pub async fn update(context: &Context, before: &Role, mut role: Role, by: Author<'_>) -> Result<Role, Error> {
    role.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    if !role_store::update(&mut *tx, &role).await? {
        return Err(Error::AlreadyExists("role"));
    }
    let change =
        Change::of(ChangeAction::Update, role.place(), 200).before(RoleView::of(before)).after(RoleView::of(&role));
    changes::commit(context, by, tx, change).await?;
    Ok(role)
}

/// Deletes `role`, withdrawn from everyone who held it.
pub async fn delete(context: &Context, role: &Role, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    role_store::delete(&mut *tx, &role.id).await?;
    changes::commit(context, by, tx, Change::of(ChangeAction::Delete, role.place(), 200).before(RoleView::of(role)))
        .await
}

/// Who holds a grant: a person, a group (and so each of its members), or a client itself (its
/// client-credentials tokens carry the role).
#[derive(Debug, Clone)]
pub enum Grantee {
    User(String),
    Group(String),
    Client(String),
}

impl Grantee {
    fn holder<'a>(&'a self, realm_id: &'a str) -> Holder<'a> {
        match self {
            Self::User(id) => Holder::User(id),
            Self::Group(id) => Holder::Group(id),
            Self::Client(id) => Holder::Client { realm_id, client_id: id },
        }
    }

    fn resource_type(&self) -> ResourceKind {
        match self {
            Self::User(_) => ResourceKind::UserRole,
            Self::Group(_) => ResourceKind::GroupRole,
            Self::Client(_) => ResourceKind::ClientRoleGrant,
        }
    }

    pub fn id(&self) -> &str {
        match self {
            Self::User(id) | Self::Group(id) | Self::Client(id) => id,
        }
    }

    fn change(&self, role: &Role, action: ChangeAction, status: u16) -> Change {
        let recorded = json!({ "roleId": role.id, "roleName": role.name, "roleClientId": role.client_id });
        let mut place = Place::in_realm(self.resource_type(), &role.id, &role.realm_id).under(self.id());
        place.client = match self {
            Self::Client(id) => Some(id.clone()),
            Self::User(_) | Self::Group(_) => None,
        };
        let change = Change::of(action, place, status);
        match action {
            ChangeAction::Delete => change.before(recorded),
            _ => change.after(recorded),
        }
    }
}

/// Grants `role` (a role of the grantee's realm) to the grantee.
pub async fn grant(context: &Context, grantee: &Grantee, role: &Role, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    if !role_store::grant(&mut *tx, grantee.holder(&role.realm_id), &role.id, context.clock.now()).await? {
        return Err(Error::Conflict("the role is already held".into()));
    }
    changes::commit(context, by, tx, grantee.change(role, ChangeAction::Create, 201)).await
}

/// Withdraws `role` from the grantee.
pub async fn withdraw(context: &Context, grantee: &Grantee, role: &Role, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    if !role_store::withdraw(&mut *tx, grantee.holder(&role.realm_id), &role.id).await? {
        return Err(Error::NotFound("role grant"));
    }
    changes::commit(context, by, tx, grantee.change(role, ChangeAction::Delete, 200)).await
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleView {
    pub id: String,
    pub realm_id: String,
    /// The client the role is exclusive to; null for a realm role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl RoleView {
    pub fn of(role: &Role) -> Self {
        Self {
            id: role.id.clone().into(),
            realm_id: role.realm_id.to_string(),
            client_id: role.client_id.clone().map(String::from),
            name: role.name.clone(),
            description: role.description.clone(),
            created_at: iso(role.created_at),
            updated_at: iso(role.updated_at),
        }
    }
}

/// The body of a role creation or update: at creation the name is required; in an update each
/// field is optional, and a null description removes it.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct RoleInput {
    /// 1–128 letters, digits, `-`, `_`, `.`, `:`; unique among the realm roles, or among the
    /// client's roles. Required at creation.
    #[schema(value_type = String, required = true)]
    pub(crate) name: Option<String>,
    /// Up to 1024 characters.
    #[schema(value_type = Option<String>)]
    pub(crate) description: Option<Option<String>>,
}

impl RoleInput {
    pub(crate) fn read(body: &mut Body, creating: bool) -> Self {
        let name = match creating {
            true => body.required("name", parsed(role_name)),
            false => body.optional("name", parsed(role_name)),
        };
        let description = body.nullable("description", text(0, 1024)).map(|d| d.filter(|d| !d.is_empty()));
        Self { name, description }
    }
}

/// A role to grant.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct RoleGrantInput {
    /// A realm role or a client role of the realm.
    pub(crate) role_id: String,
}

impl RoleGrantInput {
    pub(crate) fn read(body: &mut Body) -> Option<Self> {
        Some(Self { role_id: body.required("roleId", role_id_field)? })
    }
}

/// A person's roles: those granted to them, and all they hold (through their groups too).
#[derive(Debug, Serialize, ToSchema)]
pub struct UserRolesView {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub direct: Vec<RoleView>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub effective: Vec<RoleView>,
}

pub(crate) fn role_name(text_value: &str) -> Result<String, (Rule, String)> {
    let valid = !text_value.is_empty()
        && text_value.chars().count() <= 128
        && text_value.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c));
    if valid {
        Ok(text_value.to_owned())
    } else {
        Err((Rule::Pattern, "name must be 1–128 letters, digits, '-', '_', '.' or ':'".into()))
    }
}

pub(crate) fn role_id_field(path: &str, value: &Value) -> Result<String, Refusals> {
    let id = text(1, 64)(path, value)?;
    if uuid::Uuid::parse_str(&id).is_err() {
        return Err(vec![Notification::new(path, Rule::Format, format!("{path} must be a role id (GUID)"))]);
    }
    Ok(id)
}

//! Who calls the admin API, the console or an import, once authenticated: a credential or a person
//! of an account, the person a personal access token acts for, and how they appear in the trail.
//! Every admin operation asks the policies about the caller before it acts.

use super::{Authorizer, Principal, Resource, Verdict};
use crate::kernel::ids::AccountId;
use crate::runtime::changes::Author;
use crate::runtime::error::Error;
use crate::store::trail;

/// An authenticated caller of the admin API.
#[derive(Debug, Clone)]
pub struct Caller {
    pub principal: Principal,
    /// For a personal access token: the person it acts for, with the roles they hold now. The
    /// token may do only what both it and the person may.
    pub person: Option<Principal>,
    pub actor: trail::Actor,
    pub request: trail::Request,
    /// The admin operation called, as the policies see it: the method and the route under
    /// `/api/v1/admin` (`PUT /realms/{realm}/users/{userId}`).
    pub operation: String,
}

impl Caller {
    pub fn account_id(&self) -> &AccountId {
        &self.principal.account_id
    }

    /// The caller as the author of a change.
    pub fn author(&self) -> Author<'_> {
        Author { actor: &self.actor, request: &self.request }
    }

    /// Asks the policies whether the caller may do `permission` on `resource` in the operation it
    /// calls.
    pub fn require(&self, authz: &Authorizer, permission: &str, resource: Resource) -> Result<(), Error> {
        self.require_in(authz, &self.operation, permission, resource)
    }

    /// Asks the policies whether the caller may do `permission` on `resource` in `operation` (a page
    /// asking whether to offer an action: the operation the action calls).
    pub fn require_in(
        &self,
        authz: &Authorizer,
        operation: &str,
        permission: &str,
        resource: Resource,
    ) -> Result<(), Error> {
        for principal in std::iter::once(&self.principal).chain(&self.person) {
            match authz.decide(principal, permission, &resource, operation) {
                Ok(Verdict::Allow) => {}
                Ok(Verdict::Deny { code, .. }) => return Err(Error::Forbidden(code)),
                Err(error) => return Err(Error::Internal(error.into())),
            }
        }
        Ok(())
    }

    /// Asks the policies whether the caller may do `permission` on its own account.
    pub fn require_account(&self, authz: &Authorizer, permission: &str) -> Result<(), Error> {
        self.require(authz, permission, Resource::Account(self.account_id().to_string()))
    }

    /// Whether the caller holds a built-in role (a personal access token: and its person too).
    pub fn holds_role(&self, role: &str) -> bool {
        std::iter::once(&self.principal).chain(&self.person).all(|p| p.roles.iter().any(|held| held == role))
    }
}

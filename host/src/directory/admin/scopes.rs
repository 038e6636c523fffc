//! The admin operations on scopes: the account's catalogue, a realm's own scopes, and the scopes a
//! client may request.

use crate::authz::caller::Caller;
use crate::authz::{Resource, permission};
use crate::directory::listing::ListQuery;
use crate::directory::reach::{Admin, realm_in_reach};
use crate::directory::scopes::{self, ScopeInput, ScopeView};
use crate::kernel::ids::{RealmId, ScopeId};
use crate::kernel::validate::{Body, Rule};
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::clients::{self as client_store, Client};
use crate::store::scopes::{self as scope_store, Scope};

/// Checks the caller may act on the catalogue (no realm) or on the realm's scopes.
pub(crate) async fn require(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: Option<&str>,
    permission: &str,
) -> Result<(), Error> {
    match realm_id {
        None => caller.require_account(admin.authz, permission),
        Some(realm_id) => realm_in_reach(admin, caller, realm_id, permission).await.map(|_| ()),
    }
}

/// Creates a scope of the catalogue (no realm) or of the realm, from the body.
pub(crate) async fn create(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: Option<&str>,
    mut body: Body,
) -> Result<Answer<ScopeView>, Error> {
    require(admin, caller, realm_id, permission::SCOPE_CREATE).await?;
    let ScopeInput { name, description } = ScopeInput::read_new(&mut body);
    body.finish()?;
    let Some(name) = name else { return Err(Error::invalid("name", Rule::Required, "name is required")) };
    let now = admin.clock.now();
    let scope = Scope {
        id: ScopeId::fresh(),
        account_id: caller.account_id().clone(),
        realm_id: realm_id.map(RealmId::known),
        name,
        description: description.flatten(),
        created_at: now,
        updated_at: now,
    };
    let scope = scopes::create(admin, scope, caller.author()).await?;
    Ok(Answer::Created(ScopeView::of(&scope)))
}

/// A page of the catalogue's scopes, or of the realm's own.
pub(crate) async fn list(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: Option<&str>,
    query: Option<String>,
) -> Result<Answer<ScopeView>, Error> {
    require(admin, caller, realm_id, permission::SCOPE_READ).await?;
    let list = ListQuery::parse(query, &[])?;
    let found = scope_store::page(&admin.store, caller.account_id(), realm_id, &list.page).await?;
    Ok(Answer::Paged(found.map(|scope| ScopeView::of(&scope))))
}

/// The scope `id` of the catalogue or of the realm, in the caller's reach for `permission`.
pub(crate) async fn scope_in_reach(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: Option<&str>,
    id: &str,
    permission: &str,
) -> Result<Scope, Error> {
    require(admin, caller, realm_id, permission).await?;
    scope_store::find(admin.store.pool(), caller.account_id(), id)
        .await?
        .filter(|s| s.realm_id.as_deref() == realm_id)
        .ok_or(Error::unreached())
}

/// Changes the scope as the body says: its description only.
pub(crate) async fn update(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: Option<&str>,
    id: &str,
    mut body: Body,
) -> Result<Answer<ScopeView>, Error> {
    let before = scope_in_reach(admin, caller, realm_id, id, permission::SCOPE_UPDATE).await?;
    let mut scope = before.clone();
    body.unchanged("id", &scope.id);
    let ScopeInput { description, .. } = ScopeInput::read_change(&mut body, &scope);
    body.finish()?;
    if let Some(description) = description {
        scope.description = description;
    }
    let scope = scopes::update(admin, &before, scope, caller.author()).await?;
    Ok(Answer::Ok(ScopeView::of(&scope)))
}

/// Deletes the scope.
pub(crate) async fn delete(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: Option<&str>,
    id: &str,
) -> Result<Answer<()>, Error> {
    let scope = scope_in_reach(admin, caller, realm_id, id, permission::SCOPE_DELETE).await?;
    scopes::delete(admin, &scope, caller.author()).await?;
    Ok(Answer::Done)
}

/// The client whose requestable scopes are asked for, in the caller's reach for `permission`, with
/// the realm's account.
pub(crate) async fn client_for_scopes(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: &str,
    client_id: &str,
    permission: &str,
) -> Result<(String, Client), Error> {
    let realm = crate::directory::realms::find(admin, realm_id).await?;
    let owner = realm.as_ref().map(|r| r.account_id.clone());
    let resource = Resource::Client { realm_id: realm_id.to_owned(), id: client_id.to_owned(), owner: owner.clone() };
    caller.require(admin.authz, permission, resource)?;
    let client = client_store::find(admin.store.pool(), realm_id, client_id).await?.ok_or(Error::unreached())?;
    Ok((owner.map(String::from).unwrap_or_default(), client))
}

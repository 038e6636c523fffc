//! The admin operations on realms: create one, read and change its settings, delete it.

use crate::authz::caller::Caller;
use crate::authz::permission;
use crate::directory::listing::ListQuery;
use crate::directory::reach::Admin;
use crate::directory::reach::RealmRead;
use crate::directory::reach::{InRealm, RealmDelete, RealmUpdate};
use crate::directory::realms::{RealmInput, RealmView};
use crate::kernel::ids::RealmId;
use crate::kernel::validate::{Body, Rule, parsed};
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::realms::{self, Realm, RealmSettings};

/// `POST /realms`: the created realm.
pub async fn create(admin: &Admin<'_>, caller: Caller, mut body: Body) -> Result<Answer<RealmView>, Error> {
    caller.require_account(admin.authz, permission::REALM_CREATE)?;
    let now = admin.clock.now();
    let id = body.required("id", parsed(RealmId::parse));
    let input = RealmInput { id, ..RealmInput::read(&mut body) };
    body.finish()?;
    let Some(id) = input.id.clone() else { return Err(Error::invalid("id", Rule::Required, "id is required")) };
    let mut realm = Realm {
        id: RealmId::known(String::new()),
        account_id: caller.account_id().clone(),
        display_name: String::new(),
        status: Status::Active,
        settings: RealmSettings::default(),
        created_at: now,
        updated_at: now,
    };
    input.apply(&mut realm);
    realm.id = id;
    if realm.display_name.is_empty() {
        realm.display_name = realm.id.to_string();
    }
    let realm = crate::directory::realms::create(admin, realm, caller.author()).await?;
    Ok(Answer::Created(RealmView::from(&realm)))
}

/// `GET /realms`: a page of the account's realms.
pub async fn list(admin: &Admin<'_>, caller: Caller, query: Option<String>) -> Result<Answer<RealmView>, Error> {
    caller.require_account(admin.authz, permission::REALM_READ)?;
    let list = ListQuery::parse(query, &[])?;
    list.status_in(crate::store::Status::NAMES)?;
    let found = realms::page(&admin.store, caller.account_id(), &list.page).await?;
    Ok(Answer::Paged(found.map(|realm| RealmView::from(&realm))))
}

/// `PUT /realms/{realm}`: the updated realm.
pub async fn update(
    admin: &Admin<'_>,
    InRealm { realm: before, caller, .. }: InRealm<RealmUpdate>,
    mut body: Body,
) -> Result<Answer<RealmView>, Error> {
    let mut realm = Realm::clone(&before);
    body.unchanged("id", &realm.id);
    let input = RealmInput::read(&mut body);
    body.finish()?;
    input.apply(&mut realm);
    let realm = crate::directory::realms::update(admin, &before, realm, caller.author()).await?;
    Ok(Answer::Ok(RealmView::from(&realm)))
}

/// `DELETE /realms/{realm}`: deleted, with its clients and people.
pub async fn delete(
    admin: &Admin<'_>,
    InRealm { realm, caller, .. }: InRealm<RealmDelete>,
) -> Result<Answer<()>, Error> {
    crate::directory::realms::delete(admin, &realm, caller.author()).await?;
    Ok(Answer::Done)
}

/// `GET /realms/{realm}`: the realm.
pub fn read(InRealm { realm, .. }: InRealm<RealmRead>) -> Result<Answer<RealmView>, Error> {
    Ok(Answer::Ok(RealmView::from(realm.as_ref())))
}

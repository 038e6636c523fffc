//! The admin operations on a realm's organizations and their members.

use crate::directory::admin::members;
use crate::directory::listing::ListQuery;
use crate::directory::members::Owner;
use crate::directory::organizations;
use crate::directory::organizations::{OrganizationInput, OrganizationMembership, OrganizationView};
use crate::directory::reach::{
    Admin, Found, InRealm, OrganizationCreate, OrganizationDelete, OrganizationRead, OrganizationUpdate,
};
use crate::kernel::ids::OrganizationId;
use crate::kernel::validate::{Body, Rule};
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::memberships::Membership;
use crate::store::organizations::{self as org_store, Organization};

/// `POST /realms/{realm}/organizations`: the created organization.
pub async fn create(
    admin: &Admin<'_>,
    InRealm { realm, caller, .. }: InRealm<OrganizationCreate>,
    mut body: Body,
) -> Result<Answer<OrganizationView>, Error> {
    let now = admin.clock.now();
    let mut organization = Organization {
        id: OrganizationId::fresh(),
        realm_id: realm.id.clone(),
        name: String::new(),
        description: None,
        domains: Vec::new(),
        status: Status::Active,
        created_at: now,
        updated_at: now,
    };
    if !body.has("name") {
        body.refuse("name", Rule::Required, "name is required");
    }
    let input = OrganizationInput::read(&mut body);
    body.finish()?;
    input.apply(&mut organization);
    let organization = organizations::create(admin, organization, caller.author()).await?;
    Ok(Answer::Created(OrganizationView::of(&organization)))
}

/// `GET /realms/{realm}/organizations`: a page of the realm's organizations.
pub async fn list(
    admin: &Admin<'_>,
    InRealm { realm, .. }: InRealm<OrganizationRead>,
    query: Option<String>,
) -> Result<Answer<OrganizationView>, Error> {
    let list = ListQuery::parse(query, &[])?;
    list.status_in(crate::store::Status::NAMES)?;
    let found = org_store::page(&admin.store, &realm.id, &list.page).await?;
    Ok(Answer::Paged(found.map(|organization| OrganizationView::of(&organization))))
}

/// `PUT /realms/{realm}/organizations/{organizationId}`.
pub async fn update(
    admin: &Admin<'_>,
    Found { item: before, caller, .. }: Found<Organization, OrganizationUpdate>,
    mut body: Body,
) -> Result<Answer<OrganizationView>, Error> {
    let mut organization = before.clone();
    body.unchanged("id", &organization.id);
    let input = OrganizationInput::read(&mut body);
    body.finish()?;
    input.apply(&mut organization);
    let organization = organizations::update(admin, &before, organization, caller.author()).await?;
    Ok(Answer::Ok(OrganizationView::of(&organization)))
}

/// `DELETE /realms/{realm}/organizations/{organizationId}`: deleted with its domains and
/// memberships.
pub async fn delete(
    admin: &Admin<'_>,
    Found { item: organization, caller, .. }: Found<Organization, OrganizationDelete>,
) -> Result<Answer<()>, Error> {
    organizations::delete(admin, &organization, caller.author()).await?;
    Ok(Answer::Done)
}

/// The organization as an owner of members.
pub(crate) fn owner(organization: &Organization) -> Owner<'_> {
    Owner { kind: Membership::Organization, id: &organization.id, realm_id: &organization.realm_id }
}

/// `GET /realms/{realm}/organizations/{organizationId}`.
pub fn read(
    Found { item: organization, .. }: Found<Organization, OrganizationRead>,
) -> Result<Answer<OrganizationView>, Error> {
    Ok(Answer::Ok(OrganizationView::of(&organization)))
}

/// `GET /realms/{realm}/organizations/{organizationId}/members`: the ids of the members.
pub async fn members(
    admin: &Admin<'_>,
    Found { item: organization, .. }: Found<Organization, OrganizationRead>,
) -> Result<Answer<Vec<String>>, Error> {
    members::list(admin, owner(&organization)).await
}

/// `POST /realms/{realm}/organizations/{organizationId}/members`: added: `organizationId` and
/// `userId`.
pub async fn add_member(
    admin: &Admin<'_>,
    Found { item: organization, caller, .. }: Found<Organization, OrganizationUpdate>,
    body: Body,
) -> Result<Answer<OrganizationMembership>, Error> {
    let user_id = members::add(admin, &caller, owner(&organization), body).await?;
    Ok(Answer::Created(OrganizationMembership { organization_id: organization.id.into(), user_id }))
}

/// `DELETE /realms/{realm}/organizations/{organizationId}/members/{userId}`: removed.
pub async fn remove_member(
    admin: &Admin<'_>,
    Found { item: organization, caller, .. }: Found<Organization, OrganizationUpdate>,
    (_, _, user_id): (String, String, String),
) -> Result<Answer<()>, Error> {
    members::remove(admin, &caller, owner(&organization), &user_id).await
}

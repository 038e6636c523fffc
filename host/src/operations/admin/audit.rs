//! The admin operations that read the account's audit trail and access log.

use crate::authz::caller::Caller;
use crate::authz::permission;
use crate::directory::listing::ListQuery;
use crate::directory::reach::Admin;
use crate::operations::audit::{AccessView, TrailView};
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::access_log::{self};
use crate::store::trail;

/// `GET /audit-trail`: a page of the change trail, newest first.
pub async fn trail(admin: &Admin<'_>, caller: Caller, query: Option<String>) -> Result<Answer<TrailView>, Error> {
    caller.require_account(admin.authz, permission::AUDIT_READ)?;
    let list = ListQuery::parse(query, &["realmId", "resourceType", "actorCredentialId", "actorUserId", "action"])?;
    list.status_in(crate::store::trail::Outcome::NAMES)?;
    let filter = trail::TrailFilter {
        realm_id: list.filter("realmId"),
        resource_type: list.filter("resourceType"),
        actor_credential_id: list.filter("actorCredentialId"),
        actor_user_id: list.filter("actorUserId"),
        action: list.filter("action"),
    };
    let found = trail::page(&admin.store, caller.account_id(), filter, &list.page).await?;
    Ok(Answer::Paged(found.map(TrailView::from)))
}

/// `GET /access-logs`: a page of the access log, newest first.
pub async fn access_logs(
    admin: &Admin<'_>,
    access_log: &crate::store::access_log::AccessLog,
    caller: Caller,
    query: Option<String>,
) -> Result<Answer<AccessView>, Error> {
    caller.require_account(admin.authz, permission::AUDIT_READ)?;
    let list = ListQuery::parse(query, &["credentialId", "actorUserId"])?;
    list.status_in(crate::store::access_log::AccessOutcome::NAMES)?;
    // Entries of this host still queued are written first, so a caller reads its own requests.
    access_log.flush().await;
    let (credential, person) = (list.filter("credentialId"), list.filter("actorUserId"));
    let found = access_log::page(&admin.store, caller.account_id(), credential, person, &list.page).await?;
    Ok(Answer::Paged(found.map(AccessView::from)))
}

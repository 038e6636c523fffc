//! The admin operations on delegation grants: written, listed, read and withdrawn, and the
//! exchanges made under them.

use crate::directory::listing::ListQuery;
use crate::directory::reach::Admin;
use crate::directory::reach::{AuditRead, Found, InRealm, RealmRead, RealmUpdate};
use crate::kernel::validate::Body;
use crate::kernel::validate::Rule;
use crate::oauth::delegation::grants;
use crate::oauth::delegation::grants::{
    DelegationGrantInput, DelegationGrantView, ExchangeView, WithdrawalInput, WithdrawnGrantView,
};
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::delegation::{self as grant_store, DelegationGrant, GrantState};

/// `POST /realms/{realm}/delegation-grants`: the created grant.
pub async fn create(
    admin: &Admin<'_>,
    InRealm { realm, caller, .. }: InRealm<RealmUpdate>,
    mut body: Body,
) -> Result<Answer<DelegationGrantView>, Error> {
    let now = admin.clock.now();
    let input = DelegationGrantInput::read(&mut body, now);
    body.finish()?;
    let grant = input.grant(&realm, &caller, now);
    let Some(grant) = grant else { return Err(Error::Internal(anyhow::anyhow!("a refused body passed validation"))) };
    grants::write(admin, caller.author(), &realm, &grant, |grant| DelegationGrantView::of(grant, now)).await?;
    Ok(Answer::Created(DelegationGrantView::of(&grant, now)))
}

/// `GET /realms/{realm}/delegation-grants`: a page of the realm's grants.
pub async fn list(
    admin: &Admin<'_>,
    InRealm { realm, .. }: InRealm<RealmRead>,
    query: Option<String>,
) -> Result<Answer<DelegationGrantView>, Error> {
    let list = ListQuery::parse(query, &["clientId", "subjectUserId", "state"])?;
    let now = admin.clock.now();
    // `status`, as on every list; `state`, the field's own name, is taken too.
    let state_filter = match (list.status_in(GrantState::NAMES)?, list.filter("state")) {
        (Some(status), _) => Some(status),
        (None, None) => None,
        (None, Some(name)) => Some(
            GrantState::try_from(name.to_owned())
                .map_err(|_| Error::invalid("state", Rule::OneOf, "state must be Live, Expired or Withdrawn"))?,
        ),
    };
    let filter = grant_store::GrantFilter {
        client_id: list.filter("clientId"),
        subject_user_id: list.filter("subjectUserId"),
        state: state_filter,
    };
    let found = grant_store::page(&admin.store, &realm.id, now, filter, &list.page).await?;
    Ok(Answer::Paged(found.map(|grant| DelegationGrantView::of(&grant, now))))
}

/// `GET /realms/{realm}/delegation-grants/{grantId}`.
pub async fn read(
    admin: &Admin<'_>,
    Found { item: grant, .. }: Found<DelegationGrant, RealmRead>,
) -> Result<Answer<DelegationGrantView>, Error> {
    Ok(Answer::Ok(DelegationGrantView::of(&grant, admin.clock.now())))
}

/// `POST /realms/{realm}/delegation-grants/{grantId}/withdraw`: the withdrawn grant with
/// `revocationLimitSeconds`.
pub async fn withdraw(
    admin: &Admin<'_>,
    Found { item: before, caller, .. }: Found<DelegationGrant, RealmUpdate>,
    mut body: Body,
) -> Result<Answer<WithdrawnGrantView>, Error> {
    let input = WithdrawalInput::read(&mut body);
    body.finish()?;
    let Some(WithdrawalInput { reason }) = input else {
        return Err(Error::invalid("reason", Rule::Required, "reason is required"));
    };
    let now = admin.clock.now();
    let view = |grant: &DelegationGrant| DelegationGrantView::of(grant, now);
    let withdrawn = grants::withdraw(admin, caller.author(), &before, &reason, view).await?;
    Ok(Answer::Ok(WithdrawnGrantView {
        grant: DelegationGrantView::of(&withdrawn.grant, now),
        revocation_limit_seconds: withdrawn.revocation_limit_seconds,
    }))
}

/// `GET /realms/{realm}/delegation-exchanges`: a page of the realm's token exchanges, granted and
/// refused, newest first.
pub async fn exchanges(
    admin: &Admin<'_>,
    InRealm { realm, .. }: InRealm<AuditRead>,
    query: Option<String>,
) -> Result<Answer<ExchangeView>, Error> {
    let list = ListQuery::parse(query, &["clientId", "subjectUserId", "grantId"])?;
    list.status_in(crate::store::delegation::ExchangeOutcome::NAMES)?;
    let filter = grant_store::ExchangeFilter {
        client_id: list.filter("clientId"),
        subject_user_id: list.filter("subjectUserId"),
        grant_id: list.filter("grantId"),
    };
    let found = grant_store::exchange_page(&admin.store, &realm.id, filter, &list.page).await?;
    Ok(Answer::Paged(found.map(ExchangeView::from)))
}

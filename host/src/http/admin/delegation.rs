//! `/realms/{realm}/delegation-grants`: the grants under which a client may act for a person
//! through token exchange. A grant is written once and never edited; it
//! can only be withdrawn, at once and for good. Writing and withdrawing need write access to the
//! realm (`realm:update`); reading needs `realm:read`; the exchange trail needs `audit:read`.

use super::reach::{AuditRead, Found, InRealm, RealmRead, RealmUpdate};
use axum::extract::{RawQuery, State};

use super::ListQuery;
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::kernel::validate::Rule;
use crate::oauth::delegation::grants;
use crate::oauth::delegation::grants::{
    DelegationGrantInput, DelegationGrantView, ExchangeView, WithdrawalInput, WithdrawnGrantView,
};
use crate::runtime::error::Error;
use crate::store::delegation::{self as grant_store, DelegationGrant, GrantState};

#[utoipa::path(post, path = "/realms/{realm}/delegation-grants", tag = "Delegation", params(("realm" = String, Path)),
    request_body = DelegationGrantInput,
    responses((status = 201, description = "The created grant, in `data`", body = DelegationGrantView),
              (status = 400, description = "ValidationFailed, one notification per refused field"), (status = 403)),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    InRealm { realm, caller, .. }: InRealm<RealmUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<DelegationGrantView>, Error> {
    let now = state.clock.now();
    let input = DelegationGrantInput::read(&mut body, now);
    body.finish()?;
    let grant = input.grant(&realm, &caller, now);
    let Some(grant) = grant else { return Err(Error::Internal(anyhow::anyhow!("a refused body passed validation"))) };
    grants::write(&state, caller.author(), &realm, &grant, |grant| DelegationGrantView::of(grant, now)).await?;
    Ok(Answer::Created(DelegationGrantView::of(&grant, now)))
}

#[utoipa::path(get, path = "/realms/{realm}/delegation-grants", tag = "Delegation",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("clientId" = Option<String>, Query, description = "Grants of this acting client"),
           ("subjectUserId" = Option<String>, Query, description = "Grants for this person"),
           ("status" = Option<String>, Query, description = "Live, Expired or Withdrawn"),
           ("state" = Option<String>, Query, description = "The same as status"),
           ("sortBy" = Option<String>, Query, description = "createdAt, expiresAt, clientId"), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's grants, in `pagination`", body = [DelegationGrantView]),
              (status = 400), (status = 403)),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    InRealm { realm, .. }: InRealm<RealmRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<DelegationGrantView>, Error> {
    let list = ListQuery::parse(query, &["clientId", "subjectUserId", "state"])?;
    let now = state.clock.now();
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
    let found = grant_store::page(&state.store, &realm.id, now, filter, &list.page).await?;
    Ok(Answer::Paged(found.map(|grant| DelegationGrantView::of(&grant, now))))
}

#[utoipa::path(get, path = "/realms/{realm}/delegation-grants/{grantId}", tag = "Delegation",
    params(("realm" = String, Path), ("grantId" = String, Path)),
    responses((status = 200, body = DelegationGrantView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    State(state): State<AppState>,
    Found { item: grant, .. }: Found<DelegationGrant, RealmRead>,
) -> Result<Answer<DelegationGrantView>, Error> {
    Ok(Answer::Ok(DelegationGrantView::of(&grant, state.clock.now())))
}

#[utoipa::path(post, path = "/realms/{realm}/delegation-grants/{grantId}/withdraw", tag = "Delegation",
    params(("realm" = String, Path), ("grantId" = String, Path)), request_body = WithdrawalInput,
    responses((status = 200, description = "The withdrawn grant with `revocationLimitSeconds`", body = WithdrawnGrantView),
              (status = 400, description = "ValidationFailed: no reason"), (status = 403), (status = 404),
              (status = 409, description = "DelegationGrantAlreadyWithdrawn")),
    security(("apiKey" = [])))]
pub async fn withdraw(
    State(state): State<AppState>,
    Found { item: before, caller, .. }: Found<DelegationGrant, RealmUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<WithdrawnGrantView>, Error> {
    let input = WithdrawalInput::read(&mut body);
    body.finish()?;
    let Some(WithdrawalInput { reason }) = input else {
        return Err(Error::invalid("reason", Rule::Required, "reason is required"));
    };
    let now = state.clock.now();
    let view = |grant: &DelegationGrant| DelegationGrantView::of(grant, now);
    let withdrawn = grants::withdraw(&state, caller.author(), &before, &reason, view).await?;
    Ok(Answer::Ok(WithdrawnGrantView {
        grant: DelegationGrantView::of(&withdrawn.grant, now),
        revocation_limit_seconds: withdrawn.revocation_limit_seconds,
    }))
}

#[utoipa::path(get, path = "/realms/{realm}/delegation-exchanges", tag = "Delegation",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("clientId" = Option<String>, Query), ("subjectUserId" = Option<String>, Query), ("grantId" = Option<String>, Query),
           ("status" = Option<String>, Query, description = "Granted or Refused"),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's token exchanges, granted and refused, newest first", body = [ExchangeView]),
              (status = 400), (status = 403)),
    security(("apiKey" = [])))]
pub async fn exchanges(
    State(state): State<AppState>,
    InRealm { realm, .. }: InRealm<AuditRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<ExchangeView>, Error> {
    let list = ListQuery::parse(query, &["clientId", "subjectUserId", "grantId"])?;
    list.status_in(crate::store::delegation::ExchangeOutcome::NAMES)?;
    let filter = grant_store::ExchangeFilter {
        client_id: list.filter("clientId"),
        subject_user_id: list.filter("subjectUserId"),
        grant_id: list.filter("grantId"),
    };
    let found = grant_store::exchange_page(&state.store, &realm.id, filter, &list.page).await?;
    Ok(Answer::Paged(found.map(ExchangeView::from)))
}

//! `/realms/{realm}/delegation-grants`: the grants under which a client may act for a person
//! through token exchange. A grant is written once and never edited; it
//! can only be withdrawn, at once and for good. Writing and withdrawing need write access to the
//! realm (`realm:update`); reading needs `realm:read`; the exchange trail needs `audit:read`.

use super::reach::{AuditRead, Found, InRealm, RealmRead, RealmUpdate};
use axum::extract::{RawQuery, State};

use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::oauth::admin::delegation as admin;
use crate::oauth::delegation::grants::{
    DelegationGrantInput, DelegationGrantView, ExchangeView, WithdrawalInput, WithdrawnGrantView,
};
use crate::runtime::error::Error;
use crate::store::delegation::DelegationGrant;

#[utoipa::path(post, path = "/realms/{realm}/delegation-grants", tag = "Delegation", params(("realm" = String, Path)),
    request_body = DelegationGrantInput,
    responses((status = 201, description = "The created grant, in `data`", body = DelegationGrantView),
              (status = 400, description = "ValidationFailed, one notification per refused field"), (status = 403)),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    reached: InRealm<RealmUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<DelegationGrantView>, Error> {
    admin::create(&state.admin(), reached, body).await
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
    reached: InRealm<RealmRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<DelegationGrantView>, Error> {
    admin::list(&state.admin(), reached, query).await
}

#[utoipa::path(get, path = "/realms/{realm}/delegation-grants/{grantId}", tag = "Delegation",
    params(("realm" = String, Path), ("grantId" = String, Path)),
    responses((status = 200, body = DelegationGrantView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    State(state): State<AppState>,
    reached: Found<DelegationGrant, RealmRead>,
) -> Result<Answer<DelegationGrantView>, Error> {
    admin::read(&state.admin(), reached).await
}

#[utoipa::path(post, path = "/realms/{realm}/delegation-grants/{grantId}/withdraw", tag = "Delegation",
    params(("realm" = String, Path), ("grantId" = String, Path)), request_body = WithdrawalInput,
    responses((status = 200, description = "The withdrawn grant with `revocationLimitSeconds`", body = WithdrawnGrantView),
              (status = 400, description = "ValidationFailed: no reason"), (status = 403), (status = 404),
              (status = 409, description = "DelegationGrantAlreadyWithdrawn")),
    security(("apiKey" = [])))]
pub async fn withdraw(
    State(state): State<AppState>,
    reached: Found<DelegationGrant, RealmUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<WithdrawnGrantView>, Error> {
    admin::withdraw(&state.admin(), reached, body).await
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
    reached: InRealm<AuditRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<ExchangeView>, Error> {
    admin::exchanges(&state.admin(), reached, query).await
}

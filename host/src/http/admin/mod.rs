//! The admin JSON API under `/api/v1/admin`.

pub mod account;
pub mod audit;
pub mod clients;
pub mod realms;
pub mod roles;
pub mod secrets;

use axum::Router;
use axum::routing::get;
use chrono::{DateTime, Utc};

use super::auth::Caller;
use crate::AppState;
use crate::authz::Resource;
use crate::clock::to_millis;
use crate::error::Error;
use crate::store::page::PageRequest;
use crate::store::realms::{self as realm_store, Realm};
use crate::store::{Transaction, trail};
use crate::validate::{Notification, Rule};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/account", get(account::read))
        .route("/realms", get(realms::list).post(realms::create))
        .route("/realms/{realm}", get(realms::read).put(realms::update).delete(realms::delete))
        .route("/realms/{realm}/clients", get(clients::list).post(clients::create))
        .route("/realms/{realm}/clients/{client}", get(clients::read).put(clients::update).delete(clients::delete))
        .route("/roles", get(roles::list).post(roles::create))
        .route("/roles/permissions", get(roles::permissions))
        .route("/roles/{roleId}", get(roles::read).put(roles::update).delete(roles::delete))
        .route("/secrets", get(secrets::list).post(secrets::create))
        .route("/secrets/{id}", get(secrets::read).delete(secrets::delete))
        .route("/audit-trail", get(audit::trail))
        .route("/access-logs", get(audit::access_logs))
}

/// Loads a realm the caller may act on with `permission`. A realm of another account and one that
/// does not exist get the same 403 (no existence leak).
pub async fn realm_in_reach(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    permission: &str,
) -> Result<Realm, Error> {
    let realm = realm_store::find(state.store.pool(), realm_id).await?;
    let owner = realm.as_ref().map(|r| r.account_id.clone());
    caller.require(state, permission, Resource::Realm { id: realm_id.to_owned(), owner })?;
    realm.ok_or(Error::Forbidden(crate::error::ErrorCode::Forbidden))
}

/// Writes the change's trail row (and event, inside a realm), then commits.
pub async fn commit(
    state: &AppState,
    caller: &Caller,
    mut tx: Transaction,
    change: trail::Change,
) -> Result<(), Error> {
    let at = to_millis(state.clock.now());
    trail::record_change(&mut tx, &caller.actor, &caller.request, &change, at).await?;
    tx.commit().await?;
    Ok(())
}

/// Reads the SPEC's paging and filtering parameters (`pageNumber`, `pageSize`, `searchTerm`,
/// `status`, `sortBy`, `sortDirection`, `createdFrom`, `createdTo`) and returns the rest.
pub fn page_request(query: &[(String, String)]) -> Result<(PageRequest, Vec<(String, String)>), Error> {
    let mut request = PageRequest::default();
    let mut number = 1_i64;
    let mut size = i64::from(crate::store::page::DEFAULT_PAGE_SIZE);
    let mut refused = Vec::new();
    let mut rest = Vec::new();
    let whole = |name: &str, value: &str, refused: &mut Vec<Notification>| {
        value.trim().parse::<i64>().ok().or_else(|| {
            refused.push(Notification::new(name, Rule::Type, format!("{name} must be a whole number")));
            None
        })
    };
    let instant = |name: &str, value: &str, refused: &mut Vec<Notification>| {
        DateTime::parse_from_rfc3339(value).map(|at| at.with_timezone(&Utc)).ok().or_else(|| {
            refused.push(Notification::new(name, Rule::Format, format!("{name} must be an ISO 8601 timestamp")));
            None
        })
    };
    for (name, value) in query {
        match name.as_str() {
            "pageNumber" => number = whole(name, value, &mut refused).unwrap_or(number),
            "pageSize" => size = whole(name, value, &mut refused).unwrap_or(size),
            "searchTerm" => request.search = Some(value.clone()).filter(|v| !v.trim().is_empty()),
            "status" => request.status = Some(value.clone()).filter(|v| !v.is_empty()),
            "sortBy" => request.sort_by = Some(value.clone()),
            "sortDirection" => match value.to_ascii_lowercase().as_str() {
                "asc" => request.ascending = true,
                "desc" => request.ascending = false,
                _ => refused.push(Notification::new(name.as_str(), Rule::OneOf, "sortDirection must be asc or desc")),
            },
            "createdFrom" => request.created_from = instant(name, value, &mut refused),
            "createdTo" => request.created_to = instant(name, value, &mut refused),
            _ => rest.push((name.clone(), value.clone())),
        }
    }
    if !refused.is_empty() {
        return Err(Error::Validation(refused));
    }
    (request.number, request.size) = PageRequest::normalised(number, size);
    Ok((request, rest))
}

/// The query string's name/value pairs, percent-decoded.
pub fn query_pairs(query: Option<String>) -> Vec<(String, String)> {
    query.map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect()).unwrap_or_default()
}

/// The first value of a query parameter among those `page_request` left.
pub fn param<'a>(rest: &'a [(String, String)], name: &str) -> Option<&'a str> {
    rest.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty())
}

/// Lists the parameters a list does not understand as validation failures.
pub fn refuse_unknown_params(rest: &[(String, String)], known: &[&str]) -> Result<(), Error> {
    let refused: Vec<Notification> = rest
        .iter()
        .filter(|(name, _)| !known.contains(&name.as_str()))
        .map(|(name, _)| {
            Notification::new(name.as_str(), Rule::Unknown, format!("{name} is not a parameter of this list"))
        })
        .collect();
    if refused.is_empty() { Ok(()) } else { Err(Error::Validation(refused)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
    }

    #[test]
    fn paging_parameters_follow_the_spec() {
        let (r, rest) = page_request(&q(&[("pageNumber", "0"), ("pageSize", "1000"), ("realmId", "x")])).unwrap();
        assert_eq!((r.number, r.size), (1, 200));
        assert_eq!(rest, q(&[("realmId", "x")]));
        let (r, _) = page_request(&q(&[("sortDirection", "ASC"), ("createdFrom", "2030-01-01T00:00:00Z")])).unwrap();
        assert!(r.ascending);
        assert!(r.created_from.is_some());
        assert!(page_request(&q(&[("pageSize", "ten")])).is_err());
        assert!(page_request(&q(&[("sortDirection", "up")])).is_err());
    }
}

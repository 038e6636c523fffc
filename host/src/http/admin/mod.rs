//! The admin JSON API under `/api/v1/admin`.

pub mod account;
pub mod allowed_ips;
pub mod analyses;
pub mod audit;
pub mod captures;
pub mod claim_mappers;
pub mod client_fields;
pub mod clients;
pub mod configuration;
pub mod connection_providers;
pub mod connections;
pub mod consumers;
pub mod dedicated;
pub mod delegation;
pub mod groups;
pub mod identity_providers;
pub mod imports;
pub mod incident_report;
pub mod members;
pub mod organizations;
pub mod reach;
pub mod realm_roles;
pub mod realms;
pub mod registration;
pub mod resource_servers;
pub mod roles;
pub mod scopes;
pub mod secrets;
pub mod sessions;
pub mod signing_keys;
pub mod suspensions;
pub mod threats;
pub mod users;
pub mod webhooks;

use std::sync::Arc;

use axum::Router;
use axum::routing::{delete, get, post, put};
use chrono::{DateTime, Utc};

use super::auth::Caller;
use crate::authz::Resource;
use crate::http::AppState;
use crate::kernel::validate::{Notification, Rule};
use crate::runtime::error::Error;
use crate::store::page::PageRequest;
use crate::store::realms::Realm;
use crate::store::{Transaction, trail};

pub fn routes() -> Router<AppState> {
    let router = Router::new()
        .route("/account", get(account::read))
        .route("/account/members", get(account::members))
        .route("/account/members/{userId}", put(account::update_member).delete(account::remove_member))
        .route("/account/invitations", get(account::invitations).post(account::invite))
        .route("/account/invitations/{invitationId}", delete(account::revoke_invitation))
        .route("/account/notification-preferences", get(account::preferences).put(account::update_preferences))
        .route("/account/notifications", get(account::notifications))
        .route("/dedicated/instance", get(dedicated::read).put(dedicated::update))
        .route("/realms", get(realms::list).post(realms::create))
        .route("/realms/{realm}", get(realms::read).put(realms::update).delete(realms::delete))
        .route("/realms/{realm}/clients", get(clients::list).post(clients::create))
        .route("/realms/{realm}/clients/{client}", get(clients::read).put(clients::update).delete(clients::delete))
        .route("/realms/{realm}/clients/{client}/allowed-ips", get(allowed_ips::read).put(allowed_ips::replace))
        .route("/realms/{realm}/clients/{client}/claim-mappers", get(claim_mappers::list).post(claim_mappers::create))
        .route("/realms/{realm}/clients/{client}/claim-mappers/preview", get(claim_mappers::preview))
        .route("/realms/{realm}/clients/{client}/claim-mappers/{mapperId}", delete(claim_mappers::delete))
        .route("/realms/{realm}/signing-keys", get(signing_keys::realm_signing_keys))
        .route("/realms/{realm}/signing-keys/rotate", post(signing_keys::rotate_realm_signing_keys))
        .route("/realms/{realm}/clients/{client}/signing-keys", get(signing_keys::signing_keys))
        .route("/realms/{realm}/clients/{client}/signing-keys/rotate", post(signing_keys::rotate_signing_keys))
        .route("/realms/{realm}/clients/{client}/client-secret/rotate", post(clients::rotate_secret))
        .route("/realms/{realm}/clients/{client}/consumers", get(consumers::list).post(consumers::create))
        .route(
            "/realms/{realm}/clients/{client}/consumers/{consumerId}",
            get(consumers::read).put(consumers::update).delete(consumers::delete),
        )
        .route("/realms/{realm}/users", get(users::list).post(users::create))
        .route("/realms/{realm}/users/{userId}", get(users::read).put(users::update).delete(users::delete))
        .route("/realms/{realm}/users/{userId}/impersonate", post(users::impersonate))
        .route("/realms/{realm}/users/{userId}/consents", get(registration::user_consents))
        .route("/realms/{realm}/users/{userId}/consents/{client}", delete(registration::withdraw_user_consent))
        .route(
            "/realms/{realm}/initial-access-tokens",
            get(registration::list_initial_access_tokens).post(registration::create_initial_access_token),
        )
        .route("/realms/{realm}/initial-access-tokens/{tokenId}", delete(registration::delete_initial_access_token))
        .route("/realms/{realm}/roles", get(realm_roles::list_realm_roles).post(realm_roles::create_realm_role))
        .route(
            "/realms/{realm}/roles/{roleId}",
            get(realm_roles::read_realm_role)
                .put(realm_roles::update_realm_role)
                .delete(realm_roles::delete_realm_role),
        )
        .route(
            "/realms/{realm}/clients/{client}/roles",
            get(realm_roles::list_client_roles).post(realm_roles::create_client_role),
        )
        .route(
            "/realms/{realm}/clients/{client}/roles/{roleId}",
            get(realm_roles::read_client_role)
                .put(realm_roles::update_client_role)
                .delete(realm_roles::delete_client_role),
        )
        .route(
            "/realms/{realm}/clients/{client}/granted-roles",
            get(groups::client_roles).post(groups::grant_client_role),
        )
        .route("/realms/{realm}/clients/{client}/granted-roles/{roleId}", delete(groups::withdraw_client_role))
        .route("/realms/{realm}/users/{userId}/roles", get(groups::user_roles).post(groups::grant_user_role))
        .route("/realms/{realm}/users/{userId}/roles/{roleId}", delete(groups::withdraw_user_role))
        .route("/realms/{realm}/groups", get(groups::list).post(groups::create))
        .route("/realms/{realm}/groups/{groupId}", get(groups::read).put(groups::update).delete(groups::delete))
        .route("/realms/{realm}/groups/{groupId}/members", get(groups::members).post(groups::add_member))
        .route("/realms/{realm}/groups/{groupId}/members/{userId}", delete(groups::remove_member))
        .route("/realms/{realm}/groups/{groupId}/roles", get(groups::group_roles).post(groups::grant_group_role))
        .route("/realms/{realm}/groups/{groupId}/roles/{roleId}", delete(groups::withdraw_group_role))
        .route("/scopes", get(scopes::list_catalogue).post(scopes::create_catalogue_scope))
        .route("/scopes/{scopeId}", put(scopes::update_catalogue_scope).delete(scopes::delete_catalogue_scope))
        .route("/realms/{realm}/scopes", get(scopes::list_realm_scopes).post(scopes::create_realm_scope))
        .route("/realms/{realm}/scopes/{scopeId}", put(scopes::update_realm_scope).delete(scopes::delete_realm_scope))
        .route("/realms/{realm}/clients/{client}/scopes", get(scopes::client_scopes).put(scopes::replace_client_scopes))
        .route("/realms/{realm}/organizations", get(organizations::list).post(organizations::create))
        .route(
            "/realms/{realm}/organizations/{organizationId}",
            get(organizations::read).put(organizations::update).delete(organizations::delete),
        )
        .route(
            "/realms/{realm}/organizations/{organizationId}/members",
            get(organizations::members).post(organizations::add_member),
        )
        .route("/realms/{realm}/organizations/{organizationId}/members/{userId}", delete(organizations::remove_member))
        .route("/realms/{realm}/delegation-grants", get(delegation::list).post(delegation::create))
        .route("/realms/{realm}/delegation-grants/{grantId}", get(delegation::read))
        .route("/realms/{realm}/delegation-grants/{grantId}/withdraw", post(delegation::withdraw))
        .route("/realms/{realm}/delegation-exchanges", get(delegation::exchanges))
        .route("/export", get(configuration::export))
        .route("/export/{resourceType}", get(configuration::export_part))
        .route("/import", post(configuration::import))
        .route("/import/translate", post(configuration::migration::translate))
        .route("/import/migrate", post(configuration::migration::migrate))
        .route("/import/{resourceType}", post(configuration::import_part))
        .route("/suspensions", get(suspensions::list))
        .route("/realms/{realm}/clients/{client}/users/import", get(imports::list).post(imports::create))
        .route("/realms/{realm}/clients/{client}/users/import/{importId}", get(imports::read))
        .route(
            "/realms/{realm}/clients/{client}/users/{userId}/suspensions",
            get(suspensions::list_of_user).post(suspensions::create),
        )
        .route("/realms/{realm}/clients/{client}/users/{userId}/suspensions/{suspensionId}", get(suspensions::read))
        .route(
            "/realms/{realm}/clients/{client}/users/{userId}/suspensions/{suspensionId}/lift",
            post(suspensions::lift),
        )
        .route("/realms/{realm}/resource-servers", get(resource_servers::list).post(resource_servers::create))
        .route(
            "/realms/{realm}/resource-servers/{serverId}",
            get(resource_servers::read).put(resource_servers::update).delete(resource_servers::delete),
        )
        .route("/realms/{realm}/identity-providers", get(identity_providers::list).post(identity_providers::create))
        .route(
            "/realms/{realm}/identity-providers/{providerId}",
            get(identity_providers::read).put(identity_providers::update).delete(identity_providers::delete),
        )
        .route(
            "/realms/{realm}/clients/{client}/identity-providers",
            get(identity_providers::client_providers).put(identity_providers::offer_client_providers),
        )
        .route(
            "/realms/{realm}/organizations/{organizationId}/identity-providers",
            get(identity_providers::organization_providers).put(identity_providers::offer_organization_providers),
        )
        .route(
            "/realms/{realm}/connection-providers",
            get(connection_providers::list).post(connection_providers::create),
        )
        .route(
            "/realms/{realm}/connection-providers/{providerId}",
            get(connection_providers::read).put(connection_providers::update).delete(connection_providers::delete),
        )
        .route("/realms/{realm}/connections", get(connections::list))
        .route("/realms/{realm}/connections/{connectionId}", get(connections::read).delete(connections::delete))
        .route("/realms/{realm}/users/{userId}/connections", get(connections::of_user))
        .route("/realms/{realm}/sessions", get(sessions::list))
        .route("/realms/{realm}/sessions/{sessionId}", get(sessions::read).delete(sessions::revoke))
        .route("/roles", get(roles::list).post(roles::create))
        .route("/roles/permissions", get(roles::permissions))
        .route("/roles/{roleId}", get(roles::read).put(roles::update).delete(roles::delete))
        .route("/secrets", get(secrets::list).post(secrets::create))
        .route("/secrets/rotation-policy", get(secrets::rotation_policy))
        .route("/secrets/{id}", get(secrets::read).delete(secrets::delete))
        .route("/secrets/{id}/rotate", post(secrets::rotate))
        .route("/webhook-captures", get(captures::list_captures).post(captures::create_capture))
        .route("/webhook-captures/{captureId}", get(captures::read_capture).delete(captures::delete_capture))
        .route("/webhook-captures/{captureId}/requests", get(captures::captured_requests))
        .route("/realms/{realm}/clients/{client}/webhooks/metrics", get(webhooks::client_webhook_metrics))
        .route("/realms/{realm}/clients/{client}/webhooks/events", get(webhooks::client_webhook_events))
        .route(
            "/realms/{realm}/clients/{client}/webhooks/{webhookId}/deliveries/{deliveryId}/replay",
            post(webhooks::replay_client_delivery),
        )
        .route("/threat-incidents", get(threats::list))
        .route("/threat-incidents/summary", get(threats::summary))
        .route("/threat-incidents/exposures", get(threats::exposures))
        .route("/threat-incidents/{incidentId}", get(threats::read))
        .route("/threat-incidents/{incidentId}/dismiss", post(threats::dismiss))
        .route("/threat-incidents/mitigations/{mitigationId}/revoke", post(threats::revoke))
        .route("/realms/{realm}/users/{userId}/threat-standing", get(threats::standing))
        .route("/threat-incidents/{incidentId}/analyses", get(analyses::list))
        .route("/threat-incidents/analyses/{analysisId}/retry", post(analyses::retry))
        .route("/threat-incidents/analyses/{analysisId}/report", get(analyses::report))
        .route("/threat-incidents/analyses/{analysisId}/recommendations/{recommendation}/apply", post(analyses::apply))
        .route("/threat-incidents/analysis-actions/{actionId}/revert", post(analyses::revert))
        .route("/audit-trail", get(audit::trail))
        .route("/access-logs", get(audit::access_logs));
    webhooks::endpoint_routes(webhooks::endpoint_routes(router, webhooks::REALM_PREFIX), webhooks::CLIENT_PREFIX)
}

/// The realm with this id, from this host's cache when it holds it.
pub async fn find_realm(state: &AppState, id: &str) -> Result<Option<Arc<Realm>>, Error> {
    crate::directory::realms::find(state, id).await
}

/// Loads a realm the caller may act on with `permission`. A realm of another account and one that
/// does not exist get the same 403 (no existence leak).
pub async fn realm_in_reach(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    permission: &str,
) -> Result<Arc<Realm>, Error> {
    let realm = find_realm(state, realm_id).await?;
    let owner = realm.as_ref().map(|r| r.account_id.clone());
    caller.require(state, permission, Resource::Realm { id: realm_id.to_owned(), owner })?;
    realm.ok_or(Error::Forbidden(crate::kernel::error_code::ErrorCode::Forbidden))
}

/// Commits an administrative change made by the caller (see [`crate::runtime::changes::commit`]).
pub async fn commit(state: &AppState, caller: &Caller, tx: Transaction, change: trail::Change) -> Result<(), Error> {
    crate::runtime::changes::commit(state, caller.author(), tx, change).await
}

/// The name and value pairs of a query string, decoded, in order.
pub fn query_pairs(query: Option<String>) -> Vec<(String, String)> {
    query.map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect()).unwrap_or_default()
}

/// A paged list request: the paging and filtering parameters (`pageNumber`, `pageSize`,
/// `searchTerm`, `status`, `sortBy`, `sortDirection`, `createdFrom`, `createdTo`) and the list's own
/// filters. Any other parameter is refused.
#[derive(Debug)]
pub struct ListQuery {
    pub page: PageRequest,
    filters: Vec<(String, String)>,
}

impl ListQuery {
    pub fn parse(query: Option<String>, filters: &[&str]) -> Result<Self, Error> {
        let pairs = query_pairs(query);
        let mut page = PageRequest::default();
        let mut number = 1_i64;
        let mut size = i64::from(crate::store::page::DEFAULT_PAGE_SIZE);
        let mut refused = Vec::new();
        let mut own = Vec::new();
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
        for (name, value) in pairs {
            match name.as_str() {
                "pageNumber" => number = whole(&name, &value, &mut refused).unwrap_or(number),
                "pageSize" => size = whole(&name, &value, &mut refused).unwrap_or(size),
                "searchTerm" => page.search = Some(value).filter(|v| !v.trim().is_empty()),
                "status" => page.status = Some(value).filter(|v| !v.is_empty()),
                "sortBy" => page.sort_by = Some(value),
                "sortDirection" => match value.to_ascii_lowercase().as_str() {
                    "asc" => page.ascending = true,
                    "desc" => page.ascending = false,
                    _ => refused.push(Notification::new(name, Rule::OneOf, "sortDirection must be asc or desc")),
                },
                "createdFrom" => page.created_from = instant(&name, &value, &mut refused),
                "createdTo" => page.created_to = instant(&name, &value, &mut refused),
                _ if filters.contains(&name.as_str()) => own.push((name, value)),
                _ => {
                    let message = format!("{name} is not a parameter of this list");
                    refused.push(Notification::new(name, Rule::Unknown, message));
                }
            }
        }
        if !refused.is_empty() {
            return Err(Error::Validation(refused));
        }
        (page.number, page.size) = PageRequest::normalised(number, size);
        Ok(Self { page, filters: own })
    }

    /// The `status` asked for, one of `names` (a listing's statuses, `Kind::NAMES`); any other is
    /// refused on `status`, as a list never answers an empty page for a status that cannot be.
    pub fn status_in<T: Copy>(&self, names: &[(&'static str, T)]) -> Result<Option<T>, Error> {
        let Some(asked) = self.page.status.as_deref() else { return Ok(None) };
        if let Some((_, status)) = names.iter().find(|(name, _)| *name == asked) {
            return Ok(Some(*status));
        }
        let mut listed: Vec<&str> = names.iter().map(|(name, _)| *name).collect();
        let last = listed.pop().unwrap_or_default();
        let one_of = if listed.is_empty() { last.to_owned() } else { format!("{} or {last}", listed.join(", ")) };
        Err(Error::invalid("status", Rule::OneOf, format!("status must be {one_of}")))
    }

    /// The value of one of the list's own filters, when given.
    pub fn filter(&self, name: &str) -> Option<&str> {
        self.filters.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paging_parameters_follow_the_spec() {
        let q = |text: &str| ListQuery::parse(Some(text.to_owned()), &["realmId"]);
        let list = q("pageNumber=0&pageSize=1000&realmId=x").unwrap();
        assert_eq!((list.page.number, list.page.size), (1, 200));
        assert_eq!(list.filter("realmId"), Some("x"));
        let list = q("sortDirection=ASC&createdFrom=2030-01-01T00%3A00%3A00Z").unwrap();
        assert!(list.page.ascending);
        assert!(list.page.created_from.is_some());
        assert!(q("pageSize=ten").is_err());
        assert!(q("sortDirection=up").is_err());
        assert!(q("colour=red").is_err());
    }
}

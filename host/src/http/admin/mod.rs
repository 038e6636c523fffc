//! The admin JSON API under `/api/v1/admin`.

pub mod account;
pub mod allowed_ips;
pub mod analyses;
pub mod audit;
pub mod authenticators;
pub mod captures;
pub mod claim_mappers;
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

pub use crate::directory::listing::{ListQuery, query_pairs};

use super::auth::Caller;
use crate::http::AppState;
use crate::runtime::error::Error;
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
        .route("/realms/{realm}/users/{userId}/authenticators", get(authenticators::list).delete(authenticators::reset))
        .route("/realms/{realm}/users/{userId}/authenticators/{authenticatorId}", delete(authenticators::remove))
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

/// Loads a realm the caller may act on with `permission` (see [`reach::realm_in_reach`]).
pub async fn realm_in_reach(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    permission: &str,
) -> Result<Arc<Realm>, Error> {
    reach::realm_in_reach(&state.admin(), caller, realm_id, permission).await
}

/// Commits an administrative change made by the caller (see [`crate::runtime::changes::commit`]).
pub async fn commit(state: &AppState, caller: &Caller, tx: Transaction, change: trail::Change) -> Result<(), Error> {
    crate::runtime::changes::commit(state, caller.author(), tx, change).await
}

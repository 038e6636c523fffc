//! The OpenAPI 3.1 document of the admin API: generated from the handlers' annotations, then made
//! the contract clients are generated from (`contract`).

mod contract;

use crate::directory::realms::RealmView;
use std::sync::OnceLock;

use axum::response::{IntoResponse, Response};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::admin::webhooks::ClientEndpointPaths;
use super::admin::{
    account, allowed_ips, analyses, audit, authenticators, captures, claim_mappers, clients, configuration,
    connection_providers, connections, consumers, dedicated, delegation, groups, identity_providers, imports,
    organizations, realm_roles, realms, registration, resource_servers, roles, scopes, secrets, sessions, signing_keys,
    suspensions, threats, users, webhooks,
};
use super::envelope::{NotificationBody, Pagination};
use crate::kernel::error_code::ErrorCode;

#[derive(OpenApi)]
#[openapi(
    info(title = "Castellan admin API", version = "v1",
         description = "Every response is the admin envelope: `success`, `statusCode`, and `data` (or `pagination` on paged lists) on success; `errorCode`, `notifications` and `requestId` on errors. JSON in camelCase; empty fields are omitted."),
    servers((url = "/api/v1/admin")),
    paths(
        account::read, account::members, account::update_member, account::remove_member,
        account::invite, account::invitations, account::revoke_invitation, account::accept_invitation,
        account::preferences, account::update_preferences, account::notifications,
        dedicated::read, dedicated::update,
        users::impersonate,
        realms::create, realms::list, realms::read, realms::update, realms::delete,
        clients::create, clients::list, clients::read, clients::update, clients::delete,
        users::create, users::list, users::read, users::update, users::delete,
        registration::user_consents, registration::withdraw_user_consent,
        registration::create_initial_access_token, registration::list_initial_access_tokens,
        registration::delete_initial_access_token,
        sessions::list, sessions::read, sessions::revoke,
        organizations::create, organizations::list, organizations::read, organizations::update, organizations::delete,
        organizations::members, organizations::add_member, organizations::remove_member,
        delegation::create, delegation::list, delegation::read, delegation::withdraw, delegation::exchanges,
        imports::create, imports::list, imports::read,
        configuration::export, configuration::export_part, configuration::import, configuration::import_part,
        configuration::migration::translate, configuration::migration::migrate,
        suspensions::create, suspensions::list_of_user, suspensions::read, suspensions::lift, suspensions::list,
        identity_providers::create, identity_providers::list, identity_providers::read, identity_providers::update,
        identity_providers::delete, identity_providers::client_providers, identity_providers::offer_client_providers,
        identity_providers::organization_providers, identity_providers::offer_organization_providers,
        connection_providers::create, connection_providers::list, connection_providers::read,
        connection_providers::update, connection_providers::delete,
        connections::list, connections::of_user, connections::read, connections::delete,
        authenticators::list, authenticators::reset, authenticators::remove,
        resource_servers::create, resource_servers::list, resource_servers::read, resource_servers::update,
        resource_servers::delete,
        scopes::create_catalogue_scope, scopes::list_catalogue, scopes::update_catalogue_scope, scopes::delete_catalogue_scope,
        scopes::create_realm_scope, scopes::list_realm_scopes, scopes::update_realm_scope, scopes::delete_realm_scope,
        scopes::client_scopes, scopes::replace_client_scopes,
        realm_roles::create_realm_role, realm_roles::list_realm_roles, realm_roles::read_realm_role,
        realm_roles::update_realm_role, realm_roles::delete_realm_role,
        realm_roles::create_client_role, realm_roles::list_client_roles, realm_roles::read_client_role,
        realm_roles::update_client_role, realm_roles::delete_client_role,
        groups::create, groups::list, groups::read, groups::update, groups::delete,
        groups::members, groups::add_member, groups::remove_member,
        groups::user_roles, groups::grant_user_role, groups::withdraw_user_role,
        groups::group_roles, groups::grant_group_role, groups::withdraw_group_role,
        groups::client_roles, groups::grant_client_role, groups::withdraw_client_role,
        signing_keys::signing_keys, signing_keys::rotate_signing_keys, signing_keys::realm_signing_keys,
        signing_keys::rotate_realm_signing_keys, clients::rotate_secret,
        consumers::create, consumers::list, consumers::read, consumers::update, consumers::delete,
        roles::create, roles::list, roles::permissions, roles::read, roles::update, roles::delete,
        secrets::create, secrets::list, secrets::read, secrets::delete, secrets::rotate, secrets::rotation_policy,
        webhooks::create_webhook, webhooks::list_webhooks, webhooks::read_webhook, webhooks::update_webhook,
        webhooks::delete_webhook, webhooks::rotate_webhook_secret, webhooks::test_webhook, webhooks::list_deliveries,
        webhooks::replay_client_delivery,
        webhooks::client_webhook_metrics, webhooks::client_webhook_events,
        captures::create_capture, captures::list_captures, captures::read_capture, captures::captured_requests,
        captures::delete_capture,
        threats::list, threats::summary, threats::exposures, threats::read, threats::dismiss, threats::revoke,
        threats::standing, allowed_ips::read, allowed_ips::replace, claim_mappers::list, claim_mappers::create, claim_mappers::delete, claim_mappers::preview, analyses::list, analyses::retry, analyses::apply, analyses::revert, analyses::report,
        audit::trail, audit::access_logs,
    ),
    components(schemas(NotificationBody, ErrorCode, Pagination<RealmView>)),
    modifiers(&ApiKeyScheme, &ClientEndpointPaths),
)]
pub struct AdminApi;

struct ApiKeyScheme;

impl Modify for ApiKeyScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme("apiKey", SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("x-api-key"))));
    }
}

/// The document as served: generated once, with the contract applied.
pub fn contract() -> &'static serde_json::Value {
    static DOCUMENT: OnceLock<serde_json::Value> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        let mut document = serde_json::to_value(AdminApi::openapi()).unwrap_or_default();
        contract::apply(&mut document);
        document
    })
}

pub async fn document() -> Response {
    axum::Json(contract()).into_response()
}

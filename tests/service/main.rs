//! Black-box tests of Castellan over real HTTP, one test binary. Each test starts the service on
//! its own database: SQLite by default, PostgreSQL when `TEST_DATABASE_URL` is set.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed expectation is a failed test

mod authority;
mod receiver;
mod smtp;
mod support;
mod upstreams;

mod bounds;
mod browser;
mod catalogue;
mod certification;
mod client_keys;
mod clients;
mod configuration;
mod connections;
mod consumers;
mod counting;
mod credentials;
mod delegation;
mod delivery_reliability;
mod device;
mod dpop;
mod envelope;
mod federation;
mod generated_clients;
mod hosts;
mod identity_providers;
mod imports;
mod jwt_attacks;
mod key_rollover;
mod logout;
mod logs_and_outages;
mod mcp;
mod metadata;
mod metadata_documents;
mod metrics;
mod migration;
mod node;
mod oidc_provider;
mod openapi_fuzzing;
mod operations;
mod paging;
mod permissions;
mod platform;
mod protection;
mod rate_limits;
mod readme;
mod real_browser;
mod realm_roles;
mod realms;
mod registration;
mod relying_party;
mod rotation;
mod sessions;
mod sign_in_steps;
mod ssrf;
mod suspensions;
mod team;
mod tokens;
mod trail;
mod users;
mod webhooks;

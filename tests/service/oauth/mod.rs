//! Signing in and tokens: the protocol endpoints, browsers and stock relying parties, federation,
//! delegation, client keys, DPoP, suspensions.

pub mod browser;
pub mod certification;
pub mod claim_mappers;
pub mod client_keys;
pub mod connections;
pub mod consumers;
pub mod delegation;
pub mod device;
pub mod dpop;
pub mod factor_rules;
pub mod federation;
pub mod introspection;
pub mod jwt_attacks;
pub mod key_rollover;
pub mod logout;
pub mod mcp;
pub mod metadata;
pub mod metadata_documents;
pub mod oidc_provider;
pub mod passkey_sign_up;
pub mod passkeys;
pub mod passkeys_browser;
pub mod real_browser;
pub mod registration;
pub mod relying_party;
pub mod second_factors;
pub mod sessions;
pub mod sign_in_steps;
pub mod step_up;
pub mod suspensions;
pub mod tokens;

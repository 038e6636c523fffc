//! OAuth 2.0 and OpenID Connect: what the provider says of itself, signing people in, issuing and
//! checking tokens, delegation to agents, federation with upstream providers, and the clients
//! themselves (self-registration, metadata documents, client keys, DPoP, consent), with
//! suspensions of a person's use of one.

pub mod admin;
pub mod client_keys;
pub mod consent;
pub mod delegation;
pub mod discovery;
pub mod dpop;
pub mod federation;
pub mod initial_access_tokens;
pub mod metadata_documents;
pub mod registration;
pub mod second_factors;
pub mod signin;
pub mod suspensions;
pub mod tokens;

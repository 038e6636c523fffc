//! Signing in through a realm's external identity providers. [`upstream`]: a provider's metadata
//! and keys, read from its discovery address; [`id_token`]: what its ID token must be before the
//! person it names is taken.

pub mod id_token;
pub mod upstream;

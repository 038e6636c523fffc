//! Signing in through a realm's external identity providers. [`upstream`]: a provider's metadata
//! and keys, read from its discovery address; [`id_token`]: what its ID token must be before the
//! person it names is taken; [`person`]: that person as a person of the realm, found by their
//! link, linked by a vouched-for e-mail address, or created.

pub mod id_token;
pub mod person;
pub mod upstream;

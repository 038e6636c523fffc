//! Signing in through a realm's external identity providers. [`id_token`]: what an upstream
//! OpenID provider's ID token must be before the person it names is taken.

pub mod id_token;

//! The kernel: the vocabulary every wing speaks and nothing of the service's own behaviour. Ids,
//! validation of input, the clock, cryptography, configuration, password hashing, one-time
//! passwords, and the rules for addresses and address lists.

pub mod address_lists;
pub mod addresses;
pub mod backoff;
pub mod clock;
pub mod config;
pub mod crypto;
pub mod error_code;
pub mod ids;
pub mod passwords;
pub mod totp;
pub mod validate;
pub mod webauthn;

//! The admin operations of the OAuth wing: delegation grants and suspensions.

pub mod delegation;
pub mod suspensions;

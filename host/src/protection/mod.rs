//! Attack protection (SPEC "Attack protection rules"): the counting it decides on.

pub mod counting;

//! Attack protection (SPEC "Attack protection rules"): the counting it decides on, what each
//! attempt adds to it, and the replay of scenarios against a detector component.

pub mod counting;
pub mod scenario;
pub mod tracking;

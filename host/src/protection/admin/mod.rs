//! The admin operations of attack protection: its incidents, measures and exposures, and the
//! analyst's readings.

pub mod analyses;
pub mod threats;

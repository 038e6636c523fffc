//! Attack protection: counting, detection, measures, incidents, rate limits and the analyst.

pub mod analyst;
pub mod analyst_actions;
pub mod analyst_model;
pub mod counting;
pub mod measures;
pub mod rate_limits;

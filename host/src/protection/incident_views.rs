//! How incidents, their measures, exposures and an account's standing are shown: in the admin
//! API's answers and the console's pages.

use crate::kernel::clock::iso;
use crate::protection::incidents::title;
use crate::store::exposures::Exposure;
use crate::store::threats::{Incident, IncidentKind, IncidentSeverity, IncidentStatus, Measure, MeasureType, Standing};
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IncidentView {
    pub id: String,
    pub realm_id: String,
    /// The client the first detection came through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    pub kind: IncidentKind,
    /// The kind in words: Credential stuffing, Password spraying, …
    pub title: &'static str,
    /// The highest severity reached.
    pub severity: IncidentSeverity,
    pub status: IncidentStatus,
    pub started_at: String,
    /// The latest detection or refused attempt.
    pub last_activity_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<String>,
    pub detections: i64,
    pub refused_attempts: i64,
    pub blocked_sources: i64,
    pub protected_accounts: i64,
    pub exposed_passwords: i64,
    /// Every measure the incident took; only when one incident is read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measures: Option<Vec<MeasureView>>,
}

impl IncidentView {
    pub(crate) fn of(incident: Incident) -> Self {
        Self {
            title: title(incident.kind),
            id: incident.id.into(),
            realm_id: incident.realm_id.to_string(),
            client_id: incident.client_id.map(String::from),
            kind: incident.kind,
            severity: incident.severity,
            status: incident.status,
            started_at: iso(incident.started_at),
            last_activity_at: iso(incident.last_activity_at),
            closed_at: incident.closed_at.map(iso),
            detections: incident.detections,
            refused_attempts: incident.refused_attempts,
            blocked_sources: incident.blocked_sources,
            protected_accounts: incident.protected_accounts,
            exposed_passwords: incident.exposed_passwords,
            measures: None,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MeasureView {
    pub id: String,
    pub incident_id: String,
    pub realm_id: String,
    #[serde(rename = "type")]
    pub kind: MeasureType,
    /// The address a Source blocked measure refuses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_address: Option<String>,
    /// The account the other measures protect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_user_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// The factors counted, in words, the datacenter or Tor halving among them when it applied.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// InForce (until `lapsesAt`), Lapsed, Lifted, ChangeRequired (an exposed password not
    /// changed since) or Resolved (changed since).
    pub standing: Standing,
    pub created_at: String,
    /// When it lapses by itself; absent for an exposed password, which never does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lapses_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifted_at: Option<String>,
    /// The person or credential that lifted it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifted_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<String>,
}

impl MeasureView {
    pub(crate) fn of(measure: Measure, now: DateTime<Utc>) -> Self {
        Self {
            standing: measure.standing(now),
            reasons: measure.reasons,
            id: measure.id.into(),
            incident_id: measure.incident_id.into(),
            realm_id: measure.realm_id.to_string(),
            kind: measure.kind,
            target_address: measure.target_address,
            target_user_id: measure.target_user_id.map(String::from),
            country: measure.country,
            network: measure.network,
            created_at: iso(measure.created_at),
            lapses_at: measure.lapses_at.map(iso),
            lifted_at: measure.lifted_at.map(iso),
            lifted_by: measure.lifted_by,
            resolved_at: measure.resolved_at.map(iso),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExposureView {
    pub user_id: String,
    pub realm_id: String,
    /// The client the latest exposed sign-in came through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The incident behind the latest exposure.
    pub incident_id: String,
    /// The latest exposure.
    pub exposed_at: String,
    /// How many times the account's password arrived from an attack.
    pub exposures: i64,
    /// Whether the password was changed after the latest exposure.
    pub resolved: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<String>,
}

impl ExposureView {
    pub(crate) fn of(exposure: Exposure) -> Self {
        Self {
            user_id: exposure.user_id.to_string(),
            realm_id: exposure.realm_id.to_string(),
            client_id: exposure.client_id.map(String::from),
            incident_id: exposure.incident_id.into(),
            exposed_at: iso(exposure.exposed_at),
            exposures: exposure.exposures,
            resolved: exposure.resolved_at.is_some(),
            resolved_at: exposure.resolved_at.map(iso),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreatStandingView {
    pub user_id: String,
    /// Whether the current password arrived from an attack and was not changed since.
    pub password_exposed: bool,
    /// Since when, while it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exposed_since: Option<String>,
    /// The latest exposure (one row per account), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_exposure: Option<ExposureView>,
    /// Exposed-password measures on the account, newest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exposures: Vec<MeasureView>,
    /// Measures in force on the account now.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub measures_in_force: Vec<MeasureView>,
}

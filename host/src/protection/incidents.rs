//! What a detection leaves behind: the holds that refuse attempts, the incident it joins or opens, the measures
//! and exposures recorded for operators, the realm webhook events, the account's notification and
//! the e-mail to the account holder whose password arrived from an attack.

use super::detection::{self, Classification, Decision, MeasureKind, Severity};
use super::{Hold, Judged};
use crate::kernel::clock::iso;
use crate::kernel::ids::{IncidentId, MeasureId, UserId};
use crate::protection::Protection;
use crate::runtime::context::Context;
use crate::runtime::outbound::mail::Letter;
use crate::store::analyses::MeasureFactors;
use crate::store::clients::Client;
use crate::store::events::{self, Event, EventType};
use crate::store::exposures::{self, Exposure};
use crate::store::notifications::{self as preferences_store, AttacksDetected, Severity as NoticeSeverity};
use crate::store::realms::Realm;
use crate::store::threats::{
    self as store, Incident, IncidentKind, IncidentSeverity, IncidentStatus, Measure, MeasureType,
};
use crate::store::users::User;
use crate::store::{Connection, Error as StoreError, Store};
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::json;

/// An address that this many accounts of the realm approved is a shared network.
pub const SHARED_NETWORK_ACCOUNTS: i64 = 5;
/// Detections within this long of an incident's latest join it.
pub const GROUPING: TimeDelta = TimeDelta::minutes(30);
/// An incident this long without a detection or a refused attempt is resolved.
pub const QUIET: TimeDelta = TimeDelta::minutes(30);
/// The same account is reported at most once in this long.
const REPORTED_AGAIN_AFTER: TimeDelta = TimeDelta::hours(1);

/// Where a detection happened.
#[derive(Debug, Clone, Copy)]
pub struct Attack<'a> {
    pub realm: &'a Realm,
    pub client: &'a Client,
    /// The account named, when it exists.
    pub user: Option<&'a User>,
    pub address: &'a str,
}

/// What recording a detection means for the attempt, and the e-mail to send once it commits.
#[derive(Debug, Default)]
pub struct Recorded {
    /// The correct password arrived from an attack: refused as if it were wrong.
    pub password_exposed: bool,
    pub letters: Vec<Letter>,
}

fn incident_kind(classification: Option<Classification>) -> IncidentKind {
    match classification {
        Some(Classification::CredentialStuffing) => IncidentKind::CredentialStuffing,
        Some(Classification::PasswordSpraying) => IncidentKind::PasswordSpraying,
        Some(Classification::PushBombing) => IncidentKind::PushBombing,
        Some(Classification::RecoveryAbuse) => IncidentKind::RecoveryAbuse,
        Some(Classification::SignUpAbuse) => IncidentKind::SignUpAbuse,
        Some(Classification::SecondFactorGuessing) => IncidentKind::SecondFactorGuessing,
        Some(Classification::BruteForce) | None => IncidentKind::BruteForce,
    }
}

fn incident_severity(severity: Option<Severity>) -> IncidentSeverity {
    match severity {
        Some(Severity::Critical) => IncidentSeverity::Critical,
        Some(Severity::High) => IncidentSeverity::High,
        Some(Severity::Low) => IncidentSeverity::Low,
        Some(Severity::Medium) | None => IncidentSeverity::Medium,
    }
}

/// The title of an incident of `kind` (as operators read it).
pub fn title(kind: IncidentKind) -> &'static str {
    match kind {
        IncidentKind::CredentialStuffing => "Credential stuffing",
        IncidentKind::PasswordSpraying => "Password spraying",
        IncidentKind::BruteForce => "Brute force on one account",
        IncidentKind::PushBombing => "Push bombing",
        IncidentKind::RecoveryAbuse => "Password recovery abuse",
        IncidentKind::SignUpAbuse => "Mass sign-up",
        IncidentKind::SecondFactorGuessing => "Second factor guessed after the password",
    }
}

fn measure_type(kind: MeasureKind) -> Option<MeasureType> {
    match kind {
        MeasureKind::SourceBlocked => Some(MeasureType::SourceBlocked),
        MeasureKind::ClosedToUnknownAddresses => Some(MeasureType::ClosedToUnknownAddresses),
        MeasureKind::SignInPushesPaused => Some(MeasureType::SignInPushesPaused),
        MeasureKind::PasswordExposed => Some(MeasureType::PasswordExposed),
        // Silencing recovery e-mail is kept as a hold only: it is not one of the four measure types.
        MeasureKind::RecoverySilenced => None,
    }
}

fn hold_of(kind: MeasureKind) -> Option<Hold> {
    match kind {
        MeasureKind::SourceBlocked => Some(Hold::SourceBlocked),
        MeasureKind::ClosedToUnknownAddresses => Some(Hold::ClosedToUnknownAddresses),
        MeasureKind::SignInPushesPaused => Some(Hold::SignInPushesPaused),
        MeasureKind::RecoverySilenced => Some(Hold::RecoverySilenced),
        MeasureKind::PasswordExposed => None,
    }
}

/// Records a detection in the transaction of the attempt: holds (in the counting store, at once),
/// the incident, measures, exposure, events, notifications; the letters are for after the commit.
pub async fn record(
    context: &Context,
    protection: &Protection,
    tx: &mut Connection,
    attack: &Attack<'_>,
    judged: &Judged,
    now: DateTime<Utc>,
) -> Result<Recorded, StoreError> {
    let (protection, decision) = (protection, &judged.decision);
    let realm = attack.realm;
    let mut recorded = Recorded::default();

    store::serialize_detections(tx, &realm.id).await?;
    let measures = due_measures(protection, attack, decision, now).await;
    if measures.is_empty() {
        return Ok(recorded);
    }
    // An account reported within the hour: its measures still hold, nothing is reported again.
    let on_account = attack.user.filter(|_| measures.iter().any(|m| m.kind != MeasureKind::SourceBlocked));
    let reported_in = match on_account {
        Some(user) => protection
            .counters
            .held(&Hold::Reported.key(&realm.id, &user.id), now)
            .await
            .unwrap_or_else(|error| {
                tracing::error!(%error, "cannot read whether an account was reported within the hour");
                None
            })
            .map(|(incident_id, _)| incident_id),
        None => None,
    };
    let reportable = |kind: MeasureKind| kind == MeasureKind::SourceBlocked || reported_in.is_none();
    // A hold that is no measure (recovery e-mail silenced for one account) opens no incident: it
    // is placed here, the incident's id its value when another measure opens one.
    let opens = |kind: MeasureKind| reportable(kind) && measure_type(kind).is_some();
    let mut incident = if measures.iter().any(|m| opens(m.kind)) {
        let (incident, letters) = open_or_join(context, tx, attack, decision, now).await?;
        recorded.letters.extend(letters);
        Some(incident)
    } else {
        None
    };
    let incident_of_holds = incident.as_ref().map(|i| i.id.to_string()).or(reported_in.clone()).unwrap_or_default();
    for measure in measures.iter().filter(|m| measure_type(m.kind).is_none()) {
        let (Some(hold), Some(user), Some(seconds)) = (hold_of(measure.kind), attack.user, measure.seconds) else {
            continue;
        };
        let until = now + TimeDelta::seconds(i64::from(seconds));
        let key = hold.key(&realm.id, &user.id);
        if let Err(error) = protection.counters.hold(&key, &incident_of_holds, until, now).await {
            tracing::error!(%error, "cannot keep a measure of attack protection in the counting store");
        }
    }
    let measures: Vec<_> = measures.into_iter().filter(|m| measure_type(m.kind).is_some()).collect();
    let Some(incident_id) = incident.as_ref().map(|i| i.id.clone()).or(reported_in.clone().map(IncidentId::known))
    else {
        return Ok(recorded);
    };
    let preferences = preferences_store::preferences(&mut *tx, &realm.account_id).await?;

    for measure in measures {
        let target = match (measure.kind, attack.user) {
            (MeasureKind::SourceBlocked, _) => attack.address.to_owned(),
            (_, Some(user)) => user.id.to_string(),
            (_, None) => continue,
        };
        let lapses_at = measure.seconds.map(|seconds| now + TimeDelta::seconds(i64::from(seconds)));
        if let (Some(hold), Some(until)) = (hold_of(measure.kind), lapses_at) {
            let key = hold.key(&realm.id, &target);
            if measure.kind == MeasureKind::SourceBlocked {
                // Placed only where no block is in force, even where detections are not serialized
                // (hosts sharing Redis but not a database): a second block would count as an
                // earlier one and lengthen the next.
                match protection.counters.hold_unless_held(&key, &incident_id, until, now).await {
                    Ok(false) => continue,
                    Ok(true) => {
                        if let Err(error) =
                            super::tracking::record_block(&protection.counters, &realm.id, &target, now).await
                        {
                            tracing::error!(%error, "cannot count a block of a source");
                        }
                    }
                    Err(error) => {
                        tracing::error!(%error, "cannot keep a measure of attack protection in the counting store")
                    }
                }
            } else if let Err(error) = protection.counters.hold(&key, &incident_id, until, now).await {
                tracing::error!(%error, "cannot keep a measure of attack protection in the counting store");
            }
        }
        if measure.kind == MeasureKind::PasswordExposed {
            recorded.password_exposed = true;
            crate::store::users::require_password_change(&mut *tx, &target, now).await?;
        }
        let (Some(kind), Some(incident)) = (measure_type(measure.kind), incident.as_mut()) else { continue };
        if !reportable(measure.kind) {
            continue;
        }
        let (country, network) = match kind {
            MeasureType::SourceBlocked => protection.place(&target),
            _ => (None, None),
        };
        let row = Measure {
            id: MeasureId::fresh(),
            incident_id: incident_id.clone(),
            account_id: realm.account_id.clone(),
            realm_id: realm.id.clone(),
            kind,
            target_address: (kind == MeasureType::SourceBlocked).then(|| target.clone()),
            target_user_id: (kind != MeasureType::SourceBlocked).then(|| target.clone()).map(UserId::known),
            country,
            network,
            reasons: decision.reasons.clone(),
            created_at: now,
            lapses_at,
            lifted_at: None,
            lifted_by: None,
            resolved_at: None,
            factors: factors(judged),
        };
        store::insert_measure(&mut *tx, &row).await?;
        match kind {
            MeasureType::SourceBlocked => incident.blocked_sources += 1,
            MeasureType::ClosedToUnknownAddresses | MeasureType::SignInPushesPaused => incident.protected_accounts += 1,
            MeasureType::PasswordExposed => {
                incident.exposed_passwords += 1;
                if let Some(user) = attack.user {
                    expose(context, tx, attack, user, incident, &preferences, &mut recorded, now).await?;
                }
            }
        }
    }
    if let (Some(user), None) = (on_account, &reported_in) {
        let key = Hold::Reported.key(&realm.id, &user.id);
        if let Err(error) = protection.counters.hold(&key, &incident_id, now + REPORTED_AGAIN_AFTER, now).await {
            tracing::error!(%error, "cannot remember that an account was reported");
        }
    }
    if let Some(incident) = &incident {
        store::update_incident(&mut *tx, incident).await?;
    }
    Ok(recorded)
}

/// What the counters held on the attempt, as the incident analyst reads it.
fn factors(judged: &Judged) -> MeasureFactors {
    let detection::Attempt { source, counts, .. } = judged.attempt;
    MeasureFactors {
        source_failures: counts.source_failures,
        source_accounts: counts.source_accounts,
        unknown_account_failures: counts.source_unknown_account_failures,
        earlier_blocks: counts.source_earlier_blocks,
        account_sources: counts.account_unapproved_sources,
        datacenter: source.datacenter,
        tor: source.tor,
    }
}

/// The measures of a decision still to take: a source that an attempt decided at the same moment
/// already blocked is not blocked again, nor is an incident opened for it.
async fn due_measures<'d>(
    protection: &Protection,
    attack: &Attack<'_>,
    decision: &'d Decision,
    now: DateTime<Utc>,
) -> Vec<&'d detection::Measure> {
    let mut due = Vec::with_capacity(decision.measures.len());
    for measure in &decision.measures {
        if measure.kind == MeasureKind::SourceBlocked {
            let key = Hold::SourceBlocked.key(&attack.realm.id, attack.address);
            match protection.counters.held(&key, now).await {
                Ok(Some(_)) => continue,
                Ok(None) => {}
                Err(error) => tracing::error!(%error, "cannot read whether a source is blocked"),
            }
        }
        due.push(measure);
    }
    due
}

/// The active incident of the detection's kind in the realm whose latest detection is within 30
/// minutes, with the detection added; or a new one, announced to the realm's endpoints and to the
/// account's operators (with the letters to them).
async fn open_or_join(
    context: &Context,
    tx: &mut Connection,
    attack: &Attack<'_>,
    decision: &Decision,
    now: DateTime<Utc>,
) -> Result<(Incident, Vec<Letter>), StoreError> {
    let kind = incident_kind(decision.classification);
    let severity = incident_severity(decision.severity);
    if let Some(mut incident) = store::joinable(tx, &attack.realm.id, kind, now - GROUPING).await? {
        incident.detections += 1;
        incident.last_detection_at = now;
        incident.last_activity_at = incident.last_activity_at.max(now);
        if severity.rank() > incident.severity.rank() {
            incident.severity = severity;
        }
        return Ok((incident, Vec::new()));
    }
    let incident = Incident {
        id: IncidentId::fresh(),
        account_id: attack.realm.account_id.clone(),
        realm_id: attack.realm.id.clone(),
        client_id: Some(attack.client.id.clone()),
        kind,
        severity,
        status: IncidentStatus::Active,
        started_at: now,
        last_detection_at: now,
        last_activity_at: now,
        closed_at: None,
        detections: 1,
        refused_attempts: 0,
        blocked_sources: 0,
        protected_accounts: 0,
        exposed_passwords: 0,
    };
    store::insert_incident(&mut *tx, &incident).await?;
    let classified = decision.classification.unwrap_or(Classification::BruteForce);
    context.metrics.incident_opened(classified.metric_name());
    let data = json!({
        "incident_id": incident.id,
        "kind": kind.as_str(),
        "severity": severity.as_str(),
        "started_at": iso(now),
        "client_id": attack.client.id,
        "reasons": decision.reasons,
    });
    publish(tx, attack, EventType::AttackDetected, data, now).await?;
    let preferences = preferences_store::preferences(&mut *tx, &attack.realm.account_id).await?;
    let notice = if kind == IncidentKind::RecoveryAbuse { NoticeSeverity::Info } else { NoticeSeverity::Warning };
    let description = format!(
        "{} detected in realm {} through client {}: {}.",
        title(kind),
        attack.realm.id,
        attack.client.id,
        decision.reasons.join("; ")
    );
    let letters =
        notify(context, tx, &preferences.attacks_detected, &incident, notice, title(kind).to_owned(), description, now)
            .await?;
    Ok((incident, letters))
}

async fn publish(
    tx: &mut Connection,
    attack: &Attack<'_>,
    event_type: EventType,
    data: serde_json::Value,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let event = Event {
        event_type,
        account_id: &attack.realm.account_id,
        realm_id: Some(&attack.realm.id),
        client_id: Some(&attack.client.id),
        data,
    };
    events::publish(tx, event, now).await.map(|_| ())
}

/// Raises the Attacks detected notification as the account owner chose; with e-mail chosen, the
/// letters to the account's owners.
#[allow(clippy::too_many_arguments)]
async fn notify(
    context: &Context,
    tx: &mut Connection,
    choice: &AttacksDetected,
    incident: &Incident,
    severity: NoticeSeverity,
    title: String,
    description: String,
    now: DateTime<Utc>,
) -> Result<Vec<Letter>, StoreError> {
    if *choice == AttacksDetected::Off {
        return Ok(Vec::new());
    }
    let everywhere = *choice == AttacksDetected::EmailAndWebhook;
    let raised = crate::operations::notifications::Raised {
        account_id: &incident.account_id,
        notification_type: "attacks_detected",
        severity,
        title: title.clone(),
        description: description.clone(),
        resource_id: Some(&incident.id),
        realm_id: Some(&incident.realm_id),
        webhook: everywhere,
    };
    crate::operations::notifications::raise(tx, raised, now).await?;
    if !everywhere {
        return Ok(Vec::new());
    }
    let team = crate::store::accounts::members(&mut *tx, &incident.account_id).await?;
    let console = &context.public_url;
    Ok(team
        .into_iter()
        .filter(|member| member.roles.iter().any(|role| role == "Owner"))
        .filter_map(|member| member.email)
        .map(|to| Letter {
            to,
            subject: format!("Castellan: {title}"),
            body: format!("{description}\n\nIncident {} — see it in the console at {console}.\n", incident.id),
        })
        .collect())
}

/// Records the exposure of the account's password, raises `credential_compromised` and the
/// critical notification, and writes the account holder's letter, branded for the client.
#[allow(clippy::too_many_arguments)]
async fn expose(
    context: &Context,
    tx: &mut Connection,
    attack: &Attack<'_>,
    user: &User,
    incident: &mut Incident,
    preferences: &preferences_store::Preferences,
    recorded: &mut Recorded,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let exposure = Exposure {
        user_id: user.id.clone(),
        account_id: attack.realm.account_id.clone(),
        realm_id: attack.realm.id.clone(),
        client_id: Some(attack.client.id.clone()),
        incident_id: incident.id.clone(),
        exposed_at: now,
        exposures: 1,
        resolved_at: None,
    };
    exposures::expose(&mut *tx, &exposure).await?;
    incident.severity = IncidentSeverity::Critical;
    let data = json!({
        "user_id": user.id,
        "username": user.username,
        "email": user.email,
        "incident_id": incident.id,
        "ip_address": attack.address,
        "detected_at": iso(now),
    });
    publish(tx, attack, EventType::CredentialCompromised, data, now).await?;
    let description = format!(
        "The correct password of {} (realm {}) arrived from {}, an address working through a list of \
         accounts. Sign-in from it was refused; the password must be changed at the next sign-in.",
        user.username, attack.realm.id, attack.address
    );
    let title = format!("Password exposed: {}", user.username);
    let letters =
        notify(context, tx, &preferences.attacks_detected, incident, NoticeSeverity::Critical, title, description, now)
            .await?;
    recorded.letters.extend(letters);
    if let Some(to) = &user.email {
        let client = &attack.client.name;
        recorded.letters.push(Letter {
            to: to.clone(),
            subject: format!("{client}: your password must be changed"),
            body: format!(
                "Hello {},\n\nSomeone signed in to {client} with your correct password from an address that was \
                 trying many accounts, so we refused it. Your password is known to others: choose a new one at \
                 your next sign-in to {client}, and change it anywhere else you use it.\n",
                user.first_name.as_deref().unwrap_or(&user.username)
            ),
        });
    }
    Ok(())
}

/// Resolves the incidents quiet for 30 minutes at `now`; how many.
pub async fn resolve_quiet(store: &Store, now: DateTime<Utc>) -> Result<usize, StoreError> {
    // Most runs find nothing: they read without taking the write transaction.
    if !store::any_quiet(store.pool(), now - QUIET).await? {
        return Ok(0);
    }
    let mut tx = store.begin().await?;
    let resolved = store::resolve_quiet(&mut tx, now - QUIET, now).await?;
    tx.commit().await?;
    Ok(resolved.len())
}

//! What operators do to attack protection's decisions: dismiss an incident (every measure in force
//! is lifted with it) or lift one measure. Each is an administrative change, in the trail; what a
//! lifted hold kept out may try again at once, and what a blocked source did is forgotten.

use serde::Serialize;
use serde_json::json;

use super::{Hold, Protection};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::threats::{self as store, Incident, IncidentStatus, Measure, MeasureType, Standing};
use crate::store::trail::{Change, ChangeAction, Placed};

/// An incident dismissed: as it was, as it is now, and the measures lifted with it.
#[derive(Debug, Clone)]
pub struct Dismissed {
    pub before: Incident,
    pub after: Incident,
    pub lifted: Vec<crate::kernel::ids::MeasureId>,
}

/// A measure lifted: as it was, and as it is now.
#[derive(Debug, Clone)]
pub struct Lifted {
    pub before: Measure,
    pub after: Measure,
}

/// Dismisses an active incident and lifts its measures in force; `view` is how the trail shows the
/// incident. What every source it blocked did is forgotten, lapsed blocks included.
pub async fn dismiss<V: Serialize>(
    context: &Context,
    protection: &Protection,
    by: Author<'_>,
    incident: Incident,
    view: impl Fn(&Incident) -> V,
) -> Result<Dismissed, Error> {
    let now = context.clock.now();
    let lifted_by = by.actor.acting_id().unwrap_or_default();
    let mut tx = context.store.begin().await?;
    if !store::dismiss(&mut *tx, &incident.id, now).await? {
        return Err(Error::Conflict("the incident is not active".into()));
    }
    let measures = store::measures_of_incident(&mut *tx, &incident.id).await?;
    let mut lifted = Vec::new();
    for measure in &measures {
        if measure.standing(now) == Standing::InForce && store::lift(&mut *tx, &measure.id, &lifted_by, now).await? {
            lifted.push(measure.id.clone());
        }
    }
    let after = Incident { status: IncidentStatus::Dismissed, closed_at: Some(now), ..incident.clone() };
    let dismissed = Dismissed { before: incident, after, lifted };
    let change = Change::of(ChangeAction::Update, dismissed.before.place(), 200)
        .before(view(&dismissed.before))
        .after(view(&dismissed.after))
        .details(json!({ "liftedMeasures": dismissed.lifted }));
    changes::commit(context, by, tx, change).await?;
    for measure in &measures {
        release(protection, measure).await;
    }
    Ok(dismissed)
}

/// Lifts a measure in force; `view` is how the trail shows the measure. An exposed password is
/// not lifted: it is resolved only by changing the password.
pub async fn lift<V: Serialize>(
    context: &Context,
    protection: &Protection,
    by: Author<'_>,
    measure: Measure,
    view: impl Fn(&Measure) -> V,
) -> Result<Lifted, Error> {
    if measure.kind == MeasureType::PasswordExposed {
        return Err(Error::Conflict("an exposed password is resolved only by changing the password".into()));
    }
    let now = context.clock.now();
    let lifted_by = by.actor.acting_id().unwrap_or_default();
    let mut tx = context.store.begin().await?;
    if !store::lift(&mut *tx, &measure.id, &lifted_by, now).await? {
        return Err(Error::Conflict("the measure is not in force".into()));
    }
    let after = Measure { lifted_at: Some(now), lifted_by: Some(lifted_by), ..measure.clone() };
    let lifted = Lifted { before: measure, after };
    let change = Change::of(ChangeAction::Update, lifted.before.place(), 200)
        .before(view(&lifted.before))
        .after(view(&lifted.after));
    changes::commit(context, by, tx, change).await?;
    release(protection, &lifted.before).await;
    Ok(lifted)
}

/// Ends a measure's hold and, for a blocked source, forgets what the source did.
async fn release(protection: &Protection, measure: &Measure) {
    match (measure.kind, &measure.target_address, &measure.target_user_id) {
        (MeasureType::SourceBlocked, Some(address), _) => protection.forget_source(&measure.realm_id, address).await,
        (MeasureType::ClosedToUnknownAddresses, _, Some(user)) => {
            protection.release(Hold::ClosedToUnknownAddresses, &measure.realm_id, user).await;
        }
        (MeasureType::SignInPushesPaused, _, Some(user)) => {
            protection.release(Hold::SignInPushesPaused, &measure.realm_id, user).await;
        }
        _ => {}
    }
}

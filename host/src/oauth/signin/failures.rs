//! The realm lockout's count of a sign-in's failures: a wrong password, or a wrong code from an
//! authenticator app, counted at the address it came from; and the even time of every refusal.

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::json;

use super::login_events::publish;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Transaction;
use crate::store::clients::Client;
use crate::store::events::EventType;
use crate::store::lockout::{self, Failures};
use crate::store::realms::Realm;
use crate::store::users::{self as user_store, User};

/// Whose failure the realm lockout counts, and where.
pub(super) struct Counting<'a> {
    pub realm: &'a Realm,
    pub client: &'a Client,
    pub user: Option<&'a User>,
    pub target: lockout::Target<'a>,
    pub address: &'a str,
}

/// Counts a wrong password or second factor against the lockout in `tx`, given the failures
/// counted so far: past the realm's limit the account (or name) is locked at the address, with
/// `user_locked_out`.
pub(super) async fn count_failure(
    context: &Context,
    tx: &mut Transaction,
    counting: &Counting<'_>,
    failures: Option<Failures>,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let Counting { realm, client, user, target, address } = *counting;
    let mut counted = match failures {
        Some(f) if now - f.first_failed_at < lockout::FAILURE_WINDOW => f,
        _ => Failures { failed_count: 0, first_failed_at: now, locked_until: None },
    };
    counted.failed_count += 1;
    if counted.failed_count >= realm.settings.max_failed_attempts {
        let until = now + TimeDelta::minutes(realm.settings.lockout_duration_minutes);
        if let Some(user) = user {
            let data = json!({
                "user_id": user.id,
                "username": user.username,
                "email": user.email,
                "lockout_end": crate::kernel::clock::iso(until),
                "access_failed_count": counted.failed_count,
            });
            publish(tx, realm, client, EventType::UserLockedOut, data, now).await?;
        }
        counted = Failures { failed_count: 0, first_failed_at: now, locked_until: Some(until) };
        context.metrics.locked_out();
    }
    lockout::save(&mut **tx, target, address, &counted).await?;
    Ok(())
}

/// Waits out what is left of the realm's refusal floor since the password check began, so that a
/// wrong guess takes as long whatever hash the name has, or whether it names anyone
/// ([`crate::kernel::passwords::RefusalFloors`]).
pub(super) async fn even_out_refusal(
    context: &Context,
    realm: &Realm,
    checking: std::time::Instant,
) -> Result<(), Error> {
    let imported = || async {
        let own = crate::kernel::passwords::own_prefix();
        Ok(user_store::imported_hashes(context.store.pool(), &realm.id, &own, 500).await?)
    };
    if let Some(floor) = context.passwords.refusal_floors.floor(&realm.id, imported).await.map_err(Error::Internal)? {
        tokio::time::sleep(floor.saturating_sub(checking.elapsed())).await;
    }
    Ok(())
}

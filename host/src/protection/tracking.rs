//! What attack protection counts about each attempt, and the snapshot of counts the detector
//! decides on. Every series is scoped to a realm; sources are addresses, accounts the name typed.

use chrono::{DateTime, Utc};

use crate::kernel::ids::new_guid;
use crate::protection::detection::{AttemptKind, Counts, Outcome};

use crate::runtime::counting::{CountError, Counters, Window};

/// One attempt as protection sees it.
#[derive(Debug, Clone)]
pub struct Seen<'a> {
    pub realm_id: &'a str,
    pub kind: AttemptKind,
    pub outcome: Outcome,
    pub source: &'a str,
    /// The account named (username or e-mail as typed, or the account's id when known).
    pub account: &'a str,
    pub account_known: bool,
    /// The account signed in successfully from this source before.
    pub approved: bool,
}

/// The series counted about a source.
const SOURCE_SERIES: [&str; 6] = ["failures", "accounts", "unknown", "blocks", "recovery-accounts", "sign-ups"];

fn source_key(realm_id: &str, source: &str, series: &str) -> String {
    format!("{realm_id}:source:{source}:{series}")
}

fn account_key(realm_id: &str, account: &str, series: &str) -> String {
    format!("{realm_id}:account:{account}:{series}")
}

/// The series behind a measure on an account: failures from unapproved addresses (closing it to
/// strangers), refusals on its phones (pausing its pushes).
pub fn account_series(realm_id: &str, account: &str, hold: super::Hold) -> Vec<String> {
    let series: &[&str] = match hold {
        super::Hold::ClosedToUnknownAddresses => &["unapproved-failures", "unapproved-sources"],
        super::Hold::SignInPushesPaused => &["phone-refusals"],
        super::Hold::RecoverySilenced => &["recovery"],
        super::Hold::SourceBlocked | super::Hold::Reported => &[],
    };
    series.iter().map(|name| account_key(realm_id, account, name)).collect()
}

/// Every series counted about a source in the realm, to forget it whole.
pub fn source_series(realm_id: &str, source: &str) -> Vec<String> {
    SOURCE_SERIES.iter().map(|series| source_key(realm_id, source, series)).collect()
}

/// Records an attempt in the counters and reads the counts around it, this attempt included.
pub async fn observe(counters: &Counters, seen: &Seen<'_>, now: DateTime<Utc>) -> Result<Counts, CountError> {
    let Seen { realm_id, kind, outcome, source, account, account_known, approved } = *seen;
    let source_key = |series: &str| source_key(realm_id, source, series);
    let account_key = |series: &str| account_key(realm_id, account, series);
    let once = new_guid();
    match (kind, outcome) {
        (AttemptKind::Password, Outcome::Failed) => {
            counters.record(&source_key("failures"), &once, now).await?;
            counters.record(&source_key("accounts"), account, now).await?;
            if !account_known {
                counters.record(&source_key("unknown"), &once, now).await?;
            }
            if account_known && !approved {
                counters.record(&account_key("unapproved-failures"), &once, now).await?;
                counters.record(&account_key("unapproved-sources"), source, now).await?;
            }
        }
        (AttemptKind::Recovery, Outcome::Requested) => {
            counters.record(&account_key("recovery"), &once, now).await?;
            counters.record(&source_key("recovery-accounts"), account, now).await?;
        }
        (AttemptKind::PushAnswer, Outcome::RefusedOnPhone) => {
            counters.record(&account_key("phone-refusals"), &once, now).await?;
        }
        (AttemptKind::SignUp, Outcome::Requested) => {
            counters.record(&source_key("sign-ups"), &once, now).await?;
        }
        (AttemptKind::SecondFactor, Outcome::Failed) if !approved => {
            counters.record(&account_key("second-factor-failures"), &once, now).await?;
        }
        _ => {}
    }
    let count = |key: String, window: Window| async move {
        counters.count(&key, window, now).await.map(|n| u32::try_from(n).unwrap_or(u32::MAX))
    };
    Ok(Counts {
        source_failures: count(source_key("failures"), Window::TenMinutes).await?,
        source_accounts: count(source_key("accounts"), Window::TenMinutes).await?,
        source_unknown_account_failures: count(source_key("unknown"), Window::TenMinutes).await?,
        source_earlier_blocks: count(source_key("blocks"), Window::Day).await?,
        account_unapproved_failures: count(account_key("unapproved-failures"), Window::FifteenMinutes).await?,
        account_unapproved_sources: count(account_key("unapproved-sources"), Window::FifteenMinutes).await?,
        account_phone_refusals: count(account_key("phone-refusals"), Window::ThirtyMinutes).await?,
        account_recovery_requests: count(account_key("recovery"), Window::ThirtyMinutes).await?,
        source_recovery_accounts: count(source_key("recovery-accounts"), Window::ThirtyMinutes).await?,
        source_sign_ups: count(source_key("sign-ups"), Window::Hour).await?,
        account_second_factor_failures: count(account_key("second-factor-failures"), Window::FifteenMinutes).await?,
    })
}

/// Remembers that the source was blocked, so that its next block within a day lasts longer.
pub async fn record_block(
    counters: &Counters,
    realm_id: &str,
    source: &str,
    now: DateTime<Utc>,
) -> Result<(), CountError> {
    counters.record(&source_key(realm_id, source, "blocks"), &new_guid(), now).await
}

//! How the figures are read: what the measures say about the sources and the accounts, which
//! reading that makes, how sure it is, and what to tighten.

use alloc::vec::Vec;

use crate::words;
use crate::{Change, Classification, Incident, IncidentKind, Language, MeasureKind, Moment, Reading, Recommendation};

/// What the measures say, summed over those that carry a source's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Figures {
    pub blocks: u32,
    pub locks: u32,
    pub pauses: u32,
    pub exposures: u32,
    pub lifted: u32,
    /// Measures taken on an attempt whose source counted failures.
    pub sourced: u32,
    /// Of those, the ones from a datacenter network or a Tor exit.
    pub hostile: u32,
    pub failures: u32,
    pub unknown_failures: u32,
    /// Accounts the sources failed against, summed over the measures.
    pub accounts_tried: u32,
    /// The most accounts one source failed against.
    pub widest: u32,
    /// Blocks of a source that had been blocked before within the day: it came back.
    pub returns: u32,
    /// The longest measure that lapses, in minutes.
    pub longest_minutes: u32,
}

impl Figures {
    pub fn of(incident: &Incident) -> Self {
        let mut figures = Self::default();
        for measure in &incident.measures {
            match measure.kind {
                MeasureKind::SourceBlocked => figures.blocks += 1,
                MeasureKind::ClosedToUnknownAddresses => figures.locks += 1,
                MeasureKind::SignInPushesPaused => figures.pauses += 1,
                MeasureKind::PasswordExposed => figures.exposures += 1,
            }
            figures.lifted += u32::from(measure.lifted);
            if let Some(seconds) = measure.seconds {
                figures.longest_minutes = figures.longest_minutes.max(seconds / 60);
            }
            if measure.source_failures == 0 {
                continue;
            }
            figures.sourced += 1;
            figures.hostile += u32::from(measure.datacenter || measure.tor);
            figures.failures += measure.source_failures;
            figures.unknown_failures += measure.unknown_account_failures.min(measure.source_failures);
            figures.accounts_tried += measure.source_accounts;
            figures.widest = figures.widest.max(measure.source_accounts);
            figures.returns += u32::from(measure.kind == MeasureKind::SourceBlocked && measure.earlier_blocks > 0);
        }
        figures
    }

    /// The share of failures naming accounts the realm never had, in percent.
    pub fn unknown_percent(&self) -> u32 {
        percent(self.unknown_failures, self.failures)
    }

    /// The share of sourced measures from datacenter or Tor networks, in percent.
    pub fn hostile_percent(&self) -> u32 {
        percent(self.hostile, self.sourced)
    }

    /// Failures per account tried: people retry their own password; a list tries each name once.
    pub fn tries_per_account(&self) -> u32 {
        self.failures / self.accounts_tried.max(1)
    }
}

fn percent(part: u32, whole: u32) -> u32 {
    part.saturating_mul(100).checked_div(whole).unwrap_or(0)
}

/// The reading of `incident`, written in `language`.
pub fn read(incident: &Incident, language: Language) -> Reading {
    let figures = Figures::of(incident);
    let (classification, confidence) = classify(incident, &figures);
    let recommendations = recommend(incident, classification)
        .into_iter()
        .take(3)
        .map(|(change, value)| Recommendation {
            change,
            value,
            why: words::why(language, change, value, classification),
        })
        .collect();
    Reading {
        classification,
        confidence,
        what_happened: words::what_happened(language, incident, &figures, classification),
        what_was_done: words::what_was_done(language, incident, &figures),
        exposed_passwords: words::exposed_passwords(language, incident),
        recommendations,
        report: (incident.moment == Moment::Closed)
            .then(|| words::report(language, incident, &figures, classification)),
    }
}

/// The reading the figures make, and how sure of it, in percent.
pub fn classify(incident: &Incident, figures: &Figures) -> (Classification, u8) {
    let hostile = figures.hostile > 0;
    match incident.kind {
        IncidentKind::PushBombing => return (Classification::PushBombing, 90),
        IncidentKind::RecoveryAbuse => return (Classification::RecoveryAbuse, 85),
        IncidentKind::SignUpAbuse => return (Classification::SignUpAbuse, 85),
        // Each wrong code came after the right password: nothing else reads so.
        IncidentKind::SecondFactorGuessing => return (Classification::SecondFactorGuessing, 95),
        _ => {}
    }
    if incident.measures.is_empty() {
        return (Classification::Inconclusive, 30);
    }
    let attack = match incident.kind {
        IncidentKind::CredentialStuffing => Classification::CredentialStuffing,
        IncidentKind::PasswordSpraying => Classification::PasswordSpraying,
        _ => Classification::BruteForce,
    };
    // A correct password arrived from a list being worked through: an attack, whatever else.
    if incident.exposed_passwords > 0 {
        return (if attack == Classification::BruteForce { Classification::PasswordSpraying } else { attack }, 95);
    }
    if figures.unknown_percent() >= 30 {
        return (Classification::CredentialStuffing, if figures.hostile_percent() >= 50 { 92 } else { 82 });
    }
    // One ordinary address failing against one account, again and again: a client or script
    // holding a password that was changed, not someone guessing.
    if incident.distinct_sources <= 1 && incident.distinct_accounts <= 1 && figures.widest <= 1 && !hostile {
        return (Classification::Misconfiguration, if figures.returns > 0 { 78 } else { 60 });
    }
    // Many ordinary addresses, on real accounts, each retrying its own: people, not a list.
    let many = incident.distinct_sources + incident.distinct_accounts >= 5;
    if many && !hostile && figures.unknown_failures == 0 && figures.tries_per_account() >= 3 {
        return (Classification::LegitimateSurge, if figures.widest <= 2 { 72 } else { 60 });
    }
    match attack {
        Classification::PasswordSpraying if figures.widest >= 3 => {
            (attack, if figures.hostile_percent() >= 50 { 88 } else { 76 })
        }
        Classification::BruteForce if incident.distinct_accounts <= 2 => (attack, if hostile { 85 } else { 72 }),
        _ => (attack, 55),
    }
}

/// What to tighten after a reading: changes that would make the realm stricter, most useful first.
/// A surge of real people, a misconfiguration or an unclear reading tightens nothing: it would
/// lock out the realm's own users.
pub fn recommend(incident: &Incident, classification: Classification) -> Vec<(Change, u32)> {
    let s = &incident.settings;
    let mut changes = Vec::new();
    let breached = |changes: &mut Vec<(Change, u32)>| {
        if !s.block_breached_passwords {
            changes.push((Change::RefuseBreachedPasswords, 1));
        }
    };
    match classification {
        Classification::CredentialStuffing | Classification::PasswordSpraying => {
            breached(&mut changes);
            if s.minimum_password_length < 12 {
                changes.push((Change::RequireLongerPasswords, 12));
            }
            if s.max_failed_attempts > 5 {
                changes.push((Change::LockOutSooner, 5));
            }
        }
        Classification::BruteForce => {
            if !s.lockout_enabled {
                changes.push((Change::LockOutNewAccounts, 1));
            }
            if s.max_failed_attempts > 3 {
                changes.push((Change::LockOutSooner, if s.max_failed_attempts > 5 { 5 } else { 3 }));
            }
            if s.lockout_duration_minutes < 60 {
                changes.push((Change::LockOutLonger, 60));
            }
            breached(&mut changes);
        }
        // Whoever refuses on the phone, or guesses the second factor, holds the password already.
        Classification::PushBombing | Classification::SecondFactorGuessing => {
            breached(&mut changes);
            if s.minimum_password_length < 12 {
                changes.push((Change::RequireLongerPasswords, 12));
            }
        }
        Classification::RecoveryAbuse
        | Classification::SignUpAbuse
        | Classification::LegitimateSurge
        | Classification::Misconfiguration
        | Classification::Inconclusive => {}
    }
    changes.truncate(3);
    changes
}

#[cfg(test)]
mod tests;

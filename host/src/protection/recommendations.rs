//! The changes an incident's reading may recommend, each of which can only make the realm stricter:
//! refuse breached passwords, lock out sooner (never below three attempts), lock out for longer (up
//! to a day), lock out new accounts too, require longer passwords (up to 64 characters). A change
//! is applied only while it still tightens the realm, and reverted only while the realm still holds
//! the value it set: a later change by someone else is left alone.

use serde_json::{Value, json};

use crate::store::realms::RealmSettings;

/// The fewest failed attempts a recommendation may lock out after.
pub const MIN_FAILED_ATTEMPTS: i64 = 3;
/// The longest lockout a recommendation may set, in minutes.
pub const MAX_LOCKOUT_MINUTES: i64 = 1_440;
/// The longest minimum password length a recommendation may set.
pub const MAX_MINIMUM_LENGTH: i64 = 64;

/// A recommended change, with the value it sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    RefuseBreachedPasswords,
    LockOutSooner { max_failed_attempts: i64 },
    LockOutLonger { lockout_duration_minutes: i64 },
    LockOutNewAccounts,
    RequireLongerPasswords { minimum_password_length: i64 },
}

/// Why a change cannot be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("the value is beyond what a recommendation may set")]
    OutOfBounds,
    #[error("the realm is already at least as strict")]
    NotStricter,
    #[error("the realm no longer holds the value the change set")]
    ChangedSince,
}

impl Change {
    /// The recommendation's name, as readings and the admin API give it.
    pub fn name(self) -> &'static str {
        match self {
            Self::RefuseBreachedPasswords => "RefuseBreachedPasswords",
            Self::LockOutSooner { .. } => "LockOutSooner",
            Self::LockOutLonger { .. } => "LockOutLonger",
            Self::LockOutNewAccounts => "LockOutNewAccounts",
            Self::RequireLongerPasswords { .. } => "RequireLongerPasswords",
        }
    }

    /// The change of `name` setting `value` (ignored by the changes that turn a setting on).
    pub fn named(name: &str, value: i64) -> Option<Self> {
        Some(match name {
            "RefuseBreachedPasswords" => Self::RefuseBreachedPasswords,
            "LockOutSooner" => Self::LockOutSooner { max_failed_attempts: value },
            "LockOutLonger" => Self::LockOutLonger { lockout_duration_minutes: value },
            "LockOutNewAccounts" => Self::LockOutNewAccounts,
            "RequireLongerPasswords" => Self::RequireLongerPasswords { minimum_password_length: value },
            _ => return None,
        })
    }

    /// The names of the five changes.
    pub const NAMES: [&'static str; 5] =
        ["RefuseBreachedPasswords", "LockOutSooner", "LockOutLonger", "LockOutNewAccounts", "RequireLongerPasswords"];

    /// The realm setting it changes, by its admin API name.
    pub fn setting(self) -> &'static str {
        match self {
            Self::RefuseBreachedPasswords => "blockBreachedPasswords",
            Self::LockOutSooner { .. } => "maxFailedAttempts",
            Self::LockOutLonger { .. } => "lockoutDurationMinutes",
            Self::LockOutNewAccounts => "lockoutEnabled",
            Self::RequireLongerPasswords { .. } => "minimumPasswordLength",
        }
    }

    /// The value it sets.
    pub fn value(self) -> Value {
        match self {
            Self::RefuseBreachedPasswords | Self::LockOutNewAccounts => json!(true),
            Self::LockOutSooner { max_failed_attempts } => json!(max_failed_attempts),
            Self::LockOutLonger { lockout_duration_minutes } => json!(lockout_duration_minutes),
            Self::RequireLongerPasswords { minimum_password_length } => json!(minimum_password_length),
        }
    }

    /// The realm's current value of the setting it changes.
    pub fn current(self, settings: &RealmSettings) -> Value {
        match self {
            Self::RefuseBreachedPasswords => json!(settings.block_breached_passwords),
            Self::LockOutSooner { .. } => json!(settings.max_failed_attempts),
            Self::LockOutLonger { .. } => json!(settings.lockout_duration_minutes),
            Self::LockOutNewAccounts => json!(settings.lockout_enabled),
            Self::RequireLongerPasswords { .. } => json!(settings.minimum_password_length),
        }
    }

    /// Whether the value is one a recommendation may set.
    pub fn within_bounds(self) -> bool {
        match self {
            Self::RefuseBreachedPasswords | Self::LockOutNewAccounts => true,
            Self::LockOutSooner { max_failed_attempts } => max_failed_attempts >= MIN_FAILED_ATTEMPTS,
            Self::LockOutLonger { lockout_duration_minutes } => {
                (1..=MAX_LOCKOUT_MINUTES).contains(&lockout_duration_minutes)
            }
            Self::RequireLongerPasswords { minimum_password_length } => {
                (1..=MAX_MINIMUM_LENGTH).contains(&minimum_password_length)
            }
        }
    }

    /// Whether it would make the realm stricter than it is.
    pub fn tightens(self, settings: &RealmSettings) -> bool {
        match self {
            Self::RefuseBreachedPasswords => !settings.block_breached_passwords,
            Self::LockOutSooner { max_failed_attempts } => max_failed_attempts < settings.max_failed_attempts,
            Self::LockOutLonger { lockout_duration_minutes } => {
                lockout_duration_minutes > settings.lockout_duration_minutes
            }
            Self::LockOutNewAccounts => !settings.lockout_enabled,
            Self::RequireLongerPasswords { minimum_password_length } => {
                minimum_password_length > settings.minimum_password_length
            }
        }
    }

    /// The settings with the change made, and the value it replaced (what a revert restores).
    pub fn apply(self, settings: &RealmSettings) -> Result<(RealmSettings, Value), Refused> {
        if !self.within_bounds() {
            return Err(Refused::OutOfBounds);
        }
        if !self.tightens(settings) {
            return Err(Refused::NotStricter);
        }
        let previous = self.current(settings);
        Ok((self.set(settings, &self.value()), previous))
    }

    /// The settings with `previous` restored, while the realm still holds the value the change set.
    pub fn revert(self, settings: &RealmSettings, previous: &Value) -> Result<RealmSettings, Refused> {
        if self.current(settings) != self.value() {
            return Err(Refused::ChangedSince);
        }
        Ok(self.set(settings, previous))
    }

    fn set(self, settings: &RealmSettings, value: &Value) -> RealmSettings {
        let mut changed = settings.clone();
        let (flag, number) = (value.as_bool().unwrap_or(false), value.as_i64().unwrap_or_default());
        match self {
            Self::RefuseBreachedPasswords => changed.block_breached_passwords = flag,
            Self::LockOutSooner { .. } => changed.max_failed_attempts = number,
            Self::LockOutLonger { .. } => changed.lockout_duration_minutes = number,
            Self::LockOutNewAccounts => changed.lockout_enabled = flag,
            Self::RequireLongerPasswords { .. } => changed.minimum_password_length = number,
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The defaults (5 attempts, 15 minutes, length 8, breached allowed) with the lockout off.
    fn settings() -> RealmSettings {
        RealmSettings { lockout_enabled: false, ..RealmSettings::default() }
    }

    #[test]
    fn each_change_tightens_within_its_limit_or_is_refused() {
        let realm = settings();
        let sooner = Change::LockOutSooner { max_failed_attempts: 3 };
        let (stricter, previous) = sooner.apply(&realm).unwrap();
        assert_eq!((stricter.max_failed_attempts, previous), (3, json!(5)));
        assert_eq!(Change::LockOutSooner { max_failed_attempts: 2 }.apply(&realm), Err(Refused::OutOfBounds));
        assert_eq!(Change::LockOutSooner { max_failed_attempts: 6 }.apply(&realm), Err(Refused::NotStricter));
        assert_eq!(Change::LockOutLonger { lockout_duration_minutes: 1_441 }.apply(&realm), Err(Refused::OutOfBounds));
        let longer = Change::LockOutLonger { lockout_duration_minutes: 60 }.apply(&realm).unwrap().0;
        assert_eq!(longer.lockout_duration_minutes, 60);
        let length = Change::RequireLongerPasswords { minimum_password_length: 65 };
        assert_eq!(length.apply(&realm), Err(Refused::OutOfBounds));
        let length = Change::RequireLongerPasswords { minimum_password_length: 12 }.apply(&realm).unwrap().0;
        assert_eq!(length.minimum_password_length, 12);
        let breached = Change::RefuseBreachedPasswords.apply(&realm).unwrap().0;
        assert!(breached.block_breached_passwords);
        assert_eq!(Change::RefuseBreachedPasswords.apply(&breached), Err(Refused::NotStricter), "already on");
        assert!(Change::LockOutNewAccounts.apply(&realm).unwrap().0.lockout_enabled);
    }

    #[test]
    fn a_revert_restores_the_previous_value_only_while_the_realm_holds_the_applied_one() {
        let realm = settings();
        let change = Change::LockOutLonger { lockout_duration_minutes: 120 };
        let (applied, previous) = change.apply(&realm).unwrap();
        assert_eq!(change.revert(&applied, &previous).unwrap().lockout_duration_minutes, 15);
        let mut changed_since = applied.clone();
        changed_since.lockout_duration_minutes = 90;
        assert_eq!(change.revert(&changed_since, &previous), Err(Refused::ChangedSince), "someone else's change stays");
        let (on, previous) = Change::LockOutNewAccounts.apply(&realm).unwrap();
        assert!(!Change::LockOutNewAccounts.revert(&on, &previous).unwrap().lockout_enabled);
    }
}

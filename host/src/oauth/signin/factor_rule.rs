//! When a person's sign-in asks for a second factor: the stricter of the realm's rule and the
//! client's ([`SecondFactor`]), applied to what the person enrolled. After the right password, a
//! browser's sign-in either opens, or waits for the person's phone, or asks them to choose one of
//! their factors, or has them enrol one first; the password grant, which has no page to ask on, is
//! refused where a factor would be asked (unless a phone confirms it, where a phone is enough).
//! Single sign-on answers a client only from a session at least as strong as its rule asks.

use super::assurance::Level;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::authenticators::{self as authenticator_store, AuthenticatorKind};
use crate::store::clients::Client;
use crate::store::push as push_store;
use crate::store::realms::{Realm, SecondFactor};

/// The rule of a sign-in by `client`: its realm's, or the client's where it asks more.
pub fn rule(realm: &Realm, client: &Client) -> SecondFactor {
    realm.settings.second_factor.strictest(client.second_factor)
}

/// The least level a session must reach to answer a client under `rule`: more than one factor
/// where every sign-in asks one, a passkey where the rule is phishing-resistant.
pub fn floor(rule: SecondFactor) -> Option<Level> {
    match rule {
        SecondFactor::Never | SecondFactor::WhenEnrolled => None,
        SecondFactor::Always => Some(Level::MultiFactor),
        SecondFactor::PhishingResistant => Some(Level::PhishingResistant),
    }
}

/// The second factors a person enrolled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Enrolled {
    /// An authenticator app (its recovery codes go with it).
    pub app: bool,
    pub passkey: bool,
    /// A phone that confirms sign-ins.
    pub phone: bool,
}

impl Enrolled {
    /// What the person enrolled, as far as `rule` needs to know: nothing is read where it asks for
    /// no factor, and phones are not read where they are not enough.
    pub async fn of(context: &Context, user_id: &str, rule: SecondFactor) -> Result<Self, Error> {
        if rule == SecondFactor::Never {
            return Ok(Self::default());
        }
        let pool = context.store.pool();
        let all = authenticator_store::of_user(pool, user_id).await?;
        let has = |kind| all.iter().any(|a| a.kind == kind);
        let phone = match rule {
            SecondFactor::PhishingResistant => false,
            _ => !push_store::devices_of(pool, user_id).await?.is_empty(),
        };
        Ok(Self { app: has(AuthenticatorKind::Totp), passkey: has(AuthenticatorKind::Passkey), phone })
    }
}

/// What follows the right password of a browser's sign-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The browser is signed in with the password alone.
    SignIn,
    /// The person's phone, their one second factor, confirms the sign-in.
    Phone,
    /// The second step: the person uses one of these factors.
    Choose(Enrolled),
    /// The person enrols a factor before the sign-in ends: an app or a passkey, or a passkey only.
    Enrol { passkey_only: bool },
}

/// What follows the right password under `rule`, for a person who enrolled `enrolled`.
pub fn next(rule: SecondFactor, enrolled: Enrolled) -> Next {
    match rule {
        SecondFactor::Never => Next::SignIn,
        SecondFactor::PhishingResistant if enrolled.passkey => {
            Next::Choose(Enrolled { passkey: true, ..Enrolled::default() })
        }
        SecondFactor::PhishingResistant => Next::Enrol { passkey_only: true },
        _ if enrolled.app || enrolled.passkey => Next::Choose(enrolled),
        _ if enrolled.phone => Next::Phone,
        SecondFactor::Always => Next::Enrol { passkey_only: false },
        SecondFactor::WhenEnrolled => Next::SignIn,
    }
}

/// Whether the password grant must refuse a sign-in as needing a second factor: where a browser
/// would be asked for an app's code or a passkey, or made to enrol, and no phone confirms it. A
/// phone confirms only where it would be enough: never under a phishing-resistant rule.
pub fn refuses_grant(rule: SecondFactor, enrolled: Enrolled, phone_confirms: bool) -> bool {
    match next(rule, enrolled) {
        Next::SignIn | Next::Phone => false,
        Next::Choose(_) | Next::Enrol { .. } => rule == SecondFactor::PhishingResistant || !phone_confirms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: Enrolled = Enrolled { app: false, passkey: false, phone: false };
    const APP: Enrolled = Enrolled { app: true, passkey: false, phone: false };
    const PHONE: Enrolled = Enrolled { app: false, passkey: false, phone: true };
    const PASSKEY: Enrolled = Enrolled { app: false, passkey: true, phone: false };
    const ALL: Enrolled = Enrolled { app: true, passkey: true, phone: true };

    #[test]
    fn each_rule_asks_what_the_person_has_or_has_them_enrol() {
        use SecondFactor::*;
        assert_eq!(next(Never, ALL), Next::SignIn);
        assert_eq!(next(WhenEnrolled, NONE), Next::SignIn);
        assert_eq!(next(WhenEnrolled, PHONE), Next::Phone);
        assert_eq!(next(WhenEnrolled, ALL), Next::Choose(ALL));
        assert_eq!(next(WhenEnrolled, PASSKEY), Next::Choose(PASSKEY));
        assert_eq!(next(Always, NONE), Next::Enrol { passkey_only: false });
        assert_eq!(next(Always, PHONE), Next::Phone);
        assert_eq!(next(Always, APP), Next::Choose(APP));
        assert_eq!(next(PhishingResistant, APP), Next::Enrol { passkey_only: true });
        assert_eq!(next(PhishingResistant, ALL), Next::Choose(PASSKEY));
    }

    #[test]
    fn the_password_grant_is_refused_where_a_page_would_ask_and_no_phone_may_answer() {
        use SecondFactor::*;
        assert!(!refuses_grant(WhenEnrolled, NONE, false));
        assert!(!refuses_grant(WhenEnrolled, PHONE, false));
        assert!(refuses_grant(WhenEnrolled, APP, false));
        assert!(!refuses_grant(WhenEnrolled, APP, true));
        assert!(refuses_grant(Always, NONE, false));
        assert!(!refuses_grant(Always, NONE, true));
        assert!(refuses_grant(PhishingResistant, ALL, true));
        assert!(!refuses_grant(Never, ALL, false));
    }

    #[test]
    fn a_client_may_ask_more_than_its_realm_never_less() {
        use SecondFactor::*;
        assert_eq!(WhenEnrolled.strictest(Some(Always)), Always);
        assert_eq!(Always.strictest(Some(Never)), Always);
        assert_eq!(PhishingResistant.strictest(None), PhishingResistant);
        assert_eq!(floor(Always), Some(Level::MultiFactor));
        assert_eq!(floor(WhenEnrolled), None);
    }
}

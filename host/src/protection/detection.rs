//! What the attack detector is given about one attempt and what it decides, as protection speaks
//! of them. The detector component (`crate::protection::detector`) converts these to and from its
//! interface's types; nothing else sees those.

/// What was attempted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptKind {
    /// A password sign-in.
    Password,
    /// A password recovery request.
    Recovery,
    /// The answer of a phone to a sign-in request pushed to it.
    PushAnswer,
    /// A request for a new account (self sign-up).
    SignUp,
    /// A second factor's code typed after the right password.
    SecondFactor,
}

/// How it went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The password was right (or the request was approved on the phone).
    Succeeded,
    /// The password was wrong, or the account does not exist.
    Failed,
    /// A recovery or an account was requested.
    Requested,
    /// The sign-in request was refused on the phone.
    RefusedOnPhone,
}

/// Facts about the source address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    /// The account signed in successfully from this address before.
    pub approved_for_account: bool,
    pub datacenter: bool,
    /// The address is a Tor exit.
    pub tor: bool,
    /// Five or more accounts of the realm approved this address.
    pub shared_network: bool,
}

/// What the counters held when the attempt arrived, this attempt included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Failures from the source within 10 minutes.
    pub source_failures: u32,
    /// Different accounts the source failed against within 10 minutes.
    pub source_accounts: u32,
    /// Of those failures, the ones naming accounts the realm never had.
    pub source_unknown_account_failures: u32,
    /// Blocks of the source within the last 24 hours, before this attempt.
    pub source_earlier_blocks: u32,
    /// Failures against the account within 15 minutes from addresses it was never approved at.
    pub account_unapproved_failures: u32,
    /// Different addresses among those failures.
    pub account_unapproved_sources: u32,
    /// Sign-in requests refused on the account's phones within 30 minutes.
    pub account_phone_refusals: u32,
    /// Recovery requests for the account within 30 minutes.
    pub account_recovery_requests: u32,
    /// Different accounts whose recovery the source asked for within 30 minutes.
    pub source_recovery_accounts: u32,
    /// Sign-ups asked from the source within an hour.
    pub source_sign_ups: u32,
    /// Wrong second-factor codes for the account within 15 minutes from addresses it was never
    /// approved at.
    pub account_second_factor_failures: u32,
}

/// One attempt, with what is known around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempt {
    pub kind: AttemptKind,
    pub outcome: Outcome,
    /// The account named exists in the realm.
    pub account_known: bool,
    pub source: Source,
    pub counts: Counts,
}

/// A measure the detector can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeasureKind {
    /// Every password attempt and recovery request from the address is refused.
    SourceBlocked,
    /// The account refuses addresses it was never approved at.
    ClosedToUnknownAddresses,
    /// No sign-in request reaches the account's phones.
    SignInPushesPaused,
    /// Refused as if wrong; a password change is required; never lapses.
    PasswordExposed,
    /// Recovery requests for the account get the usual answer and send nothing.
    RecoverySilenced,
}

impl MeasureKind {
    /// Its name in the metrics.
    pub fn metric_name(self) -> &'static str {
        match self {
            Self::SourceBlocked => "source_blocked",
            Self::ClosedToUnknownAddresses => "closed_to_unknown_addresses",
            Self::SignInPushesPaused => "sign_in_pushes_paused",
            Self::PasswordExposed => "password_exposed",
            Self::RecoverySilenced => "recovery_silenced",
        }
    }
}

impl Classification {
    /// Its name in the metrics.
    pub fn metric_name(self) -> &'static str {
        match self {
            Self::CredentialStuffing => "credential_stuffing",
            Self::PasswordSpraying => "password_spraying",
            Self::BruteForce => "brute_force",
            Self::PushBombing => "push_bombing",
            Self::RecoveryAbuse => "recovery_abuse",
            Self::SignUpAbuse => "sign_up_abuse",
            Self::SecondFactorGuessing => "second_factor_guessing",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measure {
    pub kind: MeasureKind,
    /// How long it is in force; `None` when it never lapses.
    pub seconds: Option<u32>,
}

/// The kind of attack a detection belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classification {
    CredentialStuffing,
    PasswordSpraying,
    BruteForce,
    PushBombing,
    RecoveryAbuse,
    SignUpAbuse,
    SecondFactorGuessing,
}

/// The severity of the incident a detection belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

/// What to do about an attempt; no measures when it is ordinary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    pub measures: Vec<Measure>,
    pub classification: Option<Classification>,
    pub severity: Option<Severity>,
    /// Why, in words for people.
    pub reasons: Vec<String>,
}

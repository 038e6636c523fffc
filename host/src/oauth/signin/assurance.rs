//! How strong a sign-in was: the authentication context class (`acr`) a session's methods (`amr`)
//! reach, and what an authorization request asks for (`acr_values`, or the `claims` request for an
//! essential `acr`, OIDC Core §5.5.1.1).
//!
//! The levels, weakest first:
//!
//! | `acr`  | Reached by |
//! |--------|------------|
//! | `1`    | any sign-in: a password, an upstream provider |
//! | `2`    | more than one factor: a password with an app's code, a recovery code or a phone |
//! | `phr`  | a phishing-resistant authenticator: a passkey |
//! | `phrh` | a phishing-resistant authenticator bound to its hardware: a passkey that does not sync |
//!
//! `phr` and `phrh` are the values of OpenID Connect's EAP ACR Values; each level meets every level
//! below it. A request names the levels it accepts; the weakest of those this service knows is the
//! least the sign-in must reach.

/// A level of assurance, ordered weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    OneFactor,
    MultiFactor,
    PhishingResistant,
    PhishingResistantHardware,
}

impl Level {
    /// Every level, weakest first: what discovery lists as `acr_values_supported`.
    pub const ALL: [Level; 4] =
        [Self::OneFactor, Self::MultiFactor, Self::PhishingResistant, Self::PhishingResistantHardware];

    /// Each level by its `acr`, as the admin API reads them.
    pub const NAMES: [(&'static str, Level); 4] = [
        ("1", Self::OneFactor),
        ("2", Self::MultiFactor),
        ("phr", Self::PhishingResistant),
        ("phrh", Self::PhishingResistantHardware),
    ];

    /// Its rank, 1 for the weakest: what the delegation policies compare.
    pub fn rank(self) -> i64 {
        match self {
            Self::OneFactor => 1,
            Self::MultiFactor => 2,
            Self::PhishingResistant => 3,
            Self::PhishingResistantHardware => 4,
        }
    }

    /// Its `acr` value.
    pub fn acr(self) -> &'static str {
        match self {
            Self::OneFactor => "1",
            Self::MultiFactor => "2",
            Self::PhishingResistant => "phr",
            Self::PhishingResistantHardware => "phrh",
        }
    }

    /// The level of an `acr` value this service knows.
    pub fn of_acr(acr: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|level| level.acr() == acr)
    }

    /// The level a sign-in by `methods` (its `amr`) reached.
    pub fn of_methods<S: AsRef<str>>(methods: &[S]) -> Self {
        let has = |name: &str| methods.iter().any(|m| m.as_ref() == name);
        if has("hwk") {
            Self::PhishingResistantHardware
        } else if has("swk") {
            Self::PhishingResistant
        } else if has("mfa") || (has("pwd") && (has("otp") || has("push"))) {
            Self::MultiFactor
        } else {
            Self::OneFactor
        }
    }
}

/// The least level a request asks for: the weakest of the `acr` values it names that this service
/// knows (space-separated, as `acr_values` and as the values of an essential `acr` claim). `None`
/// when it names none this service knows, or none at all.
pub fn least_asked<'a>(values: impl IntoIterator<Item = &'a str>) -> Option<Level> {
    values.into_iter().filter_map(Level::of_acr).min()
}

/// The `acr` values an essential `acr` claim of the ID token asks for in a `claims` request
/// (`{"id_token": {"acr": {"essential": true, "values": [...]}}}`, or `"value"`). `Err` when the
/// request is not JSON; an `acr` that is not essential asks for nothing.
pub fn essential_in_claims(claims: &str) -> Result<Vec<String>, serde_json::Error> {
    let request: serde_json::Value = serde_json::from_str(claims)?;
    let acr = &request["id_token"]["acr"];
    if acr["essential"] != true {
        return Ok(Vec::new());
    }
    let mut values: Vec<String> =
        acr["values"].as_array().into_iter().flatten().filter_map(|value| value.as_str().map(str::to_owned)).collect();
    values.extend(acr["value"].as_str().map(str::to_owned));
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_methods_of_a_sign_in_give_its_level() {
        assert_eq!(Level::of_methods(&["pwd"]), Level::OneFactor);
        assert_eq!(Level::of_methods(&["federated"]), Level::OneFactor);
        assert_eq!(Level::of_methods(&["pwd", "otp"]), Level::MultiFactor);
        assert_eq!(Level::of_methods(&["pwd", "mfa"]), Level::MultiFactor);
        assert_eq!(Level::of_methods(&["pwd", "push"]), Level::MultiFactor);
        assert_eq!(Level::of_methods(&["swk", "mfa"]), Level::PhishingResistant);
        assert_eq!(Level::of_methods(&["hwk", "mfa"]), Level::PhishingResistantHardware);
        assert_eq!(Level::of_methods::<&str>(&[]), Level::OneFactor);
    }

    #[test]
    fn a_request_asks_for_the_weakest_level_it_names_that_is_known() {
        assert_eq!(least_asked("phrh phr".split(' ')), Some(Level::PhishingResistant));
        assert_eq!(least_asked("urn:other:gold 2".split(' ')), Some(Level::MultiFactor));
        assert_eq!(least_asked("urn:other:gold".split(' ')), None);
        assert!(Level::PhishingResistantHardware > Level::PhishingResistant && Level::MultiFactor > Level::OneFactor);
    }

    #[test]
    fn only_an_essential_acr_claim_asks_for_a_level() {
        let essential = r#"{"id_token":{"acr":{"essential":true,"values":["phrh","phr"]}}}"#;
        assert_eq!(essential_in_claims(essential).unwrap(), ["phrh", "phr"]);
        let one = r#"{"id_token":{"acr":{"essential":true,"value":"2"}}}"#;
        assert_eq!(essential_in_claims(one).unwrap(), ["2"]);
        assert!(essential_in_claims(r#"{"id_token":{"acr":{"values":["phr"]}}}"#).unwrap().is_empty());
        assert!(essential_in_claims("{").is_err());
    }
}

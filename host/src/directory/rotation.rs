//! Rotation of a secret value, shared by account secrets and client secrets: the optional request
//! body, the three modes, and the `rotation` object of the answer.
//!
//! - **Immediate**: the previous value is refused at once.
//! - **Overlap**: the previous value still authenticates until `previousValueValidUntil`.
//! - **Compromise**: the previous value is refused at once, and every token issued before
//!   `issuedTokensRevokedBefore` (the instant of the rotation) is inactive from then on.
//!
//! Only the value just replaced can overlap: a value replaced two rotations ago is refused at once,
//! whatever period it was given. A later rotation never moves `issuedTokensRevokedBefore` back.

use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::kernel::clock::iso;
use crate::kernel::validate::{Body, Rule, boolean, integer};
use crate::runtime::error::Error;

/// The longest period a previous value may keep authenticating, in minutes.
pub const MAX_PREVIOUS_VALUE_VALID_FOR_MINUTES: i64 = 1440;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum RotationMode {
    Immediate,
    Overlap,
    Compromise,
}

impl RotationMode {
    fn as_str(self) -> &'static str {
        match self {
            Self::Immediate => "Immediate",
            Self::Overlap => "Overlap",
            Self::Compromise => "Compromise",
        }
    }
}

/// What one rotation does to the previous value and the tokens issued with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rotation {
    pub mode: RotationMode,
    /// Epoch milliseconds until which the previous value still authenticates (Overlap only).
    pub previous_value_valid_until: Option<DateTime<Utc>>,
    /// Epoch milliseconds before which tokens issued with an earlier value are revoked
    /// (Compromise only).
    pub issued_tokens_revoked_before: Option<DateTime<Utc>>,
}

impl Rotation {
    /// Reads the optional body: `previousValueValidForMinutes` (0 to the maximum) and
    /// `revokeIssuedTokens`. A period above 0 cannot go with revoking the issued tokens.
    pub fn read(mut body: Body, now: DateTime<Utc>) -> Result<Self, Error> {
        let input = RotationInput::read(&mut body);
        let minutes = input.previous_value_valid_for_minutes.unwrap_or(0);
        let revoke = input.revoke_issued_tokens.unwrap_or(false);
        if revoke && minutes > 0 {
            body.refuse(
                "revokeIssuedTokens",
                Rule::Conflict,
                "revokeIssuedTokens cannot go with previousValueValidForMinutes above 0: a compromised value is \
                 refused at once",
            );
        }
        body.finish()?;
        Ok(if revoke {
            Self {
                mode: RotationMode::Compromise,
                previous_value_valid_until: None,
                issued_tokens_revoked_before: Some(now),
            }
        } else if minutes > 0 {
            Self {
                mode: RotationMode::Overlap,
                previous_value_valid_until: Some(now + TimeDelta::minutes(minutes)),
                issued_tokens_revoked_before: None,
            }
        } else {
            Self { mode: RotationMode::Immediate, previous_value_valid_until: None, issued_tokens_revoked_before: None }
        })
    }

    /// The keyed hash to keep as the previous value: the one replaced, for an Overlap only.
    pub fn previous_hash(&self, replaced: Option<&str>) -> Option<String> {
        (self.mode == RotationMode::Overlap).then(|| replaced.map(str::to_owned)).flatten()
    }

    /// The revocation instant to keep after this rotation: its own, or the one already in force.
    pub fn revoked_before(&self, current: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
        self.issued_tokens_revoked_before.or(current)
    }

    pub fn view(&self) -> RotationView {
        RotationView {
            mode: self.mode,
            previous_value_valid_until: self.previous_value_valid_until.map(iso),
            issued_tokens_revoked_before: self.issued_tokens_revoked_before.map(iso),
        }
    }

    /// The `details` of the change trail entry and the `admin_resource_updated` event.
    pub fn details(&self) -> Value {
        let view = self.view();
        json!({
            "mode": self.mode.as_str(),
            "previous_value_valid_until": view.previous_value_valid_until,
            "issued_tokens_revoked_before": view.issued_tokens_revoked_before,
        })
    }
}

/// The `rotation` object of a rotation's answer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RotationView {
    pub mode: RotationMode,
    /// Only for Overlap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_value_valid_until: Option<String>,
    /// Only for Compromise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issued_tokens_revoked_before: Option<String>,
}

/// The optional body of a rotation request.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct RotationInput {
    /// 0 to 1440; 0 or absent refuses the previous value at once.
    previous_value_valid_for_minutes: Option<i64>,
    /// Refuse the previous value at once and revoke every token issued with it.
    revoke_issued_tokens: Option<bool>,
}

impl RotationInput {
    fn read(body: &mut Body) -> Self {
        Self {
            previous_value_valid_for_minutes: body
                .optional("previousValueValidForMinutes", integer(0, MAX_PREVIOUS_VALUE_VALID_FOR_MINUTES)),
            revoke_issued_tokens: body.optional("revokeIssuedTokens", boolean),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_000_000).unwrap()
    }

    fn read(body: &str) -> Result<Rotation, Error> {
        Rotation::read(Body::parse(body.as_bytes()).expect("json"), now())
    }

    fn refused_fields(result: Result<Rotation, Error>) -> Vec<String> {
        match result {
            Err(Error::Validation(notes)) => notes.into_iter().map(|n| n.field).collect(),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn an_empty_body_and_a_zero_period_rotate_immediately() {
        for body in ["", "{}", r#"{"previousValueValidForMinutes":0}"#, r#"{"revokeIssuedTokens":false}"#] {
            let rotation = read(body).expect("valid");
            assert_eq!(rotation.mode, RotationMode::Immediate, "{body}");
            assert_eq!((rotation.previous_value_valid_until, rotation.issued_tokens_revoked_before), (None, None));
        }
    }

    #[test]
    fn a_period_overlaps_and_revoking_is_a_compromise() {
        let overlap = read(r#"{"previousValueValidForMinutes":30}"#).expect("valid");
        assert_eq!(overlap.mode, RotationMode::Overlap);
        assert_eq!(overlap.previous_value_valid_until, Some(now() + TimeDelta::minutes(30)));
        let compromise = read(r#"{"previousValueValidForMinutes":0,"revokeIssuedTokens":true}"#).expect("valid");
        assert_eq!(compromise.mode, RotationMode::Compromise);
        let earlier = now() - TimeDelta::days(1);
        assert_eq!(compromise.issued_tokens_revoked_before, Some(now()));
        assert_eq!(compromise.revoked_before(Some(earlier)), Some(now()));
        assert_eq!(overlap.revoked_before(Some(earlier)), Some(earlier));
    }

    #[test]
    fn a_period_with_revocation_or_out_of_range_names_its_field() {
        assert_eq!(
            refused_fields(read(r#"{"previousValueValidForMinutes":10,"revokeIssuedTokens":true}"#)),
            ["revokeIssuedTokens"]
        );
        for period in ["-1", "1441", "2.5", "\"10\""] {
            let body = format!(r#"{{"previousValueValidForMinutes":{period}}}"#);
            assert_eq!(refused_fields(read(&body)), ["previousValueValidForMinutes"], "{period}");
        }
        assert_eq!(refused_fields(read(r#"{"mode":"Overlap"}"#)), ["mode"]);
    }
}

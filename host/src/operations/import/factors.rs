//! The authenticator apps an import row brings for its person (`totp`): each a base32 secret with
//! the parameters the app uses, so that a person moved from another service keeps the codes their
//! app shows. Secrets are sealed as enrolled ones are, and never answered back.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::kernel::ids::{AuthenticatorId, RealmId, UserId};
use crate::kernel::totp::{Algorithm, MAX_APPS, Parameters, SECRET_SEAL, Totp};
use crate::kernel::validate::{Notification, Refusals, Rule};
use crate::runtime::context::Context;
use crate::store::authenticators::{Authenticator, AuthenticatorKind, MAX_NAME};

/// An app of a row: its secret with its parameters, and its name.
#[derive(Debug, Clone)]
pub struct Factor {
    totp: Totp,
    name: String,
}

impl Factor {
    /// The person's authenticator, its secret sealed like an enrolled app's. The same app
    /// imported twice for the person has one credential id, so it is kept once.
    pub fn authenticator(
        &self,
        context: &Context,
        realm: &RealmId,
        user: &UserId,
        now: DateTime<Utc>,
    ) -> Authenticator {
        Authenticator {
            id: AuthenticatorId::fresh(),
            realm_id: realm.clone(),
            user_id: user.clone(),
            kind: AuthenticatorKind::Totp,
            name: self.name.clone(),
            secret_sealed: Some(context.hasher.sealer(SECRET_SEAL).seal(self.totp.secret())),
            data: serde_json::to_string(&self.totp.parameters())
                .unwrap_or_else(|_| unreachable!("parameters serialise")),
            counter: None,
            credential_id: Some(context.hasher.hash(&format!("totp {user} {}", self.totp.base32()))),
            created_at: now,
            last_used_at: None,
        }
    }
}

/// Reads `totp`: a list of at most ten `{secret, algorithm?, digits?, period?, name?}`, where
/// `algorithm` is SHA1 (the default), SHA256 or SHA512 (`HmacSHA1` and the like read too),
/// `digits` 6 (the default) or 8, and `period` 15 to 300 seconds (30 by default).
pub fn read(path: &str, value: &Value) -> Result<Vec<Factor>, Refusals> {
    let refuse = |at: &str, rule: Rule, message: String| vec![Notification::new(at, rule, message)];
    let Value::Array(items) = value else { return Err(refuse(path, Rule::Type, format!("{path} must be a list"))) };
    if items.len() > MAX_APPS {
        return Err(refuse(path, Rule::Range, format!("{path} may hold at most {MAX_APPS} apps")));
    }
    let mut factors = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let at = format!("{path}[{index}]");
        let Value::Object(fields) = item else {
            return Err(refuse(&at, Rule::Type, format!("{at} must be an object")));
        };
        if let Some(unknown) =
            fields.keys().find(|k| !matches!(k.as_str(), "secret" | "algorithm" | "digits" | "period" | "name"))
        {
            return Err(refuse(&format!("{at}.{unknown}"), Rule::Unknown, format!("{at} has no field {unknown}")));
        }
        let Some(secret) = fields.get("secret").and_then(Value::as_str) else {
            return Err(refuse(&format!("{at}.secret"), Rule::Required, format!("{at}.secret is required (base32)")));
        };
        let algorithm = match fields.get("algorithm") {
            None => Algorithm::Sha1,
            Some(value) => value.as_str().and_then(Algorithm::parse).ok_or_else(|| {
                refuse(
                    &format!("{at}.algorithm"),
                    Rule::OneOf,
                    format!("{at}.algorithm must be SHA1, SHA256 or SHA512"),
                )
            })?,
        };
        let number = |name: &str, default: i64| match fields.get(name) {
            None => Ok(default),
            Some(value) => value.as_i64().ok_or_else(|| {
                refuse(&format!("{at}.{name}"), Rule::Type, format!("{at}.{name} must be a whole number"))
            }),
        };
        let (digits, period) = (number("digits", 6)?, number("period", 30)?);
        let parameters = Parameters::checked(algorithm, u32::try_from(digits).unwrap_or(0), period)
            .map_err(|why| refuse(&at, Rule::Range, format!("{at}: {why}")))?;
        let totp = Totp::from_base32(secret, parameters)
            .map_err(|why| refuse(&format!("{at}.secret"), Rule::Format, format!("{at}.secret: {why}")))?;
        let name = fields.get("name").and_then(Value::as_str).map(str::trim).filter(|n| !n.is_empty());
        let name = name.unwrap_or("Authenticator app");
        if name.chars().count() > MAX_NAME || name.chars().any(char::is_control) {
            return Err(refuse(
                &format!("{at}.name"),
                Rule::Format,
                format!("{at}.name must be at most 100 characters of text"),
            ));
        }
        factors.push(Factor { totp, name: name.to_owned() });
    }
    Ok(factors)
}

//! Warnings of API secrets about to expire: the account is told once when one of its secrets
//! (API keys, personal access tokens, account client secrets) has seven days left (a warning) and
//! once more when it has one (critical), as an operational notification posted to the
//! notification webhook like every other. An hourly job looks; a secret that is rotated keeps its
//! expiry, and one created with less than a week left is warned of at the day only.

use chrono::{DateTime, TimeDelta, Utc};

use crate::kernel::clock::iso;
use crate::operations::notifications::Raised;
use crate::store::notifications::{self as notification_store, Severity};
use crate::store::secrets::{self, Secret, SecretType};
use crate::store::{Error, Store};

/// The notification's `type`.
pub const NOTIFICATION_TYPE: &str = "secret_expiring";
/// How often the job looks.
pub const EVERY: TimeDelta = TimeDelta::hours(1);
/// The two warnings: how long before the expiry, and how loud.
const PERIODS: [(TimeDelta, Severity, &str); 2] =
    [(TimeDelta::days(1), Severity::Critical, "1 day"), (TimeDelta::days(7), Severity::Warning, "7 days")];

fn kind(secret: &Secret) -> &'static str {
    match secret.secret_type {
        SecretType::ApiKey => "API key",
        SecretType::PersonalAccessToken => "Personal access token",
        SecretType::ClientSecret => "Account client secret",
    }
}

/// Raises what is due at `now`; how many notifications.
pub async fn warn(store: &Store, now: DateTime<Utc>) -> Result<usize, Error> {
    let mut raised = 0;
    let expiring = secrets::expiring_between(store.pool(), now, now + TimeDelta::days(7)).await?;
    for secret in expiring {
        let Some(expires_at) = secret.expires_at else { continue };
        // The nearest period the secret is within: a secret with hours left is warned of at the day.
        let Some((_, severity, left)) = PERIODS.iter().find(|(before, ..)| expires_at - now <= *before) else {
            continue;
        };
        let mut tx = store.begin().await?;
        let id = secret.id.as_str();
        let ever = DateTime::UNIX_EPOCH;
        if notification_store::raised_before(&mut *tx, &secret.account_id, NOTIFICATION_TYPE, id, *severity, ever)
            .await?
        {
            continue;
        }
        let title = format!("{} {} expires in {left}", kind(&secret), secret.name);
        let description = format!(
            "The {} {} (…{}) stops working at {}. Rotate it (POST /secrets/{id}/rotate) or create another, and \
             put the new value where this one is used.",
            kind(&secret).to_lowercase(),
            secret.name,
            secret.value_last_four,
            iso(expires_at)
        );
        let notification = Raised {
            account_id: &secret.account_id,
            notification_type: NOTIFICATION_TYPE,
            severity: *severity,
            title,
            description,
            resource_id: Some(id),
            realm_id: None,
            webhook: true,
        };
        crate::operations::notifications::raise(&mut tx, notification, now).await?;
        tx.commit().await?;
        raised += 1;
    }
    Ok(raised)
}

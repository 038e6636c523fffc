//! What each account sets on the deployment that serves it: the weekly maintenance window it
//! expects, and the networks its admin API credentials may be used from.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::{Any, Executor, Row as _};

use super::Error;
use crate::kernel::ids::AccountId;

/// A weekly window in UTC, as its column stores it (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceWindow {
    /// `Monday` … `Sunday`.
    pub weekday: String,
    /// Minutes after midnight UTC when it starts.
    pub start_minute: u32,
    pub duration_minutes: u32,
}

/// An account's settings; the defaults (no window, every network) when it never set any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstanceSettings {
    pub maintenance_window: Option<MaintenanceWindow>,
    /// Addresses and CIDR networks, canonical; empty: anywhere.
    pub admin_networks: Vec<String>,
    /// When the account last changed them.
    pub updated_at: Option<DateTime<Utc>>,
}

pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &AccountId,
) -> Result<InstanceSettings, Error> {
    let row = sqlx::query(
        "SELECT maintenance_window, admin_networks, updated_at FROM account_instance_settings WHERE account_id = $1",
    )
    .bind(account_id)
    .fetch_optional(db)
    .await?;
    let Some(row) = row else { return Ok(InstanceSettings::default()) };
    let window: Option<String> = row.try_get("maintenance_window")?;
    let networks: String = row.try_get("admin_networks")?;
    let updated_at: i64 = row.try_get("updated_at")?;
    Ok(InstanceSettings {
        maintenance_window: window.and_then(|text| serde_json::from_str(&text).ok()),
        admin_networks: super::from_json_list(&networks),
        updated_at: DateTime::from_timestamp_millis(updated_at),
    })
}

/// Replaces the account's settings.
pub async fn save<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &AccountId,
    settings: &InstanceSettings,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let window = settings.maintenance_window.as_ref().and_then(|window| serde_json::to_string(window).ok());
    sqlx::query(
        "INSERT INTO account_instance_settings (account_id, maintenance_window, admin_networks, updated_at) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (account_id) DO UPDATE SET \
         maintenance_window = excluded.maintenance_window, admin_networks = excluded.admin_networks, \
         updated_at = excluded.updated_at",
    )
    .bind(account_id)
    .bind(window)
    .bind(super::to_json_list(&settings.admin_networks))
    .bind(super::millis(now))
    .execute(db)
    .await?;
    Ok(())
}

/// Empties the admin networks of `account` (of every account without one): the accounts whose
/// list was not empty.
pub async fn open_admin_networks<'c>(
    db: impl Executor<'c, Database = Any>,
    account: Option<&AccountId>,
    now: DateTime<Utc>,
) -> Result<Vec<AccountId>, Error> {
    let rows = sqlx::query(
        "UPDATE account_instance_settings SET admin_networks = '[]', updated_at = $1 \
         WHERE admin_networks <> '[]' AND ($2 IS NULL OR account_id = $2) RETURNING account_id",
    )
    .bind(super::millis(now))
    .bind(account.map(ToString::to_string))
    .fetch_all(db)
    .await?;
    rows.iter().map(|row| Ok(AccountId::known(row.try_get::<String, _>(0)?))).collect()
}

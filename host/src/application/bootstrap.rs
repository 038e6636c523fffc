//! First start on an empty database: the platform realm and client, an account, its Owner, an API
//! key holding every permission, and a one-time code for the Owner to choose a password (the link
//! to the page that takes it is printed with the key). Never again on later starts.

use anyhow::Context as _;

use crate::kernel::clock::Clock;
use crate::kernel::crypto::{SecretHasher, generate_secret, last_four};
use crate::kernel::ids::{AccountId, CredentialId, PLATFORM_REALM, RealmId, ResetId, UserId};
use crate::store::accounts::{self, Account, Person};
use crate::store::clients::{self, Client, ClientType, GrantType};
use crate::store::realms::{self, Realm, RealmSettings};
use crate::store::recovery::{self, Reset};
use crate::store::secrets::{self, Secret, SecretType};
use crate::store::{Status, Store};

/// What the first start prints: the key, how to try it, where it was written, and the Owner's
/// link to choose a password.
#[derive(Debug)]
pub struct Banner<'a> {
    pub first: &'a Bootstrapped,
    pub address: std::net::SocketAddr,
    pub key_file: Option<&'a std::path::Path>,
    pub owner_link: Option<&'a str>,
}

impl Banner<'_> {
    /// The banner as text for a person at a terminal, or, with the JSON log format, as one line
    /// shaped like the log's own (`timestamp`, `level`, `fields`, `target`) for a log pipeline.
    pub fn render(&self, format: crate::kernel::config::LogFormat, now: chrono::DateTime<chrono::Utc>) -> String {
        let key = &self.first.api_key;
        let try_it = format!("curl -s -H 'x-api-key: {key}' http://{}/api/v1/admin/realms", self.address);
        if format == crate::kernel::config::LogFormat::Json {
            let fields = serde_json::json!({
                "message": "bootstrapped an account with an Owner API key, shown once",
                "account_id": self.first.account_id,
                "api_key": key,
                "try": try_it,
                "key_file": self.key_file.map(|path| path.display().to_string()),
                "owner_link": self.owner_link,
                "owner_link_hours": OWNER_CODE_HOURS,
            });
            let line = serde_json::json!({
                "timestamp": now.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
                "level": "INFO",
                "fields": fields,
                "target": module_path!(),
            });
            return line.to_string();
        }
        let mut text = format!(
            "Castellan bootstrapped an account ({}) with an Owner API key.\n\
             This key is shown once; keep it safe:\n\n    {key}\n\nTry it:\n\n    {try_it}\n",
            self.first.account_id
        );
        if let Some(path) = self.key_file {
            text.push_str(&format!("\nThe key was also written to {} (mode 0600).\n", path.display()));
        }
        if let Some(link) = self.owner_link {
            text.push_str(&format!(
                "\nThe account's Owner (username `owner`) signs in to the console with a password, chosen once \
                 within {OWNER_CODE_HOURS} hours at:\n\n    {link}\n"
            ));
        }
        text
    }
}

/// What the first start created; the key is shown once.
#[derive(Debug, Clone)]
pub struct Bootstrapped {
    pub account_id: AccountId,
    pub owner_user_id: UserId,
    pub api_key_id: CredentialId,
    pub api_key: String,
    /// The Owner's one-time code to choose a password, good for [`OWNER_CODE_HOURS`].
    pub owner_code: String,
}

/// How long the Owner's first-start code works.
pub const OWNER_CODE_HOURS: i64 = 24;

/// Creates the first account when the database has none; `None` when it already has one (or
/// another host created it at the same moment).
pub async fn run_if_empty(
    store: &Store,
    hasher: &SecretHasher,
    clock: &dyn Clock,
) -> anyhow::Result<Option<Bootstrapped>> {
    let mut tx = store.begin().await?;
    if accounts::exists_any(&mut *tx).await? {
        return Ok(None);
    }
    let now = clock.now();
    let account = Account { id: AccountId::fresh(), name: "Default account".into(), created_at: now };
    accounts::insert(&mut *tx, &account).await?;
    let realm = Realm {
        id: RealmId::platform(),
        account_id: account.id.clone(),
        display_name: "Platform".into(),
        status: Status::Active,
        settings: RealmSettings::default(),
        created_at: now,
        updated_at: now,
    };
    if !realms::insert(&mut *tx, &realm).await? {
        // Another host is bootstrapping the same database.
        tx.rollback().await?;
        return Ok(None);
    }
    let mut platform_client = Client::new(PLATFORM_REALM, PLATFORM_REALM, ClientType::Confidential, now);
    platform_client.name = "Platform".into();
    platform_client.description = Some("The console and the admin API's token client".into());
    platform_client.grant_types = vec![GrantType::ClientCredentials];
    clients::insert(&mut *tx, &platform_client).await?;
    let owner = Person { id: UserId::fresh(), realm_id: RealmId::platform(), username: "owner".into(), email: None };
    accounts::insert_person(&mut *tx, &owner, now).await?;
    accounts::insert_member(&mut *tx, &account.id, &owner.id, &["Owner".to_owned()], now).await?;
    let api_key = generate_secret(secrets::API_KEY_PREFIX);
    let secret = Secret {
        id: CredentialId::fresh(),
        account_id: account.id.clone(),
        secret_type: SecretType::ApiKey,
        name: "Bootstrap key".into(),
        value_hash: hasher.hash(&api_key),
        value_last_four: last_four(&api_key),
        roles: vec!["Owner".to_owned()],
        scopes: None,
        expires_at: None,
        acts_for_user_id: Some(owner.id.clone()),
        created_at: now,
        updated_at: now,
        rotated_at: None,
        previous_value_hash: None,
        previous_value_valid_until: None,
        issued_tokens_revoked_before: None,
    };
    secrets::insert(&mut *tx, &secret).await?;
    let owner_code = generate_secret(crate::oauth::signin::recovery::RESET_CODE_PREFIX);
    let reset = Reset {
        id: ResetId::fresh(),
        realm_id: RealmId::platform(),
        user_id: owner.id.clone(),
        client_id: platform_client.id.clone(),
        token_hash: hasher.hash(&owner_code),
        created_at: now,
        expires_at: now + chrono::TimeDelta::hours(OWNER_CODE_HOURS),
        used_at: None,
    };
    recovery::insert(&mut *tx, &reset).await?;
    tx.commit().await.context("cannot store the bootstrap account")?;
    Ok(Some(Bootstrapped {
        account_id: account.id.clone(),
        owner_user_id: owner.id,
        api_key_id: secret.id,
        api_key,
        owner_code,
    }))
}

/// What [`password_link`] made: the one-time code, for whom, and on which account's team.
#[derive(Debug, Clone)]
pub struct PasswordCode {
    pub code: String,
    pub user_id: UserId,
    pub account_id: AccountId,
}

/// The way back in for a member of a team who lost their password and whom no e-mail reaches: a
/// one-time code, good for [`OWNER_CODE_HOURS`], to choose a new password with, made by the
/// operator on the deployment's host (`castellan team password-link`), never through the API: no
/// credential of any account reaches a team member. The change trail of the member's account
/// records it under the operator. `None` when no member of a team has that username.
pub async fn password_link(
    store: &Store,
    hasher: &SecretHasher,
    username: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<Option<PasswordCode>> {
    use crate::store::trail::{self, Actor, ActorType, Change, ChangeAction, Place, Request, ResourceKind};
    use crate::store::users;
    let Some(person) = users::find_by_login(store.pool(), PLATFORM_REALM, username).await? else { return Ok(None) };
    let Some(member) = accounts::membership(store.pool(), &person.id).await? else { return Ok(None) };
    let code = generate_secret(crate::oauth::signin::recovery::RESET_CODE_PREFIX);
    let reset = Reset {
        id: ResetId::fresh(),
        realm_id: RealmId::platform(),
        user_id: person.id.clone(),
        client_id: crate::kernel::ids::ClientId::known(PLATFORM_REALM),
        token_hash: hasher.hash(&code),
        created_at: now,
        expires_at: now + chrono::TimeDelta::hours(OWNER_CODE_HOURS),
        used_at: None,
    };
    let actor = Actor {
        account_id: member.account_id.clone(),
        actor_type: ActorType::Operator,
        user_id: None,
        username: None,
        email: None,
        credential_id: None,
        credential_name: None,
        ip_address: String::new(),
    };
    let request = Request { method: "COMMAND".into(), path: "castellan team password-link".into() };
    let change = Change::of(ChangeAction::Create, Place::outside_realms(ResourceKind::AccountMember, &person.id), 201)
        .details(serde_json::json!({ "password_code_until": crate::kernel::clock::iso(reset.expires_at) }));
    let mut tx = store.begin().await?;
    recovery::insert(&mut *tx, &reset).await?;
    trail::record_change(&mut tx, &actor, &request, &change, now).await?;
    tx.commit().await?;
    Ok(Some(PasswordCode { code, user_id: person.id, account_id: member.account_id }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::config::LogFormat;

    fn first() -> Bootstrapped {
        Bootstrapped {
            account_id: AccountId::known("acct"),
            owner_user_id: UserId::known("owner"),
            api_key_id: CredentialId::known("key"),
            api_key: "cstl_key_secret".into(),
            owner_code: "code".into(),
        }
    }

    #[test]
    fn the_banner_is_one_json_line_with_the_json_log_format_and_text_otherwise() {
        let first = first();
        let path = std::path::PathBuf::from("/var/lib/castellan/key");
        let banner = Banner {
            first: &first,
            address: "127.0.0.1:8080".parse().unwrap(),
            key_file: Some(&path),
            owner_link: Some("http://127.0.0.1:8080/realms/platform/account/password?code=code"),
        };
        let now = chrono::DateTime::from_timestamp_millis(1_800_000_000_000).unwrap();
        let json = banner.render(LogFormat::Json, now);
        assert_eq!(json.lines().count(), 1, "{json}");
        let line: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(line["level"], "INFO");
        assert_eq!(line["fields"]["api_key"], "cstl_key_secret");
        assert_eq!(line["fields"]["account_id"], "acct");
        assert_eq!(line["fields"]["key_file"], "/var/lib/castellan/key");
        assert!(line["fields"]["owner_link"].as_str().unwrap().ends_with("code=code"));
        assert!(line["timestamp"].as_str().unwrap().starts_with("2027-01-15T08:00:00"));

        let text = banner.render(LogFormat::Text, now);
        assert!(text.contains("\n    cstl_key_secret\n") && text.contains("curl -s -H 'x-api-key: cstl_key_secret'"));
        assert!(text.contains("written to /var/lib/castellan/key") && text.contains("code=code"));
        assert!(serde_json::from_str::<serde_json::Value>(&text).is_err());
    }
}

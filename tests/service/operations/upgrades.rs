//! Upgrades of a database holding data: the schema as an earlier release left it, rows written to
//! it, then the migrations that came since, on SQLite and PostgreSQL alike.

use std::path::PathBuf;

use sqlx::migrate::Migrator;
use sqlx::{AnyPool, Row as _};

use crate::support::TestDatabase;

/// The migrations of the database the tests run on.
async fn migrator(db: &TestDatabase) -> Migrator {
    let backend = if db.url.starts_with("postgres") { "postgres" } else { "sqlite" };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../migrations").join(backend);
    Migrator::new(dir).await.expect("the migrations load")
}

/// Applies the migrations up to `last` (included), or all of them.
async fn migrate(pool: &AnyPool, db: &TestDatabase, last: Option<i64>) {
    let mut migrator = migrator(db).await;
    if let Some(last) = last {
        let kept: Vec<_> = migrator.migrations.iter().filter(|m| m.version <= last).cloned().collect();
        migrator.migrations = std::borrow::Cow::Owned(kept);
    }
    migrator.run(pool).await.expect("the migrations apply");
}

async fn pool(db: &TestDatabase) -> AnyPool {
    sqlx::any::install_default_drivers();
    let url = if db.url.starts_with("sqlite") { format!("{}?mode=rwc", db.url) } else { db.url.clone() };
    AnyPool::connect(&url).await.expect("the database")
}

/// Clients that registered themselves sign with the realm's keys after the upgrade: their own keys
/// stop signing and stay published a day, longer than any token they signed lives. Clients an
/// administrator made keep theirs.
#[tokio::test]
async fn realm_keys_take_over_from_self_registered_clients_keys_and_admins_clients_keep_theirs() {
    let db = TestDatabase::new().await;
    let pool = pool(&db).await;
    migrate(&pool, &db, Some(40)).await;
    let statements = [
        "INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'Account', 0)",
        "INSERT INTO realms (id, account_id, display_name, status, max_failed_attempts, lockout_duration_minutes, \
         lockout_enabled, minimum_password_length, block_breached_passwords, self_sign_up, created_at, updated_at) \
         VALUES ('acme', 'a1', 'Acme', 'Active', 5, 15, TRUE, 8, FALSE, FALSE, 0, 0)",
    ];
    for statement in statements {
        sqlx::query(statement).execute(&pool).await.unwrap();
    }
    for (client, registration) in
        [("web", "Admin"), ("agent", "Dynamic"), ("https://agent.example/doc.json", "MetadataDocument")]
    {
        sqlx::query(
            "INSERT INTO clients (realm_id, id, name, client_type, status, token_exchange_enabled, allowed_scopes, \
             grant_types, redirect_uris, created_at, updated_at, registration) \
             VALUES ('acme', $1, $1, 'Public', 'Active', FALSE, '[]', '[]', '[]', 0, 0, $2)",
        )
        .bind(client)
        .bind(registration)
        .execute(&pool)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO signing_keys (id, realm_id, client_id, algorithm, sealed_key, public_jwk, status, \
             created_at, signs_from) VALUES ($1, 'acme', $2, 'ES256', 'sealed', '{}', 'Active', 0, 0)",
        )
        .bind(format!("key-of-{registration}"))
        .bind(client)
        .execute(&pool)
        .await
        .unwrap();
    }

    migrate(&pool, &db, None).await;
    let clients = sqlx::query("SELECT id, signing_keys FROM clients ORDER BY id").fetch_all(&pool).await.unwrap();
    let clients: Vec<(String, String)> = clients.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        clients,
        [
            ("agent".to_owned(), "Realm".to_owned()),
            ("https://agent.example/doc.json".to_owned(), "Realm".to_owned()),
            ("web".to_owned(), "Own".to_owned()),
        ]
    );
    let keys = sqlx::query("SELECT id, status, published_until FROM signing_keys ORDER BY id").fetch_all(&pool).await;
    let keys: Vec<(String, String, Option<i64>)> =
        keys.unwrap().iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect();
    let day_on = |until: Option<i64>| until.is_some_and(|ms| ms > 86_000_000);
    assert_eq!((keys[0].0.as_str(), keys[0].1.as_str()), ("key-of-Admin", "Active"));
    for (id, status, until) in &keys[1..] {
        assert_eq!(status, "Retired", "{id}");
        assert!(day_on(*until), "{id} stays published a day: {until:?}");
    }
    // A key of the realm, with no client, now goes where its realm goes.
    sqlx::query(
        "INSERT INTO signing_keys (id, realm_id, client_id, algorithm, sealed_key, public_jwk, status, created_at, \
         signs_from) VALUES ('realm-key', 'acme', NULL, 'ES256', 'sealed', '{}', 'Active', 0, 0)",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("DELETE FROM realms WHERE id = 'acme'").execute(&pool).await.unwrap();
    let (left,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM signing_keys").fetch_one(&pool).await.unwrap();
    assert_eq!(left, 0);
    pool.close().await;
}

//! Password recovery, one of the flows attack protection watches (SPEC "Attack protection rules"):
//! `POST /realms/{realm}/account/recovery` asks for a reset link for a username or e-mail address,
//! and `POST /realms/{realm}/account/recovery/reset` sets a new password with it.
//!
//! A request always gets the same answer, whether the account exists, has an address, or was
//! asked for too often; the e-mail goes out only when it may. A source attack protection blocked
//! gets the rate-limit answer before anything is looked up.

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use super::{Form, OAuthError, json_no_store, realm};
use crate::AppState;
use crate::clock::to_millis;
use crate::crypto::generate_secret;
use crate::http::address::ClientAddress;
use crate::ids::new_guid;
use crate::mail::Letter;
use crate::plugins::detector::{AttemptKind, Outcome};
use crate::protection::incidents::{self, Attack};
use crate::protection::{Hold, Seen};
use crate::store::Status;
use crate::store::recovery::{self as store, Reset};
use crate::store::users::{self as user_store, UserStatus};

/// How long a reset link works.
pub const RESET_MINUTES: i64 = 30;
/// Prefix of reset tokens.
const TOKEN_PREFIX: &str = "cstl_reset_";

/// The answer to every recovery request that is not refused outright.
fn requested() -> Response {
    let mut answer = json_no_store(
        json!({ "message": "If the account exists and has an e-mail address, a reset code is on its way." }),
    );
    *answer.status_mut() = StatusCode::ACCEPTED;
    answer
}

pub async fn request(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    form: Form,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let now = to_millis(state.clock.now());
    let address = address.to_string();
    if state.protection.refuses(Hold::SourceBlocked, &realm.id, &address, now).await {
        return Err(crate::signin::Refusal::SourceBlocked.into());
    }
    let client_id = form.require("client_id")?;
    let login = form.require("username")?;
    let client = crate::tokens::find_client(&state, &realm.id, client_id)
        .await?
        .filter(|c| c.status == Status::Active)
        .ok_or_else(|| OAuthError::invalid_client(false))?;
    let pool = state.store.pool();
    let user = user_store::find_by_login(pool, &realm.id, login).await?;
    let typed = login.to_lowercase();
    let seen = Seen {
        realm_id: &realm.id,
        kind: AttemptKind::Recovery,
        outcome: Outcome::Requested,
        source: &address,
        account: user.as_ref().map_or(typed.as_str(), |u| u.id.as_str()),
        account_known: user.is_some(),
        approved: false,
    };
    let decision = state.protection.judge(&state.store, &seen, now).await?;
    let mut tx = state.store.begin().await?;
    let mut letters = Vec::new();
    if let Some(decision) = &decision {
        let attack = Attack { realm: &realm, client: &client, user: user.as_ref(), address: &address };
        letters.extend(incidents::record(&state, &mut tx, &attack, decision, now).await?.letters);
    }
    // The e-mail goes out to an active account with an address, unless its recovery is silenced
    // (this request may just have silenced it).
    let recipient = user.as_ref().filter(|u| u.status == UserStatus::Active).and_then(|u| Some((u, u.email.clone()?)));
    if let Some((user, to)) = recipient
        && !state.protection.refuses(Hold::RecoverySilenced, &realm.id, &user.id, now).await
    {
        let token = generate_secret(TOKEN_PREFIX);
        let reset = Reset {
            id: new_guid(),
            realm_id: realm.id.clone(),
            user_id: user.id.clone(),
            client_id: client.id.clone(),
            token_hash: state.hasher.hash(&token),
            created_at: now,
            expires_at: now + RESET_MINUTES * 60_000,
            used_at: None,
        };
        store::insert(&mut *tx, &reset).await?;
        let name = &client.name;
        letters.push(Letter {
            to,
            subject: format!("{name}: reset your password"),
            body: format!(
                "Hello {},\n\nSomeone asked to reset the password of your {name} account. If it was you, use this \
                 code within {RESET_MINUTES} minutes to choose a new password:\n\n{token}\n\nIf it was not you, \
                 ignore this message: your password stays as it is.\n",
                user.first_name.as_deref().unwrap_or(&user.username)
            ),
        });
    }
    tx.commit().await?;
    crate::protection::send_letters(&state, letters);
    Ok(requested())
}

pub async fn reset(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    form: Form,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let token = form.require("token")?;
    let password = form.require("password")?;
    let now = to_millis(state.clock.now());
    let invalid = || OAuthError::invalid_grant("RecoveryTokenInvalid", "the reset code is unknown, used or expired");
    let reset = store::find_by_hash(state.store.pool(), &state.hasher.hash(token))
        .await?
        .filter(|r| r.realm_id == realm.id && r.used_at.is_none() && r.expires_at > now)
        .ok_or_else(invalid)?;
    let minimum = usize::try_from(realm.settings.minimum_password_length).unwrap_or(8);
    if password.chars().count() < minimum || password.chars().count() > crate::http::admin::users::MAX_PASSWORD_LENGTH {
        return Err(OAuthError::invalid_request(
            "PasswordRefused",
            format!(
                "the password must have {minimum} to {} characters",
                crate::http::admin::users::MAX_PASSWORD_LENGTH
            ),
        ));
    }
    if realm.settings.block_breached_passwords && state.breached_passwords.contains(password).await {
        return Err(OAuthError::invalid_request(
            "PasswordRefused",
            "this password appears in a list of breached passwords; choose another",
        ));
    }
    let mut user = user_store::find(state.store.pool(), &realm.id, &reset.user_id).await?.ok_or_else(invalid)?;
    user.password_hash = Some(crate::passwords::hash(password.to_owned()).await?);
    user.must_change_password = false;
    user.updated_at = now;
    let mut tx = state.store.begin().await?;
    if !store::use_once(&mut *tx, &reset.id, now).await? {
        return Err(invalid());
    }
    user_store::update(&mut *tx, &user).await?;
    crate::store::threats::password_changed(&mut tx, &user.id, now).await?;
    tx.commit().await?;
    Ok(json_no_store(json!({ "message": "The password is changed." })))
}

//! Password recovery, one of the flows attack protection watches:
//! a request for a reset code for a username or e-mail address, and a new password set with it.
//!
//! A request always succeeds alike, whether the account exists, has an address, or was asked for
//! too often; the e-mail goes out only when it may. A source attack protection blocked is refused
//! before anything is looked up.

use chrono::TimeDelta;

use super::{Refusal, SignInError};
use crate::kernel::crypto::generate_secret;
use crate::kernel::ids::ResetId;
use crate::kernel::passwords::MAX_PASSWORD_LENGTH;
use crate::protection::Protection;
use crate::protection::detection::{AttemptKind, Outcome};
use crate::protection::incidents::{self, Attack};
use crate::protection::{Hold, Seen};
use crate::runtime::context::Context;
use crate::runtime::outbound::mail::Letter;
use crate::store::Status;
use crate::store::realms::Realm;
use crate::store::recovery::{self as store, Reset};
use crate::store::users::{self as user_store, UserStatus};

/// How long a reset code works.
pub const RESET_MINUTES: i64 = 30;
/// Prefix of reset codes.
pub const RESET_CODE_PREFIX: &str = "cstl_reset_";

/// Asks for a reset code for `login` (a username or an e-mail address), sent through `client_id`'s
/// name. `Ok` whatever happened to the account, so that the answer tells nothing about it.
pub async fn request(
    context: &Context,
    protection: &Protection,
    realm: &Realm,
    client_id: &str,
    login: &str,
    address: &str,
) -> Result<(), SignInError> {
    let now = context.clock.now();
    if protection.refuses(Hold::SourceBlocked, &realm.id, address, now).await {
        return Err(Refusal::SourceBlocked.into());
    }
    let client = crate::oauth::tokens::find_client(context, &realm.id, client_id)
        .await?
        .filter(|c| c.status == Status::Active)
        .ok_or(Refusal::ClientUnknown)?;
    let pool = context.store.pool();
    let user = user_store::find_by_login(pool, &realm.id, login).await?;
    let typed = login.to_lowercase();
    let seen = Seen {
        realm_id: &realm.id,
        kind: AttemptKind::Recovery,
        outcome: Outcome::Requested,
        source: address,
        account: user.as_ref().map_or(typed.as_str(), |u| u.id.as_str()),
        account_known: user.is_some(),
        approved: false,
    };
    let decision = protection.judge(&context.store, &seen, now).await?;
    let mut tx = context.store.begin().await?;
    let mut letters = Vec::new();
    if let Some(decision) = &decision {
        let attack = Attack { realm, client: &client, user: user.as_ref(), address };
        letters.extend(incidents::record(context, protection, &mut tx, &attack, decision, now).await?.letters);
    }
    // The e-mail goes out to an active account with an address, unless its recovery is silenced
    // (this request may just have silenced it).
    let recipient = user.as_ref().filter(|u| u.status == UserStatus::Active).and_then(|u| Some((u, u.email.clone()?)));
    if let Some((user, to)) = recipient
        && !protection.refuses(Hold::RecoverySilenced, &realm.id, &user.id, now).await
    {
        let token = new_reset(context, &mut tx, (realm, &client, user), TimeDelta::minutes(RESET_MINUTES), now).await?;
        let name = &client.name;
        // The page that takes the code on its own, for a person who is not on the login page.
        let link = format!("{}/realms/{}/account/password?code={token}", context.public_url, realm.id);
        letters.push(Letter {
            to,
            subject: format!("{name}: reset your password"),
            body: format!(
                "Hello {},\n\nSomeone asked to reset the password of your {name} account. If it was you, use this \
                 code within {RESET_MINUTES} minutes to choose a new password:\n\n{token}\n\nor open \
                 {link}\n\nIf it was not you, ignore this message: your password stays as it is.\n",
                user.first_name.as_deref().unwrap_or(&user.username)
            ),
        });
    }
    tx.commit().await?;
    crate::protection::send_letters(context, letters);
    Ok(())
}

/// How long a person who must change their password has to choose the new one on the page.
pub const CHANGE_MINUTES: i64 = 10;

/// A reset code for a person who just typed their right password but must change it: the login
/// page hands it to the change form, never to anyone else.
pub async fn change_ticket(
    context: &Context,
    tx: &mut crate::store::Connection,
    realm: &Realm,
    client: &crate::store::clients::Client,
    user: &crate::store::users::User,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<String, SignInError> {
    new_reset(context, tx, (realm, client, user), TimeDelta::minutes(CHANGE_MINUTES), now).await
}

/// Stores a new reset code of the person, good once for `lifetime`; returns its value.
async fn new_reset(
    context: &Context,
    tx: &mut crate::store::Connection,
    (realm, client, user): (&Realm, &crate::store::clients::Client, &crate::store::users::User),
    lifetime: TimeDelta,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<String, SignInError> {
    let token = generate_secret(RESET_CODE_PREFIX);
    let reset = Reset {
        id: ResetId::fresh(),
        realm_id: realm.id.clone(),
        user_id: user.id.clone(),
        client_id: client.id.clone(),
        token_hash: context.hasher.hash(&token),
        created_at: now,
        expires_at: now + lifetime,
        used_at: None,
    };
    store::insert(&mut *tx, &reset).await?;
    Ok(token)
}

/// Whether `password` meets the realm's rules for a new password: its length, and when the realm
/// blocks them, not one known from a breach.
pub async fn acceptable(context: &Context, realm: &Realm, password: &str) -> Result<(), Refusal> {
    let minimum = usize::try_from(realm.settings.minimum_password_length).unwrap_or(8);
    let length = password.chars().count();
    if length < minimum || length > MAX_PASSWORD_LENGTH {
        return Err(Refusal::PasswordLength { minimum, maximum: MAX_PASSWORD_LENGTH });
    }
    if realm.settings.block_breached_passwords && context.passwords.breached.contains(password).await {
        return Err(Refusal::PasswordBreached);
    }
    Ok(())
}

/// Sets a new password with a reset code, once; the password must meet the realm's rules. It
/// clears a required change and resolves an exposure of the old password.
pub async fn reset(context: &Context, realm: &Realm, token: &str, password: &str) -> Result<(), SignInError> {
    let now = context.clock.now();
    let reset = store::find_by_hash(context.store.pool(), &context.hasher.hash(token))
        .await?
        .filter(|r| r.realm_id == realm.id && r.used_at.is_none() && r.expires_at > now)
        .ok_or(Refusal::RecoveryCodeInvalid)?;
    acceptable(context, realm, password).await?;
    let mut user =
        user_store::find(context.store.pool(), &realm.id, &reset.user_id).await?.ok_or(Refusal::RecoveryCodeInvalid)?;
    user.password_hash = Some(crate::kernel::passwords::hash(password.to_owned()).await?);
    user.must_change_password = false;
    user.updated_at = now;
    let mut tx = context.store.begin().await?;
    if !store::use_once(&mut *tx, &reset.id, now).await? {
        return Err(Refusal::RecoveryCodeInvalid.into());
    }
    user_store::update(&mut *tx, &user).await?;
    crate::store::exposures::password_changed(&mut tx, &user.id, now).await?;
    crate::store::browser::end_sessions_of(&mut *tx, &user.id, "password_changed", now).await?;
    tx.commit().await?;
    Ok(())
}

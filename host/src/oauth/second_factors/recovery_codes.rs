//! Recovery codes: ten codes made with a person's first second factor and shown once, each
//! accepted once in place of a second factor. A code has 59 random bits (twelve symbols of 31), so
//! it is kept as a keyed hash, as client secrets are, and typed in any case, with or without its
//! dashes.

use chrono::{DateTime, Utc};
use rand::Rng as _;

use super::{By, announce};
use crate::kernel::ids::AuthenticatorId;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Connection;
use crate::store::authenticators::{self as store, Authenticator, AuthenticatorKind};
use crate::store::events::EventType;
use crate::store::realms::Realm;
use crate::store::users::User;

/// Codes in a set.
pub const CODES: usize = 10;
/// Characters of a code, shown in groups of four.
const LENGTH: usize = 12;
/// Lower-case letters and digits without those read alike (0/o, 1/l/i).
const ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyz23456789";

/// Makes the person's set of recovery codes in `tx`, with its `authenticator_added` event, and
/// answers the codes: the only time they are shown.
pub async fn make(
    context: &Context,
    tx: &mut Connection,
    realm: &Realm,
    user: &User,
    now: DateTime<Utc>,
) -> Result<Vec<String>, Error> {
    let codes: Vec<String> = (0..CODES).map(|_| fresh()).collect();
    let set = Authenticator {
        id: AuthenticatorId::fresh(),
        realm_id: realm.id.clone(),
        user_id: user.id.clone(),
        kind: AuthenticatorKind::RecoveryCodes,
        name: "Recovery codes".to_owned(),
        secret_sealed: None,
        data: "{}".to_owned(),
        counter: None,
        credential_id: None,
        created_at: now,
        last_used_at: None,
    };
    store::insert(&mut *tx, &set).await?; // Without a credential id: never a duplicate.
    let hashes: Vec<String> = codes.iter().map(|code| context.hasher.hash(&normal(code))).collect();
    store::insert_codes(tx, &set.id, &hashes).await?;
    announce(tx, realm, user, &set, EventType::AuthenticatorAdded, By::Owner, now).await?;
    Ok(codes)
}

/// Replaces the person's recovery codes with a new set, which it answers. Only a person with a
/// second factor has recovery codes.
pub async fn renew(context: &Context, realm: &Realm, user: &User) -> Result<Vec<String>, Error> {
    let now = context.clock.now();
    let mut tx = context.store.begin().await?;
    let all = store::of_user(&mut *tx, &user.id).await?;
    if !all.iter().any(|a| a.kind != AuthenticatorKind::RecoveryCodes) {
        return Err(Error::Conflict("recovery codes come with a second factor: enrol one first".to_owned()));
    }
    for old in store::remove_kind(&mut *tx, &user.id, AuthenticatorKind::RecoveryCodes).await? {
        announce(&mut tx, realm, user, &old, EventType::AuthenticatorRemoved, By::Owner, now).await?;
    }
    let codes = make(context, &mut tx, realm, user, now).await?;
    tx.commit().await?;
    Ok(codes)
}

/// Uses one of the person's recovery codes: the set it belongs to, or `None` when it is not one of
/// theirs or was used before.
pub async fn check(
    context: &Context,
    user: &User,
    code: &str,
    now: DateTime<Utc>,
) -> Result<Option<AuthenticatorId>, Error> {
    let normal = normal(code);
    if normal.len() != LENGTH {
        return Ok(None);
    }
    let used = store::use_code(context.store.pool(), &user.id, &context.hasher.hash(&normal), now).await?;
    if let Some(set) = &used {
        store::touch(context.store.pool(), set, now).await?;
    }
    Ok(used)
}

/// A fresh code: `xxxx-xxxx-xxxx`.
fn fresh() -> String {
    let mut rng = rand::rng();
    let symbols: Vec<char> = (0..LENGTH).map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())])).collect();
    symbols.chunks(4).map(|group| group.iter().collect::<String>()).collect::<Vec<_>>().join("-")
}

/// A code as typed, without case, dashes or spaces.
fn normal(code: &str) -> String {
    code.chars().filter(|c| !matches!(c, '-' | ' ')).map(|c| c.to_ascii_lowercase()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_three_groups_of_four_read_in_any_case() {
        let code = fresh();
        assert_eq!(code.len(), LENGTH + 2);
        assert!(code.split('-').all(|group| group.len() == 4));
        assert_eq!(normal(&code.to_uppercase().replace('-', " ")), code.replace('-', ""));
        assert_ne!(fresh(), code);
    }
}

//! The admin operations on the account's secrets: API keys, personal access tokens and account
//! client secrets.

use crate::authz::caller::Caller;
use crate::authz::permission;
use crate::directory::listing::ListQuery;
use crate::directory::reach::Admin;
use crate::directory::reach::{Owned, SecretUpdate};
use crate::directory::rotation::Rotation;
use crate::directory::secrets;
use crate::directory::secrets::{RotatedSecret, SecretInput, SecretView};
use crate::kernel::ids::CredentialId;
use crate::kernel::validate::Body;
use crate::kernel::validate::Rule;
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::secrets::{self as secret_store, Secret, SecretType};

/// `POST /secrets`: the created secret with its `value` (shown once).
pub async fn create(admin: &Admin<'_>, caller: Caller, mut body: Body) -> Result<Answer<SecretView>, Error> {
    caller.require_account(admin.authz, permission::SECRET_CREATE)?;
    let now = admin.clock.now();
    let input = SecretInput::read(admin, admin.authz, &caller, &mut body, now).await?;
    body.finish()?;
    let SecretInput { name: Some(name), secret_type, roles: Some(roles), scopes, expires_at } = input else {
        return Err(Error::invalid("", Rule::Required, "name and roles are required"));
    };

    let secret = Secret {
        id: CredentialId::fresh(),
        account_id: caller.account_id().clone(),
        secret_type: secret_type.unwrap_or(SecretType::ApiKey),
        name,
        value_hash: String::new(),
        value_last_four: String::new(),
        roles: roles.clone(),
        scopes,
        expires_at,
        acts_for_user_id: caller.actor.user_id.clone(),
        created_at: now,
        updated_at: now,
        rotated_at: None,
        previous_value_hash: None,
        previous_value_valid_until: None,
        issued_tokens_revoked_before: None,
    };
    let issued = secrets::issue(admin, secret, caller.author()).await?;
    let mut view = SecretView::of(&issued.secret, now);
    view.value = Some(issued.value);
    Ok(Answer::Created(view))
}

/// `GET /secrets`: a page of the account's secrets (never their values).
pub async fn list(admin: &Admin<'_>, caller: Caller, query: Option<String>) -> Result<Answer<SecretView>, Error> {
    caller.require_account(admin.authz, permission::SECRET_READ)?;
    let list = ListQuery::parse(query, &[])?;
    list.status_in(crate::store::secrets::SecretType::NAMES)?;
    let now = admin.clock.now();
    let found = secret_store::page(&admin.store, caller.account_id(), &list.page).await?;
    Ok(Answer::Paged(found.map(|secret| SecretView::of(&secret, now))))
}

/// `GET /secrets/{id}`: the secret without its value.
pub async fn rotate(
    admin: &Admin<'_>,
    Owned { item: before, caller, .. }: Owned<Secret, SecretUpdate>,
    body: Body,
) -> Result<Answer<RotatedSecret>, Error> {
    let now = admin.clock.now();
    let rotation = Rotation::read(body, now)?;
    let rotated = secrets::rotate(admin, &before, &rotation, caller.author()).await?;
    let mut view = SecretView::of(&rotated.secret, now);
    view.value = Some(rotated.value);
    Ok(Answer::Ok(RotatedSecret { secret: view, rotation: rotation.view() }))
}

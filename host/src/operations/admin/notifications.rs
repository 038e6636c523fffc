//! The admin operations on the account's notifications and its notification preferences.

use crate::authz::caller::Caller;
use crate::authz::permission;
use crate::directory::listing::ListQuery;
use crate::directory::reach::Admin;
use crate::kernel::validate::Body;
use crate::operations::notifications;
use crate::operations::notifications::{NotificationView, PreferencesInput, PreferencesView};
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::notifications::{self as notification_store};

/// `GET /account/notification-preferences`: the account's notification preferences.
pub async fn preferences(admin: &Admin<'_>, caller: Caller) -> Result<Answer<PreferencesView>, Error> {
    caller.require_account(admin.authz, permission::ACCOUNT_READ)?;
    let preferences = notification_store::preferences(admin.store.pool(), caller.account_id()).await?;
    Ok(Answer::Ok(PreferencesView::of(preferences)))
}

/// `PUT /account/notification-preferences`: the preferences as stored.
pub async fn update_preferences(
    admin: &Admin<'_>,
    caller: Caller,
    mut body: Body,
) -> Result<Answer<PreferencesView>, Error> {
    caller.require_account(admin.authz, permission::ACCOUNT_UPDATE)?;
    let input = PreferencesInput::read(admin, &mut body).await;
    body.finish()?;
    Ok(Answer::Ok(notifications::change_preferences(admin, caller.account_id(), input, caller.author()).await?))
}

/// `GET /account/notifications`: a page of the account's operational notifications, newest first.
pub async fn notifications(
    admin: &Admin<'_>,
    caller: Caller,
    query: Option<String>,
) -> Result<Answer<NotificationView>, Error> {
    caller.require_account(admin.authz, permission::ACCOUNT_READ)?;
    let list = ListQuery::parse(query, &[])?;
    let found = notification_store::page(&admin.store, caller.account_id(), &list.page).await?;
    Ok(Answer::Paged(found.map(NotificationView::of)))
}

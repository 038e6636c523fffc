//! The admin operations on suspensions: what a person may no longer do at a client, written,
//! listed, read and lifted.

use crate::directory::reach::Admin;
use crate::kernel::validate::Body;
use crate::kernel::validate::Rule;
use crate::oauth::suspensions;
use crate::oauth::suspensions::{SuspensionInput, SuspensionView};
use crate::runtime::error::Error;
use crate::store::clients::Client;
use crate::store::suspensions::{self as store, Suspension, SuspensionFilter, SuspensionStatus};
use crate::store::users::User;

/// A page of suspensions as `filter` narrows them.
pub(crate) async fn page(
    admin: &Admin<'_>,
    caller: &Caller,
    filter: SuspensionFilter<'_>,
    list: &ListQuery,
) -> Result<Answer<SuspensionView>, Error> {
    let now = admin.clock.now();
    let found = store::page(&admin.store, caller.account_id(), now, filter, &list.page).await?;
    Ok(Answer::Paged(found.map(|suspension| SuspensionView::of(&suspension, now))))
}

/// The `status` asked for, as a suspension status.
pub(crate) fn status_filter(list: &ListQuery) -> Result<Option<SuspensionStatus>, Error> {
    list.page
        .status
        .as_ref()
        .map(|name| {
            SuspensionStatus::try_from(name.clone())
                .map_err(|_| Error::invalid("status", Rule::OneOf, "status must be Scheduled, Active, Ended or Lifted"))
        })
        .transpose()
}

/// The suspension the path names, of the person at the client.
pub(crate) async fn named(admin: &Admin<'_>, client: &Client, user: &User, id: &str) -> Result<Suspension, Error> {
    store::find(admin.store.pool(), &client.realm_id, id)
        .await?
        .filter(|s| s.client_id == client.id && s.user_id == user.id)
        .ok_or(Error::NotFound("suspension"))
}
use crate::authz::caller::Caller;
use crate::directory::listing::ListQuery;
use crate::directory::reach::{ClientUser, UserUpdate};
use crate::runtime::answer::Answer;

/// `POST /realms/{realm}/clients/{client}/users/{userId}/suspensions`: the suspension;
/// `user_suspended` is published with it.
pub async fn create(
    admin: &Admin<'_>,
    ClientUser { client, user, caller, .. }: ClientUser<UserUpdate>,
    mut body: Body,
) -> Result<Answer<SuspensionView>, Error> {
    let now = admin.clock.now();
    let input = SuspensionInput::read(&mut body, now);
    body.finish()?;
    let suspension = input.of((&client, &user), caller.account_id(), now);
    let Some(suspension) = suspension else {
        return Err(Error::Internal(anyhow::anyhow!("a refused body passed validation")));
    };
    let written = suspensions::write(admin, caller.author(), suspension, |s| SuspensionView::of(s, now)).await?;
    Ok(Answer::Created(SuspensionView::of(&written, now)))
}

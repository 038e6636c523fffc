//! The admin operations on capture endpoints: opened, listed, read with what they recorded,
//! removed.

use crate::authz::caller::Caller;
use crate::authz::permission;
use crate::directory::listing::ListQuery;
use crate::directory::reach::Admin;
use crate::directory::reach::{Owned, WebhookRead};
use crate::operations::webhooks::captures::{self, CaptureView, CapturedRequestView};
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::captures::{self as store, Capture};

/// `POST /webhook-captures`: a new capture endpoint recording requests for 24 hours.
pub async fn create_capture(admin: &Admin<'_>, caller: Caller) -> Result<Answer<CaptureView>, Error> {
    caller.require_account(admin.authz, permission::WEBHOOK_CREATE)?;
    Ok(Answer::Created(captures::open(admin, caller.account_id()).await?))
}

/// `GET /webhook-captures`: a page of the account's captures that have not expired.
pub async fn list_captures(
    admin: &Admin<'_>,
    caller: Caller,
    query: Option<String>,
) -> Result<Answer<CaptureView>, Error> {
    caller.require_account(admin.authz, permission::WEBHOOK_READ)?;
    let list = ListQuery::parse(query, &[])?;
    let now = admin.clock.now();
    let found = store::page(&admin.store, caller.account_id(), now, &list.page).await?;
    Ok(Answer::Paged(found.map(|capture| CaptureView::of(admin, capture))))
}

/// `GET /webhook-captures/{captureId}`: the capture.
pub async fn read_capture(
    admin: &Admin<'_>,
    Owned { item: capture, .. }: Owned<Capture, WebhookRead>,
) -> Result<Answer<CaptureView>, Error> {
    Ok(Answer::Ok(CaptureView::of(admin, capture)))
}

/// `GET /webhook-captures/{captureId}/requests`: a page of the requests the capture recorded,
/// newest first.
pub async fn captured_requests(
    admin: &Admin<'_>,
    Owned { item: capture, .. }: Owned<Capture, WebhookRead>,
    query: Option<String>,
) -> Result<Answer<CapturedRequestView>, Error> {
    let list = ListQuery::parse(query, &[])?;
    let found = store::request_page(&admin.store, &capture.id, &list.page).await?;
    Ok(Answer::Paged(found.map(CapturedRequestView::of)))
}

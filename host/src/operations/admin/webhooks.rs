//! The admin operations on webhook endpoints, a realm's or a client's: register one, read and
//! change it, rotate its signing secret, remove it, send it a test, replay a delivery, read its
//! deliveries.

use crate::authz::caller::Caller;
use crate::authz::{Resource, permission};
use crate::directory::listing::ListQuery;
use crate::directory::reach::client_in_reach;
use crate::directory::reach::{Admin, realm_in_reach};
use crate::kernel::validate::{Body, Notification, Rule};
use crate::operations::webhooks::endpoints::{self, AttemptView, EndpointInput, EndpointView, Owner, WithSecret};
use crate::operations::webhooks::figures::{EventView, MetricsView};
use crate::operations::webhooks::{Webhooks, figures};
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::webhooks::events::event_page;
use crate::store::webhooks::{self as store, Endpoint};

/// What a caller wants to do with endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intent {
    Read,
    Register,
    Change,
    Remove,
}

/// Checks the caller may act on the place's endpoints and loads the place.
pub(crate) async fn place_in_reach(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: &str,
    client_id: Option<&str>,
    intent: Intent,
) -> Result<Owner, Error> {
    let permissions: &[&str] = match (intent, client_id.is_some()) {
        (Intent::Read, _) => &[permission::WEBHOOK_READ],
        // Registering a client endpoint requires client:write, which grants all three.
        (Intent::Register, true) => &[permission::CLIENT_CREATE, permission::CLIENT_UPDATE, permission::CLIENT_DELETE],
        (Intent::Register, false) => &[permission::WEBHOOK_CREATE],
        (Intent::Change, _) => &[permission::WEBHOOK_UPDATE],
        (Intent::Remove, _) => &[permission::WEBHOOK_DELETE],
    };
    match client_id {
        Some(client_id) => {
            let client = client_in_reach(admin, caller, realm_id, client_id, permissions[0]).await?;
            let realm = crate::directory::realms::find(admin, realm_id).await?.ok_or(Error::NotFound("realm"))?;
            for permission in &permissions[1..] {
                let resource = Resource::Client {
                    realm_id: client.realm_id.to_string(),
                    id: client.id.to_string(),
                    owner: Some(realm.account_id.clone()),
                };
                caller.require(admin.authz, permission, resource)?;
            }
            Ok(Owner { account_id: realm.account_id.clone(), realm_id: client.realm_id, client_id: Some(client.id) })
        }
        None => {
            let realm = realm_in_reach(admin, caller, realm_id, permissions[0]).await?;
            Ok(Owner { account_id: realm.account_id.clone(), realm_id: realm.id.clone(), client_id: None })
        }
    }
}

/// The endpoint `id` of the place, in the caller's reach for what they intend.
pub(crate) async fn endpoint_in_reach(
    admin: &Admin<'_>,
    caller: &Caller,
    (realm_id, client_id, id): (&str, Option<&str>, &str),
    intent: Intent,
) -> Result<(Owner, Endpoint), Error> {
    let place = place_in_reach(admin, caller, realm_id, client_id, intent).await?;
    let endpoint = store::find(admin.store.pool(), &place.realm_id, place.client_id.as_deref(), id)
        .await?
        .ok_or(Error::NotFound("webhook"))?;
    Ok((place, endpoint))
}

/// The view with the fresh secret, for a caller allowed to read secrets.
pub(crate) fn with_secret(admin: &Admin<'_>, caller: &Caller, endpoint: &Endpoint, secret: String) -> EndpointView {
    let mut view = EndpointView::of(endpoint);
    if caller.require_account(admin.authz, permission::SECRET_READ).is_ok() {
        view.signing_secret = Some(secret);
    }
    view
}

/// Registers an endpoint of the realm (or of its client) from the body; its signing secret is shown
/// once, to a caller allowed to read secrets.
pub(crate) async fn register(
    admin: &Admin<'_>,
    webhooks: &Webhooks,
    caller: Caller,
    realm_id: &str,
    client_id: Option<&str>,
    mut body: Body,
) -> Result<Answer<EndpointView>, Error> {
    let place = place_in_reach(admin, &caller, realm_id, client_id, Intent::Register).await?;
    let WithSecret { mut endpoint, secret } = endpoints::draft(admin, webhooks, &place);
    for required in ["name", "url", "events"] {
        if !body.has(required) {
            body.refuse(required, Rule::Required, format!("{required} is required"));
        }
    }
    EndpointInput::read(admin, &mut body, endpoint.kind).await.apply(&mut endpoint);
    body.finish()?;
    endpoints::register(admin, caller.author(), &endpoint, EndpointView::of).await?;
    Ok(Answer::Created(with_secret(admin, &caller, &endpoint, secret)))
}

/// A page of the place's endpoints.
pub(crate) async fn list_endpoints(
    admin: &Admin<'_>,
    caller: Caller,
    realm_id: &str,
    client_id: Option<&str>,
    query: Option<String>,
) -> Result<Answer<EndpointView>, Error> {
    let place = place_in_reach(admin, &caller, realm_id, client_id, Intent::Read).await?;
    let list = ListQuery::parse(query, &[])?;
    list.status_in(store::EndpointStatus::NAMES)?;
    let found = store::endpoint_page(&admin.store, place.rows(), &list.page).await?;
    Ok(Answer::Paged(found.map(|endpoint| EndpointView::of(&endpoint))))
}

/// The endpoint.
pub(crate) async fn read_endpoint(
    admin: &Admin<'_>,
    caller: Caller,
    at: (&str, Option<&str>, &str),
) -> Result<Answer<EndpointView>, Error> {
    let (_, endpoint) = endpoint_in_reach(admin, &caller, at, Intent::Read).await?;
    Ok(Answer::Ok(EndpointView::of(&endpoint)))
}

/// Changes the endpoint as the body says; a Disabled one is Active again.
pub(crate) async fn update_endpoint(
    admin: &Admin<'_>,
    caller: Caller,
    at: (&str, Option<&str>, &str),
    mut body: Body,
) -> Result<Answer<EndpointView>, Error> {
    let (_, before) = endpoint_in_reach(admin, &caller, at, Intent::Change).await?;
    let mut endpoint = endpoints::reopened(&before);
    body.unchanged("id", &endpoint.id);
    body.unchanged("kind", endpoint.kind.as_str());
    EndpointInput::read(admin, &mut body, endpoint.kind).await.apply(&mut endpoint);
    body.finish()?;
    let endpoint = endpoints::update(admin, caller.author(), &before, endpoint, EndpointView::of).await?;
    Ok(Answer::Ok(EndpointView::of(&endpoint)))
}

/// Removes the endpoint.
pub(crate) async fn delete_endpoint(
    admin: &Admin<'_>,
    caller: Caller,
    at: (&str, Option<&str>, &str),
) -> Result<Answer<()>, Error> {
    let (_, endpoint) = endpoint_in_reach(admin, &caller, at, Intent::Remove).await?;
    endpoints::remove(admin, caller.author(), &endpoint, EndpointView::of).await?;
    Ok(Answer::Done)
}

/// Rotates the endpoint's signing secret.
pub(crate) async fn rotate(
    admin: &Admin<'_>,
    webhooks: &Webhooks,
    caller: Caller,
    at: (&str, Option<&str>, &str),
) -> Result<Answer<EndpointView>, Error> {
    let (_, before) = endpoint_in_reach(admin, &caller, at, Intent::Change).await?;
    let WithSecret { endpoint, secret } =
        endpoints::rotate(admin, webhooks, caller.author(), &before, EndpointView::of).await?;
    Ok(Answer::Ok(with_secret(admin, &caller, &endpoint, secret)))
}

/// Schedules a `ping` for now.
pub(crate) async fn test(
    admin: &Admin<'_>,
    webhooks: &Webhooks,
    caller: Caller,
    at: (&str, Option<&str>, &str),
) -> Result<Answer<AttemptView>, Error> {
    let (_, endpoint) = endpoint_in_reach(admin, &caller, at, Intent::Change).await?;
    let attempt = endpoints::test(admin, webhooks, &endpoint).await?;
    Ok(Answer::Created(AttemptView::of(attempt)))
}

/// Resends a delivered payload unchanged, now.
pub(crate) async fn replay(
    admin: &Admin<'_>,
    webhooks: &Webhooks,
    caller: Caller,
    at: (&str, Option<&str>, &str),
    attempt_id: &str,
) -> Result<Answer<AttemptView>, Error> {
    let (_, endpoint) = endpoint_in_reach(admin, &caller, at, Intent::Change).await?;
    let attempt = endpoints::replay(admin, webhooks, &endpoint, attempt_id).await?;
    Ok(Answer::Created(AttemptView::of(attempt)))
}

/// A page of the endpoint's delivery attempts.
pub(crate) async fn deliveries(
    admin: &Admin<'_>,
    caller: Caller,
    realm_id: &str,
    client_id: Option<&str>,
    query: Option<String>,
) -> Result<Answer<AttemptView>, Error> {
    let place = place_in_reach(admin, &caller, realm_id, client_id, Intent::Read).await?;
    let list = ListQuery::parse(query, &["webhookId", "eventId", "eventType", "kind"])?;
    list.status_in(crate::store::webhooks::AttemptState::NAMES)?;
    let filter = store::AttemptFilter {
        endpoint_id: list.filter("webhookId"),
        event_id: list.filter("eventId"),
        event_type: list.filter("eventType"),
        kind: list.filter("kind"),
    };
    let found = store::attempt_page(&admin.store, place.rows(), filter, &list.page).await?;
    Ok(Answer::Paged(found.map(AttemptView::of)))
}

/// The window metrics cover when the caller names none: the last 24 hours.
pub(crate) const DEFAULT_METRICS_WINDOW_HOURS: i64 = 24;

/// How the attempts to the client's endpoints went in the window the query names (24 hours by
/// default).
pub(crate) async fn metrics(
    admin: &Admin<'_>,
    caller: Caller,
    realm_id: &str,
    client_id: &str,
    query: Option<String>,
) -> Result<Answer<MetricsView>, Error> {
    let place = place_in_reach(admin, &caller, realm_id, Some(client_id), Intent::Read).await?;
    let now = admin.clock.now();
    let (mut webhook_id, mut from, mut to) = (None, None, None);
    let mut refused = Vec::new();
    for (name, value) in
        query.map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect::<Vec<_>>()).unwrap_or_default()
    {
        let instant = || chrono::DateTime::parse_from_rfc3339(&value).map(|at| at.with_timezone(&chrono::Utc)).ok();
        match name.as_str() {
            "webhookId" => webhook_id = Some(value.clone()).filter(|v| !v.is_empty()),
            "createdFrom" | "createdTo" => match instant() {
                Some(at) if name == "createdFrom" => from = Some(at),
                Some(at) => to = Some(at),
                None => refused.push(Notification::new(
                    &name,
                    Rule::Format,
                    format!("{name} must be an ISO 8601 timestamp"),
                )),
            },
            _ => refused.push(Notification::new(
                &name,
                Rule::Unknown,
                format!("{name} is not a parameter of the metrics"),
            )),
        }
    }
    // Without an end, the window includes what happened at this very instant.
    let end = to.unwrap_or(now + chrono::Duration::milliseconds(1));
    let to = to.unwrap_or(now);
    let from = from.unwrap_or(to - chrono::Duration::hours(DEFAULT_METRICS_WINDOW_HOURS));
    if from >= to {
        refused.push(Notification::new("createdFrom", Rule::Range, "createdFrom must be before createdTo"));
    }
    if !refused.is_empty() {
        return Err(Error::Validation(refused));
    }
    if let Some(id) = &webhook_id {
        store::find(admin.store.pool(), &place.realm_id, Some(client_id), id)
            .await?
            .ok_or(Error::NotFound("webhook"))?;
    }
    let window = (from, to, end);
    Ok(Answer::Ok(figures::metrics(admin, (&place.realm_id, client_id), webhook_id, window).await?))
}

/// A page of the events delivered to the client's endpoints, with their fan-out status.
pub(crate) async fn events(
    admin: &Admin<'_>,
    caller: Caller,
    realm_id: &str,
    client_id: &str,
    query: Option<String>,
) -> Result<Answer<EventView>, Error> {
    let place = place_in_reach(admin, &caller, realm_id, Some(client_id), Intent::Read).await?;
    let list = ListQuery::parse(query, &["eventType"])?;
    list.status_in(&[("Pending", ()), ("Delivered", ()), ("Partial", ()), ("Failed", ())])?;
    let found = event_page(&admin.store, place.rows(), list.filter("eventType"), &list.page).await?;
    Ok(Answer::Paged(found.map(EventView::of)))
}

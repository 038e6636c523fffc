//! Sign-ins confirmed on a phone. A password
//! sign-in that asks for confirmation creates a request (2 minutes) posted to each of the account's
//! phones through the push gateway; the client polls for it, and once a phone approved it, the
//! session opens. While the account's pushes are paused, the request is made as usual but withheld:
//! no phone sees it, and the client is answered as for a request nobody answered.

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Value, json};

use super::{Opens, Origin, PasswordOutcome, Refusal, SignIn, SignInError};
use crate::kernel::clock::iso;
use crate::kernel::ids::PushRequestId;
use crate::protection::Protection;
use crate::protection::detection::{AttemptKind, Outcome};
use crate::protection::incidents::{self, Attack};
use crate::protection::{Hold, Seen};
use crate::runtime::context::Context;
use crate::store::Connection;
use crate::store::clients::Client;
use crate::store::push::{self as store, Device, PushRequest, RequestStatus};
use crate::store::realms::Realm;
use crate::store::users::{self as user_store, UserStatus};

/// How long a phone may answer.
pub const REQUEST_SECONDS: i64 = 120;
/// How often the client should poll, in seconds.
pub const POLL_INTERVAL_SECONDS: i64 = 2;

/// A request made for a phone to confirm.
#[derive(Debug, Clone)]
pub struct Asked {
    pub request_id: PushRequestId,
    pub expires_in: i64,
    pub interval: i64,
}

/// A request to deliver to one phone through the gateway, once the request is stored.
#[derive(Debug, Clone)]
pub struct Delivery {
    body: Value,
}

/// Creates the pushed request of a sign-in whose password was right in `tx`; the deliveries go to
/// the gateway once `tx` commits.
pub(super) async fn ask(
    protection: &Protection,
    tx: &mut Connection,
    signed_in: &SignIn<'_>,
    origin: &Origin,
    now: DateTime<Utc>,
) -> Result<(Asked, Vec<Delivery>), SignInError> {
    let SignIn { realm, client, user, scopes, resource, .. } = *signed_in;
    let devices = store::devices_of(&mut *tx, &user.id).await?;
    if devices.is_empty() {
        return Err(Refusal::PushDeviceMissing.into());
    }
    let paused = protection.refuses(Hold::SignInPushesPaused, &realm.id, &user.id, now).await;
    let request = PushRequest {
        id: PushRequestId::fresh(),
        realm_id: realm.id.clone(),
        user_id: user.id.clone(),
        client_id: client.id.clone(),
        ip_address: origin.ip_address.clone(),
        user_agent: origin.user_agent.clone(),
        scopes: scopes.to_vec(),
        resource: resource.map(str::to_owned),
        status: if paused { RequestStatus::Withheld } else { RequestStatus::Pending },
        created_at: now,
        expires_at: now + TimeDelta::seconds(REQUEST_SECONDS),
        answered_at: None,
        device_id: None,
    };
    store::insert_request(&mut *tx, &request).await?;
    let deliveries = if paused {
        Vec::new()
    } else {
        devices
            .iter()
            .filter_map(|device| {
                let push_token = device.push_token.as_ref()?;
                Some(Delivery {
                    body: json!({
                        "push_token": push_token,
                        "device_id": device.id,
                        "push_request_id": request.id,
                        "realm_id": realm.id,
                        "client_id": client.id,
                        "client_name": client.name,
                        "ip_address": request.ip_address,
                        "expires_at": iso(request.expires_at),
                    }),
                })
            })
            .collect()
    };
    let asked = Asked { request_id: request.id, expires_in: REQUEST_SECONDS, interval: POLL_INTERVAL_SECONDS };
    Ok((asked, deliveries))
}

/// Posts the deliveries to the push gateway, without holding up the answer; failures are logged.
pub(super) fn deliver(context: &Context, deliveries: Vec<Delivery>) {
    let Some(gateway) = context.settings.push_gateway_url.clone() else {
        if !deliveries.is_empty() {
            tracing::debug!("no push gateway configured: phones find their requests by asking");
        }
        return;
    };
    if deliveries.is_empty() {
        return;
    }
    context.detached.spawn(async move {
        let client = reqwest::Client::new();
        for delivery in deliveries {
            let sent =
                client.post(&gateway).timeout(std::time::Duration::from_secs(5)).json(&delivery.body).send().await;
            match sent.and_then(reqwest::Response::error_for_status) {
                Ok(_) => {}
                Err(error) => tracing::error!(%error, "the push gateway did not take a sign-in request"),
            }
        }
    });
}

/// The answer to the client (or the login page) polling for `request_id`: once a phone approved
/// the sign-in, what it opens (`opens`), once; pending, expired or refused otherwise.
pub async fn collect(
    context: &Context,
    realm: &Realm,
    client: &Client,
    request_id: &str,
    opens: Opens,
) -> Result<PasswordOutcome, SignInError> {
    let now = context.clock.now();
    let pool = context.store.pool();
    let request = store::find_request(pool, request_id)
        .await?
        .filter(|r| r.realm_id == realm.id && r.client_id == client.id)
        .ok_or(Refusal::PushRequestUnknown)?;
    let live = request.expires_at > now;
    match request.status {
        RequestStatus::Pending | RequestStatus::Withheld if live => return Err(Refusal::PushPending.into()),
        RequestStatus::Pending | RequestStatus::Withheld | RequestStatus::Approved if !live => {
            return Err(Refusal::PushExpired.into());
        }
        RequestStatus::Refused => return Err(Refusal::PushRefused.into()),
        RequestStatus::Exchanged => return Err(Refusal::PushRequestUnknown.into()),
        _ => {}
    }
    let user = user_store::find(pool, &realm.id, &request.user_id)
        .await?
        .filter(|u| u.status == UserStatus::Active)
        .ok_or(Refusal::PushRequestUnknown)?;
    if opens == Opens::ClientSession && super::suspended(context, client, &user.id, now).await? {
        return Err(Refusal::Suspended.into());
    }
    let mut tx = context.store.begin().await?;
    if !store::transition(&mut *tx, &request.id, RequestStatus::Approved, RequestStatus::Exchanged, None, now).await? {
        return Err(Refusal::PushRequestUnknown.into());
    }
    let scopes = request.scopes.clone();
    let origin = Origin { ip_address: request.ip_address.clone(), user_agent: request.user_agent.clone() };
    let signed_in = SignIn {
        realm,
        client,
        user: &user,
        scopes: &scopes,
        resource: request.resource.as_deref(),
        methods: &["pwd", "push"],
        // A sign-in a phone confirmed is not bound to a DPoP key.
        dpop_jkt: None,
    };
    Ok(super::open(context, tx, &signed_in, &origin, opens, now).await?)
}

/// A phone's answer to a pushed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Approve,
    Refuse,
}

/// The answer of `device` (already authenticated) to a request waiting for it. The answer counts
/// for the account at attack protection, from the address the sign-in came from: refusals on the
/// phone are how push bombing shows.
pub async fn answer(
    context: &Context,
    protection: &Protection,
    realm: &Realm,
    device: &Device,
    request_id: &str,
    decision: Decision,
) -> Result<RequestStatus, SignInError> {
    let (to, outcome) = match decision {
        Decision::Approve => (RequestStatus::Approved, Outcome::Succeeded),
        Decision::Refuse => (RequestStatus::Refused, Outcome::RefusedOnPhone),
    };
    let now = context.clock.now();
    let pool = context.store.pool();
    let request = store::find_request(pool, request_id)
        .await?
        .filter(|r| r.user_id == device.user_id && r.status == RequestStatus::Pending && r.expires_at > now)
        .ok_or(Refusal::PushRequestNotWaiting)?;
    let client = crate::oauth::tokens::find_client(context, &realm.id, &request.client_id)
        .await?
        .ok_or(Refusal::PushRequestNotWaiting)?;
    let user = user_store::find(pool, &realm.id, &device.user_id).await?.ok_or(Refusal::PushRequestNotWaiting)?;
    let seen = Seen {
        realm_id: &realm.id,
        kind: AttemptKind::PushAnswer,
        outcome,
        source: &request.ip_address,
        account: &user.id,
        account_known: true,
        approved: false,
    };
    let verdict = protection.judge(&context.store, &seen, now).await?;
    let mut tx = context.store.begin().await?;
    if !store::transition(&mut *tx, &request.id, RequestStatus::Pending, to, Some(&device.id), now).await? {
        return Err(Refusal::PushRequestNotWaiting.into());
    }
    let mut letters = Vec::new();
    if let Some(verdict) = &verdict {
        let attack = Attack { realm, client: &client, user: Some(&user), address: &request.ip_address };
        letters = incidents::record(context, protection, &mut tx, &attack, verdict, now).await?.letters;
    }
    tx.commit().await?;
    crate::protection::send_letters(context, letters);
    Ok(to)
}

//! Sign-in requests pushed to phones, the third flow attack protection watches (SPEC "Attack
//! protection rules": push bombing).
//!
//! - A person enrolls a phone: `POST /realms/{realm}/account/push-devices` with their access token
//!   (`name`, and `push_token`, the push gateway's address of the phone); the answer holds the
//!   device's id and secret, once.
//! - A password grant with `confirmation=push` and the right password issues no token: it creates a
//!   request (2 minutes) delivered to each enrolled phone through the push gateway
//!   (`push_gateway_url`) and answers its id. The client then polls the token endpoint with the
//!   grant `urn:castellan:params:oauth:grant-type:push` and `push_request_id`, as RFC 8628 polls:
//!   `authorization_pending` until a phone answers, then the tokens, `access_denied` or
//!   `expired_token`.
//! - The phone, authenticated with HTTP Basic (device id and secret), lists the requests waiting for
//!   it (`GET …/account/push-requests`) and approves or refuses one
//!   (`POST …/account/push-requests/{id}/answer`, `decision=approve|refuse`).
//!
//! While the account's pushes are paused, a request is made as usual but withheld: no phone sees
//! it, and the client is answered as for a request nobody answered.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::json;

use super::token::{Origin, SignIn, open_session, send_letters};
use super::{Form, OAuthError, json_no_store, realm};
use crate::AppState;
use crate::clock::{from_millis, iso, to_millis};
use crate::crypto::generate_secret;
use crate::ids::new_guid;
use crate::plugins::detector::{AttemptKind, Outcome};
use crate::protection::incidents::{self, Attack};
use crate::protection::{Hold, Seen};
use crate::store::clients::Client;
use crate::store::push::{self as store, Device, PushRequest, RequestStatus};
use crate::store::realms::Realm;
use crate::store::users::{self as user_store, User, UserStatus};
use crate::store::{Connection, from_json_list, to_json_list};

/// The grant a client polls with for the answer to a pushed request.
pub const GRANT_TYPE: &str = "urn:castellan:params:oauth:grant-type:push";
/// How long a phone may answer.
pub const REQUEST_SECONDS: i64 = 120;
/// How often the client should poll, in seconds.
const POLL_INTERVAL_SECONDS: i64 = 2;
const DEVICE_SECRET_PREFIX: &str = "cstl_dev_";
/// The most phones one account enrolls.
const MAX_DEVICES: usize = 10;

/// A request to deliver to one phone through the gateway, once the request is stored.
#[derive(Debug, Clone)]
pub struct Delivery {
    body: serde_json::Value,
}

/// Creates the pushed request of a password sign-in that asked for confirmation on a phone, and
/// answers its id; the deliveries go to the gateway once `tx` commits.
#[allow(clippy::too_many_arguments)]
pub(super) async fn ask(
    state: &AppState,
    tx: &mut Connection,
    realm: &Realm,
    client: &Client,
    user: &User,
    scopes: &[String],
    resource: Option<&str>,
    origin: &Origin,
    now: i64,
) -> Result<(Response, Vec<Delivery>), OAuthError> {
    let devices = store::devices_of(&mut *tx, &user.id).await?;
    if devices.is_empty() {
        return Err(OAuthError::new(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "PushDeviceMissing",
            "the account has no phone enrolled for push confirmation",
        ));
    }
    let paused = state.protection.refuses(Hold::SignInPushesPaused, &realm.id, &user.id, now).await;
    let request = PushRequest {
        id: new_guid(),
        realm_id: realm.id.clone(),
        user_id: user.id.clone(),
        client_id: client.id.clone(),
        ip_address: origin.ip_address.clone(),
        user_agent: origin.user_agent.clone(),
        scopes: to_json_list(scopes),
        resource: resource.map(str::to_owned),
        status: if paused { RequestStatus::Withheld } else { RequestStatus::Pending },
        created_at: now,
        expires_at: now + REQUEST_SECONDS * 1000,
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
                        "expires_at": iso(from_millis(request.expires_at)),
                    }),
                })
            })
            .collect()
    };
    let answer = json_no_store(json!({
        "push_request_id": request.id,
        "expires_in": REQUEST_SECONDS,
        "interval": POLL_INTERVAL_SECONDS,
    }));
    Ok((answer, deliveries))
}

/// Posts the deliveries to the push gateway, without holding up the answer; failures are logged.
pub(super) fn deliver(state: &AppState, deliveries: Vec<Delivery>) {
    let Some(gateway) = state.settings.push_gateway_url.clone() else {
        if !deliveries.is_empty() {
            tracing::debug!("no push gateway configured: phones find their requests by asking");
        }
        return;
    };
    if deliveries.is_empty() {
        return;
    }
    tokio::spawn(async move {
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

fn pending() -> OAuthError {
    OAuthError::new(
        StatusCode::BAD_REQUEST,
        "authorization_pending",
        "AuthorizationPending",
        "no phone has answered yet",
    )
}

fn unknown_request() -> OAuthError {
    OAuthError::invalid_grant("PushRequestUnknown", "no such push request for this client, or it was used")
}

/// The push grant: the tokens of a sign-in a phone approved, once.
pub(super) async fn exchange(
    state: &AppState,
    realm: &Realm,
    client: &Client,
    form: &Form,
) -> Result<Response, OAuthError> {
    let id = form.require("push_request_id")?;
    let now = to_millis(state.clock.now());
    let pool = state.store.pool();
    let request = store::find_request(pool, id)
        .await?
        .filter(|r| r.realm_id == realm.id && r.client_id == client.id)
        .ok_or_else(unknown_request)?;
    let live = request.expires_at > now;
    match request.status {
        RequestStatus::Pending | RequestStatus::Withheld if live => return Err(pending()),
        RequestStatus::Pending | RequestStatus::Withheld | RequestStatus::Approved if !live => {
            return Err(OAuthError::new(
                StatusCode::BAD_REQUEST,
                "expired_token",
                "PushRequestExpired",
                "no phone approved the sign-in in time",
            ));
        }
        RequestStatus::Refused => {
            return Err(OAuthError::new(
                StatusCode::BAD_REQUEST,
                "access_denied",
                "PushRequestRefused",
                "the sign-in was refused on the phone",
            ));
        }
        RequestStatus::Exchanged => return Err(unknown_request()),
        _ => {}
    }
    let user = user_store::find(pool, &realm.id, &request.user_id)
        .await?
        .filter(|u| u.status == UserStatus::Active)
        .ok_or_else(unknown_request)?;
    let mut tx = state.store.begin().await?;
    if !store::transition(&mut *tx, &request.id, RequestStatus::Approved, RequestStatus::Exchanged, None, now).await? {
        return Err(unknown_request());
    }
    let scopes = from_json_list(&request.scopes);
    let origin = Origin { ip_address: request.ip_address.clone(), user_agent: request.user_agent.clone() };
    let signed_in = SignIn {
        realm,
        client,
        user: &user,
        scopes: &scopes,
        resource: request.resource.as_deref(),
        methods: &["pwd", "push"],
    };
    open_session(state, tx, &signed_in, &origin, now).await
}

/// The phone presenting itself with HTTP Basic (device id and secret), enrolled in this realm.
async fn device(state: &AppState, realm: &Realm, headers: &HeaderMap, form: &Form) -> Result<Device, OAuthError> {
    let Some((id, secret, basic)) = super::presented_credentials(headers, form)? else {
        return Err(OAuthError::invalid_client(false));
    };
    let device = store::find_device(state.store.pool(), &id).await?;
    device
        .filter(|d| d.realm_id == realm.id && d.revoked_at.is_none() && state.hasher.matches(&secret, &d.secret_hash))
        .ok_or_else(|| OAuthError::invalid_client(basic))
}

pub async fn enroll(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
    form: Form,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let invalid_token = || {
        OAuthError::new(
            StatusCode::UNAUTHORIZED,
            "invalid_token",
            "InvalidToken",
            "a person's access token is required",
        )
    };
    let token = super::discovery::bearer(&headers).ok_or_else(invalid_token)?;
    let active = crate::tokens::active_access_token(&state, &realm.id, token).await?;
    let user = active
        .and_then(|a| a.person.map(|(_, person)| person))
        .filter(|u| u.status == UserStatus::Active)
        .ok_or_else(invalid_token)?;
    let name = form.require("name")?;
    if name.chars().count() > 100 {
        return Err(OAuthError::invalid_request("InvalidName", "name is at most 100 characters"));
    }
    if store::devices_of(state.store.pool(), &user.id).await?.len() >= MAX_DEVICES {
        return Err(OAuthError::invalid_request("TooManyDevices", "an account enrolls at most 10 phones"));
    }
    let secret = generate_secret(DEVICE_SECRET_PREFIX);
    let device = Device {
        id: new_guid(),
        realm_id: realm.id.clone(),
        user_id: user.id.clone(),
        name: name.to_owned(),
        secret_hash: state.hasher.hash(&secret),
        push_token: form.get("push_token").map(str::to_owned),
        created_at: to_millis(state.clock.now()),
        revoked_at: None,
    };
    store::insert_device(state.store.writer(), &device).await?;
    let mut answer = json_no_store(json!({ "device_id": device.id, "device_secret": secret, "name": device.name }));
    *answer.status_mut() = StatusCode::CREATED;
    Ok(answer)
}

pub async fn waiting(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let device = device(&state, &realm, &headers, &Form::default()).await?;
    let now = to_millis(state.clock.now());
    let requests = store::pending_for(state.store.pool(), &device.user_id, now).await?;
    let listed: Vec<serde_json::Value> = requests
        .iter()
        .map(|r| {
            json!({
                "push_request_id": r.id,
                "client_id": r.client_id,
                "ip_address": r.ip_address,
                "created_at": iso(from_millis(r.created_at)),
                "expires_at": iso(from_millis(r.expires_at)),
            })
        })
        .collect();
    Ok(json_no_store(json!({ "requests": listed })))
}

pub async fn answer(
    State(state): State<AppState>,
    Path((realm_id, request_id)): Path<(String, String)>,
    headers: HeaderMap,
    form: Form,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let device = device(&state, &realm, &headers, &form).await?;
    let (to, outcome) = match form.require("decision")? {
        "approve" => (RequestStatus::Approved, Outcome::Succeeded),
        "refuse" => (RequestStatus::Refused, Outcome::RefusedOnPhone),
        _ => return Err(OAuthError::invalid_request("InvalidDecision", "decision is approve or refuse")),
    };
    let now = to_millis(state.clock.now());
    let pool = state.store.pool();
    let gone =
        || OAuthError::new(StatusCode::NOT_FOUND, "invalid_request", "PushRequestUnknown", "no such request waiting");
    let request = store::find_request(pool, &request_id)
        .await?
        .filter(|r| r.user_id == device.user_id && r.status == RequestStatus::Pending && r.expires_at > now)
        .ok_or_else(gone)?;
    let client = crate::tokens::find_client(&state, &realm.id, &request.client_id).await?.ok_or_else(gone)?;
    let user = user_store::find(pool, &realm.id, &device.user_id).await?.ok_or_else(gone)?;
    // The phone's answer counts for the account, from the address the sign-in came from.
    let seen = Seen {
        realm_id: &realm.id,
        kind: AttemptKind::PushAnswer,
        outcome,
        source: &request.ip_address,
        account: &user.id,
        account_known: true,
        approved: false,
    };
    let decision = state.protection.judge(&state.store, &seen, now).await?;
    let mut tx = state.store.begin().await?;
    if !store::transition(&mut *tx, &request.id, RequestStatus::Pending, to, Some(&device.id), now).await? {
        return Err(gone());
    }
    let mut letters = Vec::new();
    if let Some(decision) = &decision {
        let attack = Attack { realm: &realm, client: &client, user: Some(&user), address: &request.ip_address };
        letters = incidents::record(&state, &mut tx, &attack, decision, now).await?.letters;
    }
    tx.commit().await?;
    send_letters(&state, letters);
    Ok(json_no_store(json!({ "push_request_id": request.id, "status": to.as_str() })))
}

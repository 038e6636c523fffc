//! Sign-in requests pushed to phones, the third flow attack protection watches. The sign-in side (asking, collecting the answer) is
//! `crate::oauth::signin::push`; this is the phone's side and the grant's name.
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

use super::{Form, OAuthError, json_no_store, realm};
use crate::http::AppState;
use crate::kernel::clock::iso;
use crate::kernel::crypto::generate_secret;
use crate::kernel::ids::DeviceId;
use crate::oauth::signin::{self, push::Decision};
use crate::runtime::error::OAuthCode;
use crate::store::push::{self as store, Device};
use crate::store::realms::Realm;

const DEVICE_SECRET_PREFIX: &str = "cstl_dev_";
/// The most phones one account enrolls.
const MAX_DEVICES: usize = 10;

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
    let needed = "a person's access token is required";
    let request = ("POST", "/account/push-devices");
    let (user, _) = super::discovery::bearer_person(&state, &realm.id, &headers, request, needed).await?;
    let name = form.require("name")?;
    if name.chars().count() > 100 {
        return Err(OAuthError::new(OAuthCode::InvalidName, "name is at most 100 characters"));
    }
    if store::devices_of(state.store.pool(), &user.id).await?.len() >= MAX_DEVICES {
        return Err(OAuthError::new(OAuthCode::TooManyDevices, "an account enrolls at most 10 phones"));
    }
    let secret = generate_secret(DEVICE_SECRET_PREFIX);
    let device = Device {
        id: DeviceId::fresh(),
        realm_id: realm.id.clone(),
        user_id: user.id.clone(),
        name: name.to_owned(),
        secret_hash: state.hasher.hash(&secret),
        push_token: form.get("push_token").map(str::to_owned),
        created_at: state.clock.now(),
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
    let now = state.clock.now();
    let requests = store::pending_for(state.store.pool(), &device.user_id, now).await?;
    let listed: Vec<serde_json::Value> = requests
        .iter()
        .map(|r| {
            json!({
                "push_request_id": r.id,
                "client_id": r.client_id,
                "ip_address": r.ip_address,
                "created_at": iso(r.created_at),
                "expires_at": iso(r.expires_at),
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
    let decision = match form.require("decision")? {
        "approve" => Decision::Approve,
        "refuse" => Decision::Refuse,
        _ => return Err(OAuthError::new(OAuthCode::InvalidDecision, "decision is approve or refuse")),
    };
    let status = signin::push::answer(&state, &state.protection, &realm, &device, &request_id, decision).await?;
    Ok(json_no_store(json!({ "push_request_id": request_id, "status": status.as_str() })))
}

//! The receiving side of capture endpoints: `{public_url}/captures/{token}` (and any path below it)
//! records every request, whatever its method, while the capture lasts. The random token is the
//! only protection, as for any webhook receiver address.

use std::collections::HashMap;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, Method};
use axum::response::Response;
use serde_json::{Map, Value, json};

use crate::http::AppState;
use crate::http::address::ClientAddress;
use crate::http::envelope;
use crate::kernel::error_code::ErrorCode;
use crate::kernel::ids::new_guid;
use crate::operations::webhooks::captures::{MAX_BODY_BYTES, MAX_REQUESTS};
use crate::runtime::error::Error;
use crate::store::captures::{self as store, CapturedRequest};

/// Records a request sent to the capture's address or to a path below it.
pub async fn receive(
    State(state): State<AppState>,
    Extension(ClientAddress(source)): Extension<ClientAddress>,
    Path(segments): Path<HashMap<String, String>>,
    method: Method,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Error> {
    let body = body.map_err(|rejection| match rejection.status() {
        axum::http::StatusCode::PAYLOAD_TOO_LARGE => Error::PayloadTooLarge { limit: state.settings.max_body_bytes },
        _ => Error::Internal(anyhow::anyhow!("the body could not be read: {}", rejection.body_text())),
    })?;
    let token = segments.get("token").map_or("", String::as_str);
    let path = segments.get("rest").cloned().unwrap_or_default();
    let now = state.clock.now();
    let capture = store::find_by_token(state.store.pool(), token, now).await?.ok_or(Error::NotFound("capture"))?;
    let mut fields = Map::new();
    for name in headers.keys() {
        let values: Vec<String> =
            headers.get_all(name).iter().map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned()).collect();
        fields.insert(name.as_str().to_owned(), Value::String(values.join(", ")));
    }
    let kept = &body[..body.len().min(MAX_BODY_BYTES)];
    let request = CapturedRequest {
        id: new_guid(),
        capture_id: capture.id,
        method: method.as_str().to_owned(),
        path,
        query,
        headers: Value::Object(fields).to_string(),
        // Kept as text, the same on every backend: PostgreSQL stores no U+0000 in text.
        body: String::from_utf8_lossy(kept).replace('\0', "\u{FFFD}"),
        body_size: body.len() as i64,
        source_ip: source.to_string(),
        received_at: now,
    };
    if !store::record(&state.store, &request, MAX_REQUESTS).await? {
        return Err(Error::InvalidState(
            ErrorCode::CaptureFull,
            format!("the capture already holds {MAX_REQUESTS} requests; create another one"),
        ));
    }
    Ok(envelope::ok(json!({ "requestId": request.id })))
}

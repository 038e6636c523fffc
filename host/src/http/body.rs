//! JSON request bodies: size limit (413 in the envelope), media type, then field-by-field reading.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{StatusCode, header};

use crate::http::AppState;
use crate::kernel::validate::Body;
use crate::runtime::error::Error;

/// A JSON object body, ready to be read field by field.
pub struct JsonBody(pub Body);

impl FromRequest<AppState> for JsonBody {
    type Rejection = Error;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Error> {
        let is_json = request.headers().get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).map(|value| {
            let essence = value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            essence == "application/json" || essence.ends_with("+json")
        });
        let bytes = Bytes::from_request(request, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                Error::PayloadTooLarge { limit: state.settings.max_body_bytes }
            } else {
                Error::invalid("", crate::kernel::validate::Rule::Json, rejection.body_text())
            }
        })?;
        if is_json == Some(false) && !bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(Error::UnsupportedMediaType);
        }
        Ok(Body::parse(&bytes).map(JsonBody)?)
    }
}

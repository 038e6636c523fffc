//! Members of groups and organizations: listed, added and removed the same way for both.

use axum::response::Response;
use serde_json::Value;
use utoipa::ToSchema;

use crate::directory::members::{self, Owner};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::envelope;
use crate::kernel::validate::{Body, Notification, Refusals, Rule, text};
use crate::runtime::error::Error;
use crate::store::memberships;

/// A person to add to a group or an organization.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct MembershipInput {
    /// The id of a person of the realm.
    user_id: String,
}

impl MembershipInput {
    fn read(body: &mut Body) -> Option<Self> {
        Some(Self { user_id: body.required("userId", guid)? })
    }
}

fn guid(path: &str, value: &Value) -> Result<String, Refusals> {
    let id = text(1, 64)(path, value)?;
    if uuid::Uuid::parse_str(&id).is_err() {
        return Err(vec![Notification::new(path, Rule::Format, format!("{path} must be a GUID"))]);
    }
    Ok(id)
}

/// The ids of the members, in the order they joined.
pub async fn list(state: &AppState, owner: Owner<'_>) -> Result<Response, Error> {
    Ok(envelope::ok(memberships::members(state.store.pool(), owner.kind, owner.id).await?))
}

/// Adds the person the body names by `userId`, who must be a person of the realm; their id.
pub async fn add(state: &AppState, caller: &Caller, owner: Owner<'_>, mut body: Body) -> Result<String, Error> {
    let input = MembershipInput::read(&mut body);
    body.finish()?;
    let Some(MembershipInput { user_id }) = input else {
        return Err(Error::invalid("userId", Rule::Required, "userId is required"));
    };
    members::add(state, owner, &user_id, caller.author()).await?;
    Ok(user_id)
}

/// Removes the person.
pub async fn remove(state: &AppState, caller: &Caller, owner: Owner<'_>, user_id: &str) -> Result<Response, Error> {
    members::remove(state, owner, user_id, caller.author()).await?;
    Ok(envelope::done())
}

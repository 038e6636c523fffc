//! The admin operations on the members of groups and organizations: listed, added and removed the
//! same way for both.

use crate::authz::caller::Caller;
use crate::directory::members::MembershipInput;
use crate::directory::members::{self, Owner};
use crate::directory::reach::Admin;
use crate::kernel::validate::{Body, Rule};
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::memberships;

/// The ids of the members, in the order they joined.
pub async fn list(admin: &Admin<'_>, owner: Owner<'_>) -> Result<Answer<Vec<String>>, Error> {
    Ok(Answer::Ok(memberships::members(admin.store.pool(), owner.kind, owner.id).await?))
}

/// Adds the person the body names by `userId`, who must be a person of the realm; their id.
pub async fn add(admin: &Admin<'_>, caller: &Caller, owner: Owner<'_>, mut body: Body) -> Result<String, Error> {
    let input = MembershipInput::read(&mut body);
    body.finish()?;
    let Some(MembershipInput { user_id }) = input else {
        return Err(Error::invalid("userId", Rule::Required, "userId is required"));
    };
    members::add(admin, owner, &user_id, caller.author()).await?;
    Ok(user_id)
}

/// Removes the person.
pub async fn remove(admin: &Admin<'_>, caller: &Caller, owner: Owner<'_>, user_id: &str) -> Result<Answer<()>, Error> {
    members::remove(admin, owner, user_id, caller.author()).await?;
    Ok(Answer::Done)
}

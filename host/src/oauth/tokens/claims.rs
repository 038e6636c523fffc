//! Claims a client maps from a person's data into its tokens: an attribute, the names of the
//! person's realm roles, groups or organizations, or a fixed value, each under a name of the
//! client's choosing that is never one the service itself sets. A delegated token carries the
//! claims the client the person signed in to maps, never those of the acting client, so an agent
//! cannot add to what a token says of the person.

use serde_json::{Map, Value, json};

use super::{Grant, Subject, find_client, person_roles};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::clients::{ClaimMapper, ClaimSource, Client};
use crate::store::memberships::{self, Membership};
use crate::store::users::User;

pub use crate::directory::claim_mappers::RESERVED;

/// Which token the claims are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    Access,
    Id,
}

fn attribute(user: &User, name: &str) -> Value {
    match name {
        "username" => json!(user.username),
        "email" => json!(user.email),
        "emailConfirmed" => json!(user.email_confirmed),
        "firstName" => json!(user.first_name),
        "lastName" => json!(user.last_name),
        _ => Value::Null,
    }
}

async fn value_of(context: &Context, mapper: &ClaimMapper, user: &User) -> Result<Value, Error> {
    Ok(match mapper.source {
        ClaimSource::Attribute => attribute(user, mapper.attribute.as_deref().unwrap_or_default()),
        ClaimSource::Fixed => json!(mapper.value),
        ClaimSource::Roles => {
            let roles = person_roles(context, user).await?;
            json!(roles.iter().filter(|r| r.client_id.is_none()).map(|r| r.name.clone()).collect::<Vec<_>>())
        }
        ClaimSource::Groups => {
            json!(memberships::names_of_user(context.store.pool(), Membership::Group, &user.id).await?)
        }
        ClaimSource::Organizations => {
            json!(memberships::names_of_user(context.store.pool(), Membership::Organization, &user.id).await?)
        }
    })
}

/// The claims `client`'s mappers give `user` in `token`; a value the person lacks is left out.
pub async fn mapped(
    context: &Context,
    client: &Client,
    user: &User,
    token: Token,
) -> Result<Map<String, Value>, Error> {
    let mut claims = Map::new();
    for mapper in &client.claim_mappers.0 {
        let wanted = match token {
            Token::Access => mapper.access_token,
            Token::Id => mapper.id_token,
        };
        if !wanted || RESERVED.contains(&mapper.claim.as_str()) {
            continue;
        }
        let value = value_of(context, mapper, user).await?;
        if !value.is_null() {
            claims.insert(mapper.claim.clone(), value);
        }
    }
    Ok(claims)
}

/// The mapped claims of an access token for `grant`: a person's (signed in, impersonated, or
/// delegated, by the client they signed in to); none for a client's own token.
pub async fn of_grant(context: &Context, grant: &Grant<'_>) -> Result<Map<String, Value>, Error> {
    match grant.subject {
        Subject::Person { user, .. } | Subject::Impersonated { user, .. } => {
            mapped(context, grant.client, user, Token::Access).await
        }
        Subject::Delegated { user, signed_in_to, .. } => {
            match find_client(context, &grant.client.realm_id, signed_in_to).await? {
                Some(signed_in_to) => mapped(context, &signed_in_to, user, Token::Access).await,
                None => Ok(Map::new()),
            }
        }
        Subject::Client | Subject::AccountSecret { .. } => Ok(Map::new()),
    }
}

//! The admin operations on a realm's resource servers: the APIs its tokens are for.

use crate::directory::listing::ListQuery;
use crate::directory::reach::Admin;
use crate::directory::reach::{Found, InRealm, RealmRead, RealmUpdate};
use crate::directory::resource_servers;
use crate::directory::resource_servers::{ResourceServerInput, ResourceServerView};
use crate::kernel::ids::ResourceServerId;
use crate::kernel::validate::{Body, Rule, one_of};
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::resource_servers::{self as server_store, ResourceServer, ServerKind};

/// `POST /realms/{realm}/resource-servers`: the created resource server.
pub async fn create(
    admin: &Admin<'_>,
    InRealm { realm, caller, .. }: InRealm<RealmUpdate>,
    mut body: Body,
) -> Result<Answer<ResourceServerView>, Error> {
    let now = admin.clock.now();
    let kind = body.optional("type", one_of(ServerKind::NAMES)).unwrap_or(ServerKind::Api);
    let mut server = ResourceServer {
        id: ResourceServerId::fresh(),
        realm_id: realm.id.clone(),
        name: String::new(),
        address: String::new(),
        kind,
        scopes: Vec::new(),
        allowed_clients: Vec::new(),
        accepts_self_registered: false,
        client_id: None,
        status: Status::Active,
        created_at: now,
        updated_at: now,
    };
    for required in ["name", "address"] {
        if !body.has(required) {
            body.refuse(required, Rule::Required, format!("{required} is required"));
        }
    }
    let input = ResourceServerInput { kind: Some(kind), ..ResourceServerInput::read(&mut body) };
    body.finish()?;
    input.apply(&mut server);
    let server = resource_servers::create(admin, &realm, server, caller.author()).await?;
    Ok(Answer::Created(ResourceServerView::of(&server)))
}

/// `GET /realms/{realm}/resource-servers`: a page of the realm's resource servers.
pub async fn list(
    admin: &Admin<'_>,
    InRealm { realm, .. }: InRealm<RealmRead>,
    query: Option<String>,
) -> Result<Answer<ResourceServerView>, Error> {
    let list = ListQuery::parse(query, &[])?;
    list.status_in(crate::store::Status::NAMES)?;
    let found = server_store::page(&admin.store, &realm.id, &list.page).await?;
    Ok(Answer::Paged(found.map(|server| ResourceServerView::of(&server))))
}

/// `PUT /realms/{realm}/resource-servers/{serverId}`.
pub async fn update(
    admin: &Admin<'_>,
    Found { realm, item: before, caller, .. }: Found<ResourceServer, RealmUpdate>,
    mut body: Body,
) -> Result<Answer<ResourceServerView>, Error> {
    let mut server = before.clone();
    body.unchanged("id", &server.id);
    body.unchanged("type", server.kind.as_str());
    let input = ResourceServerInput::read(&mut body);
    body.finish()?;
    input.apply(&mut server);
    let server = resource_servers::update(admin, &realm, &before, server, caller.author()).await?;
    Ok(Answer::Ok(ResourceServerView::of(&server)))
}

/// `GET /realms/{realm}/resource-servers/{serverId}`.
pub fn read(Found { item: server, .. }: Found<ResourceServer, RealmRead>) -> Result<Answer<ResourceServerView>, Error> {
    Ok(Answer::Ok(ResourceServerView::of(&server)))
}

/// `DELETE /realms/{realm}/resource-servers/{serverId}`: deleted.
pub async fn delete(
    admin: &Admin<'_>,
    Found { item: server, caller, .. }: Found<ResourceServer, RealmUpdate>,
) -> Result<Answer<()>, Error> {
    resource_servers::delete(admin, &server, caller.author()).await?;
    Ok(Answer::Done)
}

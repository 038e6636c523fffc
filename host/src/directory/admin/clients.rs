//! The admin operations on a realm's clients: create one with its first key, change it, delete
//! it, rotate its secret.

use crate::directory;
use crate::directory::clients::{ClientInput, ClientView, RotatedClientSecret};
use crate::directory::listing::ListQuery;
use crate::directory::reach::Admin;
use crate::directory::reach::ClientDelete;
use crate::directory::reach::{ClientCreate, ClientRead, ClientUpdate, InClient, InRealm};
use crate::directory::rotation::Rotation;
use crate::kernel::clock::iso;
use crate::kernel::crypto::last_four;
use crate::kernel::ids::ClientId;
use crate::kernel::validate::{Body, Rule, one_of, parsed};
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::clients::{self as client_store, Client, ClientType, Registration};

/// `POST /realms/{realm}/clients`: the created client with `clientSecret` (shown once).
pub async fn create(
    admin: &Admin<'_>,
    InRealm { realm, caller, .. }: InRealm<ClientCreate>,
    mut body: Body,
) -> Result<Answer<ClientView>, Error> {
    let now = admin.clock.now();
    let id = body.required("id", parsed(ClientId::parse));
    let client_type = body.optional("type", one_of(ClientType::NAMES));
    let mut client = Client::new(&realm.id, "", client_type.unwrap_or(ClientType::Confidential), now);
    client.name = String::new();
    let input = ClientInput { id, client_type, ..ClientInput::read(&mut body, &client) };
    body.finish()?;
    let Some(id) = input.id.clone() else { return Err(Error::invalid("id", Rule::Required, "id is required")) };
    input.apply(&mut client);
    let scopes = client.allowed_scopes.clone();
    crate::directory::scopes::check_exist(
        admin,
        &realm.account_id,
        &realm.id,
        &scopes,
        "clientConfiguration.allowedScopes",
    )
    .await?;
    client.id = id;
    if client.name.is_empty() {
        client.name = client.id.to_string();
    }
    let tx = admin.store.begin().await?;
    let created =
        directory::clients::create(admin, tx, client, caller.author(), |client| ClientView::of(client, now)).await?;
    let mut view = ClientView::of(&created.client, now);
    view.client_secret = created.secret;
    Ok(Answer::Created(view))
}

/// `GET /realms/{realm}/clients`: a page of the realm's clients.
pub async fn list(
    admin: &Admin<'_>,
    InRealm { realm, .. }: InRealm<ClientRead>,
    query: Option<String>,
) -> Result<Answer<ClientView>, Error> {
    let list = ListQuery::parse(query, &["registration"])?;
    list.status_in(crate::store::Status::NAMES)?;
    let registration = match list.filter("registration") {
        None => None,
        Some(name) => match Registration::NAMES.iter().find(|(known, _)| *known == name) {
            Some((_, registration)) => Some(*registration),
            None => {
                return Err(Error::invalid(
                    "registration",
                    Rule::OneOf,
                    "registration must be Admin, Dynamic or MetadataDocument",
                ));
            }
        },
    };
    let now = admin.clock.now();
    let found = client_store::page(&admin.store, &realm.id, registration, &list.page).await?;
    Ok(Answer::Paged(found.map(|client| ClientView::of(&client, now))))
}

/// `GET /realms/{realm}/clients/{client}`: the client.
pub async fn read(
    admin: &Admin<'_>,
    InClient { client, .. }: InClient<ClientRead>,
) -> Result<Answer<ClientView>, Error> {
    Ok(Answer::Ok(ClientView::of(&client, admin.clock.now())))
}

/// `PUT /realms/{realm}/clients/{client}`: the updated client.
pub async fn update(
    admin: &Admin<'_>,
    InClient { client: before, caller, .. }: InClient<ClientUpdate>,
    mut body: Body,
) -> Result<Answer<ClientView>, Error> {
    let mut client = before.clone();
    body.unchanged("id", &client.id);
    body.unchanged("type", client.client_type.as_str());
    body.unchanged("registration", client.registration.as_str());
    let input = ClientInput::read(&mut body, &client);
    body.finish()?;
    input.apply(&mut client);
    if client.allowed_scopes != before.allowed_scopes {
        let account = caller.account_id().to_owned();
        let scopes = client.allowed_scopes.clone();
        crate::directory::scopes::check_exist(
            admin,
            &account,
            &client.realm_id,
            &scopes,
            "clientConfiguration.allowedScopes",
        )
        .await?;
    }
    let now = admin.clock.now();
    let client =
        directory::clients::update(admin, &before, client, caller.author(), |c| ClientView::of(c, now)).await?;
    Ok(Answer::Ok(ClientView::of(&client, now)))
}

/// `POST /realms/{realm}/clients/{client}/client-secret/rotate`: the new secret (shown once) and
/// `rotation`.
pub async fn rotate_secret(
    admin: &Admin<'_>,
    InClient { client: before, caller, .. }: InClient<ClientUpdate>,
    body: Body,
) -> Result<Answer<RotatedClientSecret>, Error> {
    let now = admin.clock.now();
    let rotation = Rotation::read(body, now)?;
    let describe = |client: &Client| ClientView::of(client, now);
    let (_, secret) = directory::clients::rotate_secret(admin, &before, &rotation, caller.author(), describe).await?;
    Ok(Answer::Ok(RotatedClientSecret {
        client_secret_last_four: last_four(&secret),
        client_secret: secret,
        client_secret_rotated_at: iso(now),
        rotation: rotation.view(),
    }))
}

/// `DELETE /realms/{realm}/clients/{client}`: deleted.
pub async fn delete(
    admin: &Admin<'_>,
    InClient { client, caller, .. }: InClient<ClientDelete>,
) -> Result<Answer<()>, Error> {
    let now = admin.clock.now();
    directory::clients::delete(admin, &client, caller.author(), |c| ClientView::of(c, now)).await?;
    Ok(Answer::Done)
}

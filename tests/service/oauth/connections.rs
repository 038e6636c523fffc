//! Connected accounts and the token vault: a person connects an account at a connection provider
//! through the browser (an authorization request with `connect`); a resource server, authenticated
//! as the client that represents it, exchanges the person's token addressed to it for the
//! account's upstream token (RFC 8693), renewed when it expired, refused once the connection is
//! gone or revoked upstream, and never with the upstream refresh token; nothing of it raises a
//! sign-in event. The provider is a scripted OAuth 2.0 server on loopback that rotates refresh
//! tokens.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::oauth::browser::{Browser, Page, REDIRECT, VERIFIER, challenge, exchange, realm_with_clients, request};
use crate::support::upstreams::{ScriptedProvider, trust_loopback};
use crate::support::{Answer, TestApp, TestClient, created_id, spawn_with};

const CALENDAR_API: &str = "https://calendar-api.example";
const EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN: &str = "urn:ietf:params:oauth:token-type:access_token";
const CONNECTION_TOKEN: &str = "urn:castellan:params:oauth:token-type:connection-access-token";

struct Setup {
    app: TestApp,
    web: TestClient,
    api: TestClient,
    upstream: ScriptedProvider,
    server_id: String,
}

/// Realm `acme` with ada, the web client, the calendar API (a resource server the web client may
/// ask tokens for, represented by the client `calendar-api`) and the connection provider
/// `calendar`, which the API may exchange for.
async fn setup() -> Setup {
    let app = spawn_with(crate::support::TestDatabase::new().await, trust_loopback).await;
    let (web, _) = realm_with_clients(&app).await;
    let api = app.create_client("acme", "calendar-api", &["client_credentials"], &[]).await;
    let server = json!({ "name": "Calendar API", "address": CALENDAR_API, "scopes": ["orders:read"],
                         "allowedClients": ["web"], "clientId": "calendar-api" });
    let server_id = created_id(&app, "/realms/acme/resource-servers", server).await;
    let upstream = ScriptedProvider::start(&app, json!({})).await;
    upstream.plain_oauth();
    upstream.refreshing();
    let provider = json!({
        "id": "calendar", "displayName": "Calendar", "clientId": "acme-at-calendar", "clientSecret": "calendar-secret-4321",
        "authorizationUrl": format!("{}/authorize", upstream.base), "tokenUrl": format!("{}/token", upstream.base),
        "scopes": ["calendar.read"], "resourceServers": [server_id],
    });
    let created = app.post("/realms/acme/connection-providers", provider).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let callback = format!("{}/realms/acme/connections/calendar/callback", app.state.public_url);
    assert_eq!(created.data()["redirectUri"], callback.as_str(), "the address to register at the provider");
    assert_eq!(created.data()["clientSecretLastFour"], "4321");
    Setup { app, web, api, upstream, server_id }
}

/// The web client's authorization request for the calendar API, with these extra parameters.
async fn authorize(browser: &mut Browser, extra: &[(&str, &str)]) -> Page {
    let pkce = challenge(VERIFIER);
    let mut params = request("web", "s-1", "n-1", &pkce);
    params.push(("resource", CALENDAR_API));
    params.extend_from_slice(extra);
    browser.authorize("acme", &params).await
}

/// Follows redirects through the provider and back until the answer to the client.
async fn through_provider(browser: &mut Browser, mut page: Page) -> Page {
    while page.status == StatusCode::SEE_OTHER && !page.location.as_ref().unwrap().as_str().starts_with(REDIRECT) {
        page = browser.open(page.location.as_ref().unwrap().as_str()).await;
    }
    page
}

/// Ada signs in at the web client and connects her calendar; her access token for the API.
async fn connect(setup: &Setup, browser: &mut Browser, signed_in: bool) -> String {
    let page = authorize(browser, &[("connect", "calendar")]).await;
    let sent = if signed_in { page } else { browser.sign_in("acme", &page, "ada", "analytical engine").await };
    let answer = through_provider(browser, sent).await;
    assert!(answer.next().is_some_and(|next| next.as_str().starts_with(REDIRECT)), "{}", answer.body);
    let code = answer.param("code").unwrap_or_else(|| panic!("a code: {:?}", answer.next()));
    let tokens = exchange(&setup.app, &setup.web, &code, VERIFIER).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    tokens.body["access_token"].as_str().unwrap().to_owned()
}

/// The calendar API exchanges `subject` for ada's calendar token.
async fn vault(setup: &Setup, subject: &str) -> Answer {
    let form = [
        ("grant_type", EXCHANGE),
        ("subject_token", subject),
        ("subject_token_type", ACCESS_TOKEN),
        ("requested_token_type", CONNECTION_TOKEN),
        ("connection", "calendar"),
    ];
    setup.app.token(&setup.api, &form).await
}

fn refused(answer: &Answer, error: &str, code: &str) {
    assert_eq!(
        (answer.body["error"].as_str(), answer.body["error_code"].as_str()),
        (Some(error), Some(code)),
        "{:?}",
        answer.body
    );
}

async fn sign_in_events(app: &TestApp) -> usize {
    app.events("login_succeeded").await.len() + app.events("login_failed").await.len()
}

#[tokio::test]
async fn a_connected_accounts_token_is_exchanged_refreshed_when_expired_and_refused_once_removed() {
    let setup = setup().await;
    let app = &setup.app;
    let mut browser = Browser::new(app);
    let subject = connect(&setup, &mut browser, false).await;
    let sent = setup.upstream.last_request();
    assert_eq!((sent["scope"].as_str(), sent["code_challenge_method"].as_str()), ("calendar.read", "S256"));

    let ada = app.get("/realms/acme/users?searchTerm=ada").await.items()[0]["id"].as_str().unwrap().to_owned();
    let listed = app.get(&format!("/realms/acme/users/{ada}/connections")).await;
    let connection = &listed.items()[0];
    assert_eq!((&connection["providerId"], &connection["status"]), (&json!("calendar"), &json!("Active")));
    assert_eq!(connection["scopes"], json!(["calendar.read"]));
    assert!(!listed.body.to_string().contains("at-") && !listed.body.to_string().contains("rt-"), "no token shown");
    let store = app.database().await;
    let (sealed,): (String,) =
        sqlx::query_as("SELECT access_token FROM connections").fetch_one(store.pool()).await.unwrap();
    assert!(!sealed.starts_with("at-"), "sealed at rest");

    let events = sign_in_events(app).await;
    let given = vault(&setup, &subject).await;
    assert_eq!(given.status, StatusCode::OK, "{:?}", given.body);
    assert_eq!(given.body["access_token"], json!(setup.upstream.last_access_token()));
    assert_eq!((&given.body["issued_token_type"], &given.body["token_type"]), (&json!(ACCESS_TOKEN), &json!("Bearer")));
    assert!(given.body.get("refresh_token").is_none(), "the upstream refresh token never leaves");
    let first = given.body["access_token"].clone();

    // A minute later the upstream token has expired: it is renewed first, its refresh token rotated.
    app.advance(61).await;
    let renewed = vault(&setup, &subject).await;
    assert_eq!(renewed.status, StatusCode::OK, "{:?}", renewed.body);
    assert_ne!(renewed.body["access_token"], first, "a new upstream token");
    assert_eq!(renewed.body["access_token"], json!(setup.upstream.last_access_token()));
    let read = app.get(&format!("/realms/acme/connections/{}", connection["id"].as_str().unwrap())).await;
    assert!(read.data()["lastUsedAt"].is_string(), "{:?}", read.body);

    // The person removes it with their own token: the exchange finds nothing.
    let url = format!("{}/realms/acme/account/connections", app.base);
    let own = app.http.get(&url).bearer_auth(&subject).send().await.unwrap().json::<Value>().await.unwrap();
    assert_eq!(own["connections"][0]["provider_id"], "calendar");
    let id = own["connections"][0]["id"].as_str().unwrap();
    let removed = app.http.delete(format!("{url}/{id}")).bearer_auth(&subject).send().await.unwrap();
    assert_eq!(removed.status(), StatusCode::NO_CONTENT);
    refused(&vault(&setup, &subject).await, "invalid_grant", "ConnectionMissing");
    assert_eq!(sign_in_events(app).await, events, "the exchanges raised no sign-in event");

    let trail = app.get("/realms/acme/delegation-exchanges").await;
    let outcomes: Vec<(&str, &str)> = trail
        .items()
        .iter()
        .map(|row| (row["outcome"].as_str().unwrap(), row["connectionProvider"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(outcomes.iter().filter(|(o, p)| *o == "Granted" && *p == "calendar").count(), 2, "{outcomes:?}");
    assert_eq!(outcomes.iter().filter(|(o, p)| *o == "Refused" && *p == "calendar").count(), 1, "{outcomes:?}");
}

#[tokio::test]
async fn a_connection_revoked_upstream_or_removed_by_an_administrator_is_refused() {
    let setup = setup().await;
    let app = &setup.app;
    let mut browser = Browser::new(app);
    let subject = connect(&setup, &mut browser, false).await;
    setup.upstream.revoke_refresh_tokens();
    app.advance(61).await;
    refused(&vault(&setup, &subject).await, "invalid_grant", "ConnectionRevoked");
    let listed = app.get("/realms/acme/connections?providerId=calendar").await;
    assert_eq!(listed.items()[0]["status"], "Revoked", "the person must connect again");

    // Connecting again (signed in already: straight to the provider) makes it Active again.
    let subject = connect(&setup, &mut browser, true).await;
    assert_eq!(vault(&setup, &subject).await.status, StatusCode::OK);
    let id = app.get("/realms/acme/connections").await.items()[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(app.get("/realms/acme/connections").await.items().len(), 1, "one connection per person and provider");
    assert_eq!(app.delete(&format!("/realms/acme/connections/{id}")).await.status, StatusCode::OK);
    refused(&vault(&setup, &subject).await, "invalid_grant", "ConnectionMissing");
    let deleted = app.events("admin_resource_deleted").await;
    assert!(deleted.iter().any(|(_, _, data)| data["resource_type"] == "connection"), "announced");
}

#[tokio::test]
async fn an_exchange_is_refused_to_a_server_the_provider_does_not_allow_and_for_a_token_not_addressed_to_it() {
    let setup = setup().await;
    let app = &setup.app;
    let mut browser = Browser::new(app);
    let subject = connect(&setup, &mut browser, false).await;
    refused(&vault(&setup, "not-a-token").await, "invalid_request", "ConnectionSubjectTokenInactive");

    // Ada's token for the web client itself is not addressed to the calendar API.
    let mut other = Browser::new(app);
    let pkce = challenge(VERIFIER);
    let page = other.authorize("acme", &request("web", "s-2", "n-2", &pkce)).await;
    let answer = other.sign_in("acme", &page, "ada", "analytical engine").await;
    let tokens = exchange(app, &setup.web, &answer.param("code").unwrap(), VERIFIER).await;
    let elsewhere = tokens.body["access_token"].as_str().unwrap();
    refused(&vault(&setup, elsewhere).await, "unauthorized_client", "ConnectionNotAllowed");

    // The web client represents no resource server.
    let form = [
        ("grant_type", EXCHANGE),
        ("subject_token", subject.as_str()),
        ("subject_token_type", ACCESS_TOKEN),
        ("requested_token_type", CONNECTION_TOKEN),
        ("connection", "calendar"),
    ];
    refused(&app.token(&setup.web, &form).await, "unauthorized_client", "ConnectionNotAllowed");

    let unknown = [
        ("grant_type", EXCHANGE),
        ("subject_token", subject.as_str()),
        ("subject_token_type", ACCESS_TOKEN),
        ("requested_token_type", CONNECTION_TOKEN),
        ("connection", "mail"),
    ];
    refused(&app.token(&setup.api, &unknown).await, "invalid_request", "ConnectionProviderUnknown");

    let closed = app.put("/realms/acme/connection-providers/calendar", json!({ "resourceServers": [] })).await;
    assert_eq!(closed.status, StatusCode::OK, "{:?}", closed.body);
    refused(&vault(&setup, &subject).await, "unauthorized_client", "ConnectionNotAllowed");
    let reopened = json!({ "resourceServers": [setup.server_id] });
    assert_eq!(app.put("/realms/acme/connection-providers/calendar", reopened).await.status, StatusCode::OK);
    assert_eq!(vault(&setup, &subject).await.status, StatusCode::OK);
}

#[tokio::test]
async fn connection_providers_are_checked_and_their_secret_is_never_shown() {
    let app = spawn_with(crate::support::TestDatabase::new().await, trust_loopback).await;
    app.create_realm("acme").await;
    let bare =
        app.post("/realms/acme/connection-providers", json!({ "id": "Mail!", "resourceServers": ["nope"] })).await;
    let fields: Vec<String> = bare.refused_fields().into_iter().map(|(field, _)| field).collect();
    for field in ["id", "clientId", "authorizationUrl", "tokenUrl"] {
        assert!(fields.contains(&field.to_owned()), "{field} refused: {fields:?}");
    }
    let good = json!({ "id": "mail", "clientId": "c", "clientSecret": "s-very-secret-0000",
                       "discoveryUrl": "https://mail.example/.well-known/openid-configuration", "resourceServers": ["nope"] });
    let unknown = app.post("/realms/acme/connection-providers", good.clone()).await;
    assert_eq!(unknown.refused_fields(), [("resourceServers[0]".to_owned(), "NotFound".to_owned())]);
    let mut good = good;
    good["resourceServers"] = json!([]);
    let created = app.post("/realms/acme/connection-providers", good).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    assert!(!created.body.to_string().contains("very-secret"));
    assert_eq!(app.get("/realms/acme/connection-providers").await.items().len(), 1);
    assert_eq!(app.delete("/realms/acme/connection-providers/mail").await.status, StatusCode::OK);
    assert_eq!(app.get("/realms/acme/connection-providers/mail").await.status, StatusCode::NOT_FOUND);
}

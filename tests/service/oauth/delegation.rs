//! Delegation: grants written by administrators, token exchange (RFC 8693) under them, the
//! delegated token's claims, withdrawal, organization confinement and the exchange trail.

use chrono::{DateTime, Duration, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{Answer, TestApp, TestClient, claims, created_id, spawn_app, spawn_beside};

const EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN: &str = "urn:ietf:params:oauth:token-type:access_token";
const SCOPES: &[&str] = &["orders:read", "orders:write", "invoices:read"];

/// A realm with a sign-in application (`web`), a person (Ada) and an agent with Token Exchange on.
struct Realm {
    web: TestClient,
    agent: TestClient,
    ada: String,
}

/// A confidential client with Token Exchange enabled.
async fn agent(app: &TestApp, id: &str, scopes: &[&str]) -> TestClient {
    let body = json!({
        "id": id,
        "clientConfiguration": { "grantTypes": ["client_credentials"], "allowedScopes": scopes, "tokenExchangeEnabled": true },
    });
    let created = app.post("/realms/acme/clients", body).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let secret = created.data()["clientSecret"].as_str().unwrap().to_owned();
    TestClient { realm: "acme".into(), id: id.into(), secret }
}

async fn realm(app: &TestApp) -> Realm {
    app.create_realm("acme").await;
    let web = app.create_client("acme", "web", &["password"], SCOPES).await;
    let agent = agent(app, "agent", SCOPES).await;
    let ada = app.create_user("acme", "ada", "analytical engine").await;
    Realm { web, agent, ada }
}

/// Ada's own access token from the sign-in application.
async fn sign_in(app: &TestApp, web: &TestClient, scope: &str) -> String {
    let answer = app
        .token(
            web,
            &[("grant_type", "password"), ("username", "ada"), ("password", "analytical engine"), ("scope", scope)],
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body["access_token"].as_str().unwrap().to_owned()
}

async fn grant(app: &TestApp, body: Value) -> String {
    created_id(app, "/realms/acme/delegation-grants", body).await
}

async fn exchange(app: &TestApp, client: &TestClient, subject: &str, extra: &[(&str, &str)]) -> Answer {
    let mut form = vec![("grant_type", EXCHANGE), ("subject_token", subject), ("subject_token_type", ACCESS_TOKEN)];
    form.extend_from_slice(extra);
    app.token(client, &form).await
}

/// Exchanges and returns the delegated token, failing the test on a refusal.
async fn delegated(app: &TestApp, client: &TestClient, subject: &str, extra: &[(&str, &str)]) -> String {
    let answer = exchange(app, client, subject, extra).await;
    assert_eq!(answer.status, StatusCode::OK, "{} exchanging: {:?}", client.id, answer.body);
    answer.body["access_token"].as_str().unwrap().to_owned()
}

fn assert_refused(answer: &Answer, error: &str, code: &str) {
    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{:?}", answer.body);
    assert_eq!(answer.body["error"], error, "{:?}", answer.body);
    assert_eq!(answer.body["error_code"], code, "{:?}", answer.body);
    assert!(answer.body["error_description"].as_str().is_some_and(|d| !d.is_empty()));
}

async fn introspect(app: &TestApp, client: &TestClient, token: &str) -> Value {
    app.protocol(client, "token/introspect", &[("token", token)]).await.body
}

/// An instant `seconds` after the service's clock reading `iat` (a token's), as ISO 8601.
fn after(iat: &Value, seconds: i64) -> String {
    let at = DateTime::<Utc>::from_timestamp(iat.as_i64().unwrap(), 0).unwrap() + Duration::seconds(seconds);
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The ids of the realm's grants that `query` selects.
async fn listed(app: &TestApp, query: &str) -> Vec<String> {
    let page = app.get(&format!("/realms/acme/delegation-grants?{query}")).await;
    assert_eq!(page.status, StatusCode::OK, "{query}: {:?}", page.body);
    page.items().iter().map(|g| g["id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn grants_are_validated_field_by_field_read_listed_and_never_edited() {
    let app = spawn_app().await;
    let Realm { web, ada, .. } = realm(&app).await;
    let now = claims(&sign_in(&app, &web, "orders:read").await)["iat"].clone();
    app.create_client("acme", "plain", &["client_credentials"], &["orders:read"]).await;
    let initech = created_id(&app, "/realms/acme/organizations", json!({ "name": "Initech" })).await;

    let empty = app.post("/realms/acme/delegation-grants", json!({})).await;
    assert_eq!(empty.error_code(), "ValidationFailed");
    for field in ["clientId", "subjectUserId", "scopes"] {
        assert!(empty.refused_fields().contains(&(field.into(), "Required".into())), "{:?}", empty.body);
    }
    let cases = [
        (json!({ "clientId": "ghost" }), "clientId", "NotFound"),
        (json!({ "clientId": "plain" }), "clientId", "NotEnabled"),
        (json!({ "subjectUserId": "01900000-0000-7000-8000-000000000000" }), "subjectUserId", "NotFound"),
        (json!({ "scopes": [] }), "scopes", "Required"),
        (json!({ "scopes": ["profile"] }), "scopes[0]", "NotFound"),
        (json!({ "maxDepth": 4 }), "maxDepth", "Range"),
        (json!({ "maxDepth": -1 }), "maxDepth", "Range"),
        (json!({ "expiresAt": after(&now, -1) }), "expiresAt", "Range"),
        (json!({ "expiresAt": after(&now, 366 * 86_400) }), "expiresAt", "Range"),
        (json!({ "expiresAt": "tomorrow" }), "expiresAt", "Format"),
        (json!({ "allowedResources": ["https://nowhere.example"] }), "allowedResources[0]", "NotFound"),
        (json!({ "organizationId": "01900000-0000-7000-8000-000000000000" }), "organizationId", "NotFound"),
        (json!({ "organizationId": initech }), "organizationId", "NotFound"),
        (json!({ "colour": "red" }), "colour", "Unknown"),
    ];
    for (change, field, rule) in cases {
        let mut body = json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:read"] });
        for (key, value) in change.as_object().unwrap() {
            body[key] = value.clone();
        }
        let answer = app.post("/realms/acme/delegation-grants", body).await;
        assert_eq!(answer.error_code(), "ValidationFailed", "{field}: {:?}", answer.body);
        assert!(answer.refused_fields().contains(&(field.into(), rule.into())), "{field} {rule}: {:?}", answer.body);
    }
    assert!(app.get("/realms/acme/delegation-grants").await.items().is_empty(), "refusals store nothing");

    let created = app
        .post(
            "/realms/acme/delegation-grants",
            json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:read"], "expiresAt": after(&now, 365 * 86_400) }),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let data = created.data();
    assert_eq!(data["maxDepth"], 0, "only the person's own token by default");
    assert_eq!(data["state"], "Live");
    assert_eq!(data["scopes"], json!(["orders:read"]));
    assert!(data.get("allowedResources").is_none(), "{data}");
    assert_eq!(data["createdBy"]["type"], "Credential");
    assert_eq!(data["withdrawal"], Value::Null);
    let id = data["id"].as_str().unwrap().to_owned();

    let path = format!("/realms/acme/delegation-grants/{id}");
    assert_eq!(app.get(&path).await.data()["id"], id.as_str());
    let edit = app.call_as(&app.key, Method::PUT, &path, Some(json!({ "scopes": ["orders:write"] }))).await;
    assert_eq!(edit.status, StatusCode::METHOD_NOT_ALLOWED, "a grant is never edited");
    assert_eq!(app.get("/realms/acme/delegation-grants/nope").await.status, StatusCode::NOT_FOUND);

    let other =
        grant(&app, json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:write"], "maxDepth": 3 }))
            .await;
    app.post(&format!("/realms/acme/delegation-grants/{other}/withdraw"), json!({ "reason": "no longer needed" }))
        .await;
    assert_eq!(listed(&app, "state=Live").await, [id.as_str()]);
    assert_eq!(listed(&app, "state=Withdrawn").await, [other.as_str()]);
    assert_eq!(listed(&app, "clientId=agent&sortDirection=asc").await, [id.as_str(), other.as_str()]);
    assert!(listed(&app, "clientId=plain").await.is_empty());
    assert_eq!(listed(&app, &format!("subjectUserId={ada}")).await.len(), 2);
    assert_eq!(app.get("/realms/acme/delegation-grants?state=Gone").await.error_code(), "ValidationFailed");
    assert_eq!(listed(&app, "status=Live").await, [id.as_str()], "status, as on every list");
    let bogus = app.get("/realms/acme/delegation-grants?status=Bogus").await;
    assert_eq!(bogus.refused_fields(), vec![("status".to_owned(), "OneOf".to_owned())]);

    app.advance(365 * 86_400).await;
    assert_eq!(listed(&app, "state=Expired").await, [id.as_str()], "a grant whose term passed");
    assert_eq!(app.get(&path).await.data()["state"], "Expired");

    // Writing grants needs write access to the realm; reading, read access.
    let auditor = app.key_with(&["Auditor"], None).await;
    let body = json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:read"] });
    let refused = app.call_as(&auditor, Method::POST, "/realms/acme/delegation-grants", Some(body)).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(app.call_as(&auditor, Method::GET, &path, None).await.status, StatusCode::OK);
    let withdraw = app
        .call_as(&auditor, Method::POST, &format!("{path}/withdraw"), Some(json!({ "reason": "mine to end" })))
        .await;
    assert_eq!(withdraw.status, StatusCode::FORBIDDEN);

    // A deleted client takes its grants along: one created later with its id starts with none.
    assert_eq!(app.delete("/realms/acme/clients/agent").await.status, StatusCode::OK);
    assert!(listed(&app, "clientId=agent").await.is_empty());
    agent(&app, "agent", SCOPES).await;
    assert!(listed(&app, "clientId=agent").await.is_empty());
}

#[tokio::test]
async fn an_exchange_under_a_grant_gives_the_agent_a_narrower_token_for_the_person() {
    let app = spawn_app().await;
    let Realm { web, agent, ada } = realm(&app).await;
    // A role exclusive to the acting client, and a realm role, both held by Ada.
    let assistant = created_id(&app, "/realms/acme/clients/agent/roles", json!({ "name": "assistant" })).await;
    let staff = created_id(&app, "/realms/acme/roles", json!({ "name": "staff" })).await;
    for role in [&assistant, &staff] {
        app.post(&format!("/realms/acme/users/{ada}/roles"), json!({ "roleId": role })).await;
    }
    // A role granted to the agent itself never reaches a delegated token.
    let robot = created_id(&app, "/realms/acme/roles", json!({ "name": "robot" })).await;
    app.post("/realms/acme/clients/agent/granted-roles", json!({ "roleId": robot })).await;
    let id =
        grant(&app, json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:read", "orders:write"] }))
            .await;

    let own = sign_in(&app, &web, "orders:read orders:write invoices:read").await;
    let own_claims = claims(&own);
    let answer = exchange(&app, &agent, &own, &[("scope", "orders:read")]).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(answer.headers["cache-control"], "no-store");
    assert_eq!(answer.body["issued_token_type"], ACCESS_TOKEN);
    assert_eq!(answer.body["token_type"], "Bearer");
    assert_eq!(answer.body["scope"], "orders:read");
    assert!(answer.body.get("refresh_token").is_none(), "no refresh token with a delegated token");
    let token = answer.body["access_token"].as_str().unwrap();
    let delegated = claims(token);
    assert_eq!(delegated["iss"], own_claims["iss"]);
    assert_eq!(delegated["sub"], ada.as_str(), "the subject stays the person");
    assert_eq!(delegated["azp"], "agent");
    assert_eq!(delegated["client_id"], "agent");
    assert_eq!(delegated["aud"], "agent");
    assert_eq!(delegated["scope"], "orders:read");
    assert_eq!(delegated["sid"], own_claims["sid"], "the session of the subject token");
    assert_eq!(delegated["act"], json!({ "client_id": "agent" }));
    assert_eq!(delegated["delegation_id"], id.as_str());
    // How the person signed in to that session, for a resource server that asks for more.
    assert_eq!((&delegated["acr"], &delegated["amr"]), (&json!("1"), &json!(["pwd"])));
    assert_eq!(delegated["auth_time"], own_claims["auth_time"]);
    assert_eq!(delegated["realm_resource_access"], json!({ "roles": ["staff"] }));
    assert_eq!(delegated["resource_access"], json!({ "agent": { "roles": ["assistant"] } }));
    assert!(delegated.get("client_resource_access").is_none(), "the client's own roles stay out");
    assert!(delegated["exp"].as_i64().unwrap() > delegated["iat"].as_i64().unwrap());

    crate::oauth::introspection::assert_describes(
        &crate::oauth::introspection::introspected(&app, &agent, token, None).await,
        token,
    );
    let described = introspect(&app, &agent, token).await;
    assert_eq!(described["active"], true);
    assert_eq!(described["act"], json!({ "client_id": "agent" }));
    assert_eq!(described["delegation_id"], id.as_str());
    assert_eq!(described["sub"], ada.as_str());
    assert_eq!((&described["acr"], &described["amr"]), (&json!("1"), &json!(["pwd"])));

    // Without `scope`, the subject token's scopes are asked for: here more than the grant allows.
    let all = exchange(&app, &agent, &own, &[]).await;
    assert_refused(&all, "invalid_scope", "DelegationScopesExceedGrant");
    assert!(all.body["error_description"].as_str().unwrap().contains("invoices:read"), "the excess is named");
    let narrow = sign_in(&app, &web, "orders:write").await;
    let implicit = exchange(&app, &agent, &narrow, &[]).await;
    assert_eq!(implicit.body["scope"], "orders:write", "{:?}", implicit.body);

    let succeeded = app.events("login_succeeded").await;
    let (_, client, data) = succeeded.iter().rev().find(|(_, _, d)| d["grant_type"] == EXCHANGE).unwrap();
    assert_eq!(client.as_deref(), Some("agent"));
    assert_eq!(data["user_id"], ada.as_str());
    assert_eq!(data["scopes"], json!(["orders:write"]));
    assert_eq!(data["authentication_methods"], json!(["pwd"]));
    let failed = app.events("login_failed").await;
    let (_, _, data) = failed.iter().find(|(_, _, d)| d["grant_type"] == EXCHANGE).unwrap();
    assert_eq!(data["failure_reason"], "delegation_scopes_exceed_grant");

    let trail = app.get("/realms/acme/delegation-exchanges?sortDirection=asc").await;
    assert_eq!(trail.status, StatusCode::OK, "{:?}", trail.body);
    let rows = trail.items();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["outcome"], "Granted");
    assert_eq!(rows[0]["clientId"], "agent");
    assert_eq!(rows[0]["subjectUserId"], ada.as_str());
    assert_eq!(rows[0]["grantId"], id.as_str());
    assert_eq!(rows[0]["tokenId"], delegated["jti"]);
    assert_eq!(rows[0]["depth"], 0);
    assert_eq!(rows[1]["outcome"], "Refused");
    assert_eq!(rows[1]["errorCode"], "DelegationScopesExceedGrant");
    let refused = app.get("/realms/acme/delegation-exchanges?status=Refused").await;
    assert_eq!(refused.items().len(), 1);
}

#[tokio::test]
async fn every_refusal_answers_with_the_spec_error_and_code() {
    let app = spawn_app().await;
    let Realm { web, agent, ada } = realm(&app).await;
    let own = sign_in(&app, &web, "orders:read orders:write").await;
    let read = [("scope", "orders:read")];

    // Token Exchange off on the acting client.
    let plain = app.create_client("acme", "plain", &["client_credentials"], &["orders:read"]).await;
    assert_refused(&exchange(&app, &plain, &own, &read).await, "unauthorized_client", "GrantTypeDisabled");
    // Only access tokens are exchanged and issued.
    let as_refresh = app
        .token(
            &agent,
            &[
                ("grant_type", EXCHANGE),
                ("subject_token", &own),
                ("subject_token_type", "urn:ietf:params:oauth:token-type:refresh_token"),
            ],
        )
        .await;
    assert_refused(&as_refresh, "invalid_request", "DelegationSubjectTokenTypeUnsupported");
    let id_token =
        exchange(&app, &agent, &own, &[("requested_token_type", "urn:ietf:params:oauth:token-type:id_token")]).await;
    assert_refused(&id_token, "invalid_request", "RequestedTokenTypeUnsupported");
    let missing = app.token(&agent, &[("grant_type", EXCHANGE), ("subject_token_type", ACCESS_TOKEN)]).await;
    assert_eq!(missing.body["error"], "invalid_request");

    // No grant at all.
    assert_refused(&exchange(&app, &agent, &own, &read).await, "invalid_request", "DelegationNotPermitted");
    created_id(
        &app,
        "/realms/acme/resource-servers",
        json!({ "name": "Orders", "address": "https://orders.example.com", "scopes": ["orders:read"], "allowedClients": ["agent"] }),
    )
    .await;
    let id = grant(
        &app,
        json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:read"], "allowedResources": ["https://orders.example.com"] }),
    )
    .await;
    let to_orders = [("scope", "orders:read"), ("resource", "https://orders.example.com")];
    let token = delegated(&app, &agent, &own, &to_orders).await;
    assert_eq!(claims(&token)["aud"], "https://orders.example.com");

    // Every refusal about the subject token gets the same answer.
    let inactive = |answer: &Answer| assert_refused(answer, "invalid_request", "DelegationSubjectTokenInactive");
    inactive(&exchange(&app, &agent, "not.a.token", &to_orders).await);
    let mobile = app.create_client("acme", "mobile", &["password", "refresh_token"], &["orders:read"]).await;
    let signed_in =
        app.token(&mobile, &[("grant_type", "password"), ("username", "ada"), ("password", "analytical engine")]).await;
    let refresh = signed_in.body["refresh_token"].as_str().unwrap();
    inactive(&exchange(&app, &agent, refresh, &to_orders).await);
    let machine = app.create_client("acme", "machine", &["client_credentials"], &["orders:read"]).await;
    let machine_token = app.token(&machine, &[("grant_type", "client_credentials")]).await.body["access_token"].clone();
    inactive(&exchange(&app, &agent, machine_token.as_str().unwrap(), &to_orders).await);
    app.create_realm("other").await;
    let elsewhere = app.create_client("other", "web", &["password"], &["orders:read"]).await;
    app.create_user("other", "ada", "analytical engine").await;
    let foreign = sign_in(&app, &elsewhere, "orders:read").await;
    inactive(&exchange(&app, &agent, &foreign, &to_orders).await);
    let revoked = sign_in(&app, &web, "orders:read").await;
    app.protocol(&web, "revoke", &[("token", &revoked)]).await;
    inactive(&exchange(&app, &agent, &revoked, &to_orders).await);
    let ended = sign_in(&app, &web, "orders:read").await;
    let sid = claims(&ended)["sid"].as_str().unwrap().to_owned();
    assert_eq!(app.delete(&format!("/realms/acme/sessions/{sid}")).await.status, StatusCode::OK);
    inactive(&exchange(&app, &agent, &ended, &to_orders).await);

    // Scopes beyond the subject token, then beyond the grant: the excess is named, never trimmed.
    let narrow = sign_in(&app, &web, "orders:write").await;
    let beyond_subject = exchange(&app, &agent, &narrow, &to_orders).await;
    assert_refused(&beyond_subject, "invalid_scope", "DelegationScopesExceedGrant");
    assert!(beyond_subject.body["error_description"].as_str().unwrap().contains("orders:read"));
    let beyond_grant = exchange(
        &app,
        &agent,
        &own,
        &[("scope", "orders:read orders:write"), ("resource", "https://orders.example.com")],
    )
    .await;
    assert_refused(&beyond_grant, "invalid_scope", "DelegationScopesExceedGrant");
    let description = beyond_grant.body["error_description"].as_str().unwrap();
    assert!(description.contains("orders:write") && !description.contains("orders:read"), "{description}");

    // Resources outside the grant's list.
    let elsewhere_resource =
        exchange(&app, &agent, &own, &[("scope", "orders:read"), ("resource", "https://billing.example.com")]).await;
    assert_refused(&elsewhere_resource, "invalid_target", "DelegationResourceExceedsGrant");
    assert_refused(&exchange(&app, &agent, &own, &read).await, "invalid_target", "DelegationResourceExceedsGrant");

    // Several grants never add up: one for reading and one for writing are not one for both.
    let write = grant(&app, json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:write"] })).await;
    let both = exchange(&app, &agent, &own, &[("scope", "orders:read orders:write")]).await;
    assert_refused(&both, "invalid_scope", "DelegationScopesExceedGrant");
    let written = claims(&delegated(&app, &agent, &own, &[("scope", "orders:write")]).await);
    assert_eq!(written["delegation_id"], write.as_str(), "the grant that allows it");
    assert_eq!(written["aud"], "agent");

    // A grant whose term has passed is no longer live; its tokens never outlived it.
    app.post(&format!("/realms/acme/delegation-grants/{id}/withdraw"), json!({ "reason": "replaced" })).await;
    app.post(&format!("/realms/acme/delegation-grants/{write}/withdraw"), json!({ "reason": "replaced" })).await;
    let iat = claims(&own)["iat"].clone();
    let short = grant(
        &app,
        json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:read"], "expiresAt": after(&iat, 120) }),
    )
    .await;
    let capped = claims(&delegated(&app, &agent, &own, &read).await);
    assert_eq!(capped["delegation_id"], short.as_str());
    assert_eq!(capped["exp"].as_i64().unwrap(), iat.as_i64().unwrap() + 120, "exp is the grant's expiry");
    app.advance(121).await;
    let later = sign_in(&app, &web, "orders:read").await;
    assert_refused(&exchange(&app, &agent, &later, &read).await, "invalid_request", "DelegationNotPermitted");
    assert_refused(&exchange(&app, &agent, &own, &read).await, "invalid_request", "DelegationNotPermitted");
    // Once the subject token has expired, that is the first refusal.
    app.advance(180).await;
    inactive(&exchange(&app, &agent, &own, &read).await);

    let trail = app.get("/realms/acme/delegation-exchanges?status=Refused&pageSize=100").await;
    let codes: Vec<&str> = trail.items().iter().map(|row| row["errorCode"].as_str().unwrap()).collect();
    for code in [
        "GrantTypeDisabled",
        "DelegationSubjectTokenTypeUnsupported",
        "RequestedTokenTypeUnsupported",
        "DelegationNotPermitted",
        "DelegationSubjectTokenInactive",
        "DelegationScopesExceedGrant",
        "DelegationResourceExceedsGrant",
    ] {
        assert!(codes.contains(&code), "{code} in the trail: {codes:?}");
    }
}

#[tokio::test]
async fn chains_of_depth_one_to_four_stop_at_each_grants_max_depth() {
    let app = spawn_app().await;
    let Realm { web, ada, .. } = realm(&app).await;
    // Four applications in a chain, each with its own grant for Ada.
    let mut chain = Vec::new();
    for id in ["a1", "a2", "a3", "a4"] {
        let client = agent(&app, id, &["orders:read"]).await;
        grant(&app, json!({ "clientId": id, "subjectUserId": ada, "scopes": ["orders:read"], "maxDepth": 3 })).await;
        chain.push(client);
    }
    let mut tokens = vec![sign_in(&app, &web, "orders:read").await];
    for client in &chain {
        let previous = tokens.last().unwrap().clone();
        tokens.push(delegated(&app, client, &previous, &[]).await);
    }
    let last = claims(&tokens[4]);
    assert_eq!(
        last["act"],
        json!({ "client_id": "a4", "act": { "client_id": "a3", "act": { "client_id": "a2", "act": { "client_id": "a1" } } } }),
        "the newest actor outermost"
    );
    assert_eq!(last["sub"], ada.as_str());
    assert_eq!(last["sid"], claims(&tokens[0])["sid"]);
    let depth_refused = exchange(&app, &chain[0], &tokens[4], &[]).await;
    assert_refused(&depth_refused, "invalid_request", "DelegationDepthExceeded");

    // A client with a grant of each maxDepth in turn: a token carrying that many actors passes,
    // one carrying one more is refused.
    let limited = agent(&app, "limited", &["orders:read"]).await;
    for max_depth in 0..=3_usize {
        let id = grant(
            &app,
            json!({ "clientId": "limited", "subjectUserId": ada, "scopes": ["orders:read"], "maxDepth": max_depth }),
        )
        .await;
        let within = exchange(&app, &limited, &tokens[max_depth], &[]).await;
        assert_eq!(within.status, StatusCode::OK, "maxDepth {max_depth}: {:?}", within.body);
        let beyond = exchange(&app, &limited, &tokens[max_depth + 1], &[]).await;
        assert_refused(&beyond, "invalid_request", "DelegationDepthExceeded");
        app.post(&format!("/realms/acme/delegation-grants/{id}/withdraw"), json!({ "reason": "next depth" })).await;
    }

    // Each application in a chain needs its own grant for the same person.
    let stranger = agent(&app, "stranger", &["orders:read"]).await;
    assert_refused(&exchange(&app, &stranger, &tokens[1], &[]).await, "invalid_request", "DelegationNotPermitted");
}

#[tokio::test]
async fn withdrawal_ends_the_grant_and_its_tokens_at_once() {
    let app = spawn_app().await;
    let Realm { web, agent, ada } = realm(&app).await;
    let helper = self::agent(&app, "helper", &["orders:read"]).await;
    let id =
        grant(&app, json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:read"], "maxDepth": 1 }))
            .await;
    grant(&app, json!({ "clientId": "helper", "subjectUserId": ada, "scopes": ["orders:read"], "maxDepth": 1 })).await;
    let unused = grant(&app, json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:write"] })).await;
    let own = sign_in(&app, &web, "orders:read").await;
    let token = delegated(&app, &agent, &own, &[("scope", "orders:read")]).await;
    assert_eq!(introspect(&app, &agent, &token).await["active"], true);
    app.advance(100).await;

    let path = format!("/realms/acme/delegation-grants/{id}/withdraw");
    let no_reason = app.post(&path, json!({})).await;
    assert!(no_reason.refused_fields().contains(&("reason".into(), "Required".into())), "{:?}", no_reason.body);
    let withdrawn = app.post(&path, json!({ "reason": "the agent was decommissioned" })).await;
    assert_eq!(withdrawn.status, StatusCode::OK, "{:?}", withdrawn.body);
    let data = withdrawn.data();
    assert_eq!(data["state"], "Withdrawn");
    assert_eq!(data["withdrawal"]["reason"], "the agent was decommissioned");
    assert_eq!(data["withdrawal"]["withdrawnBy"]["type"], "Credential");
    assert_eq!(data["revocationLimitSeconds"], 200, "the token issued 100 s ago lives 200 s more");

    assert_eq!(introspect(&app, &agent, &token).await, json!({ "active": false }), "inactive at once");
    let onward = exchange(&app, &helper, &token, &[]).await;
    assert_refused(&onward, "invalid_request", "DelegationSubjectTokenInactive");
    // The agent's other grant is live but allows only orders:write: the closest refusal answers.
    let again = exchange(&app, &agent, &own, &[("scope", "orders:read")]).await;
    assert_refused(&again, "invalid_scope", "DelegationScopesExceedGrant");

    let twice = app.post(&path, json!({ "reason": "again" })).await;
    assert_eq!(twice.status, StatusCode::CONFLICT);
    assert_eq!(twice.error_code(), "DelegationGrantAlreadyWithdrawn");
    let never_used =
        app.post(&format!("/realms/acme/delegation-grants/{unused}/withdraw"), json!({ "reason": "unused" })).await;
    assert_eq!(never_used.data()["revocationLimitSeconds"], 0, "no token was ever issued under it");
    let none_left = exchange(&app, &agent, &own, &[("scope", "orders:read")]).await;
    assert_refused(&none_left, "invalid_request", "DelegationNotPermitted");
    let read = app.get(&format!("/realms/acme/delegation-grants/{id}")).await;
    assert_eq!(read.data()["state"], "Withdrawn");

    let updated = app.events("admin_resource_updated").await;
    let event = updated
        .iter()
        .find(|(_, _, d)| d["resource_type"] == "delegation_grant" && d["resource_id"] == id.as_str())
        .expect("the withdrawal's event");
    assert!(event.2.get("details").is_none(), "the reason stays in the trail, out of the event: {}", event.2);
    let trail = app.get("/audit-trail?realmId=acme&resourceType=delegation_grant").await;
    assert!(
        trail.items().iter().any(|row| row["details"]["reason"] == "the agent was decommissioned"),
        "{:?}",
        trail.body
    );
}

#[tokio::test]
async fn a_person_who_leaves_the_organization_can_no_longer_be_delegated_for() {
    let app = spawn_app().await;
    let Realm { web, agent, ada } = realm(&app).await;
    let initech = created_id(&app, "/realms/acme/organizations", json!({ "name": "Initech" })).await;
    let members = format!("/realms/acme/organizations/{initech}/members");
    app.post(&members, json!({ "userId": ada })).await;
    grant(
        &app,
        json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:read"], "organizationId": initech }),
    )
    .await;
    let own = sign_in(&app, &web, "orders:read").await;
    delegated(&app, &agent, &own, &[]).await;

    assert_eq!(app.delete(&format!("{members}/{ada}")).await.status, StatusCode::OK);
    let left = exchange(&app, &agent, &own, &[]).await;
    assert_refused(&left, "invalid_request", "DelegationNotPermitted");
    assert!(left.body["error_description"].as_str().unwrap().contains("organization"), "{:?}", left.body);

    app.post(&members, json!({ "userId": ada })).await;
    delegated(&app, &agent, &own, &[]).await;
}

#[tokio::test]
async fn a_withdrawal_on_one_host_is_in_force_on_the_other_when_it_answers() {
    let one = spawn_app().await;
    if !one.state.store.is_shared() {
        return; // SQLite is embedded: one host owns the file (the tests above cover it).
    }
    let two = spawn_beside(&one).await;
    let Realm { web, agent, ada } = realm(&one).await;
    let id = grant(&one, json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:read"] })).await;
    let own = sign_in(&one, &web, "orders:read").await;
    // The second host exchanges and introspects, so whatever it caches is warm.
    let token = delegated(&two, &agent, &own, &[]).await;
    assert_eq!(introspect(&two, &agent, &token).await["active"], true);

    let withdrawn =
        one.post(&format!("/realms/acme/delegation-grants/{id}/withdraw"), json!({ "reason": "leaked" })).await;
    assert_eq!(withdrawn.status, StatusCode::OK, "{:?}", withdrawn.body);
    assert_eq!(introspect(&two, &agent, &token).await["active"], false, "no wait for a notification");
    assert_refused(&exchange(&two, &agent, &own, &[]).await, "invalid_request", "DelegationNotPermitted");
}

#[tokio::test]
async fn a_person_fully_suspended_at_the_agent_cannot_be_acted_for_and_delegated_tokens_go_inactive() {
    let app = spawn_app().await;
    let Realm { web, agent, ada } = realm(&app).await;
    grant(&app, json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:read"] })).await;
    let own = sign_in(&app, &web, "orders:read").await;
    let acting = delegated(&app, &agent, &own, &[("scope", "orders:read")]).await;
    assert_eq!(introspect(&app, &agent, &acting).await["active"], true);

    let path = format!("/realms/acme/clients/agent/users/{ada}/suspensions");
    created_id(&app, &path, json!({ "level": "Full" })).await;
    assert_eq!(introspect(&app, &agent, &acting).await["active"], false, "at once");
    let refused = exchange(&app, &agent, &own, &[("scope", "orders:read")]).await;
    assert_refused(&refused, "invalid_request", "DelegationNotPermitted");
    assert_eq!(introspect(&app, &web, &own).await["active"], true, "her own token at another client is untouched");
}

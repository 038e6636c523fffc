//! Claim mappers: a client's tokens carry claims from each person's attributes, roles, groups and
//! organizations or a fixed value, never under a name the service sets; the preview shows them
//! and publishes nothing; a delegated token carries those of the client the person signed in to,
//! never those of the acting client.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{TestApp, TestClient, claims, created_id, spawn_app};

const MAPPERS: &str = "/realms/acme/clients/web/claim-mappers";
const PASSWORD: &str = "analytical engine";

async fn sign_in(app: &TestApp, web: &TestClient) -> Value {
    let form = [("grant_type", "password"), ("username", "ada"), ("password", PASSWORD), ("scope", "openid")];
    let answer = app.token(web, &form).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body
}

#[tokio::test]
async fn tokens_carry_the_mapped_claims_and_the_preview_shows_them_without_an_event() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let web = app.create_client("acme", "web", &["password"], &["openid"]).await;
    let ada = app.create_user("acme", "ada", PASSWORD).await;
    app.put(&format!("/realms/acme/users/{ada}"), json!({ "firstName": "Ada" })).await;
    let buyer = created_id(&app, "/realms/acme/roles", json!({ "name": "buyer" })).await;
    app.post(&format!("/realms/acme/users/{ada}/roles"), json!({ "roleId": buyer })).await;
    let staff = created_id(&app, "/realms/acme/groups", json!({ "name": "staff" })).await;
    app.post(&format!("/realms/acme/groups/{staff}/members"), json!({ "userId": ada })).await;
    let org =
        created_id(&app, "/realms/acme/organizations", json!({ "name": "Initech", "domains": ["initech.com"] })).await;
    app.post(&format!("/realms/acme/organizations/{org}/members"), json!({ "userId": ada })).await;

    for (body, field) in [
        (json!({ "claim": "sub", "source": "Fixed", "value": "x" }), "claim"),
        (json!({ "claim": "email", "source": "Attribute", "attribute": "email" }), "claim"),
        (json!({ "claim": "given", "source": "Attribute" }), "attribute"),
        (json!({ "claim": "tier", "source": "Fixed" }), "value"),
        (json!({ "claim": "tier", "source": "Roles", "value": "gold" }), "source"),
        (json!({ "claim": "has space", "source": "Roles" }), "claim"),
    ] {
        let refused = app.post(MAPPERS, body.clone()).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{body}: {:?}", refused.body);
        assert_eq!(refused.refused_fields()[0].0, field, "{body}");
    }
    for body in [
        json!({ "claim": "tier", "source": "Fixed", "value": "gold" }),
        json!({ "claim": "given", "source": "Attribute", "attribute": "firstName", "idToken": false }),
        json!({ "claim": "roles", "source": "Roles", "idToken": false }),
        json!({ "claim": "teams", "source": "Groups" }),
        json!({ "claim": "orgs", "source": "Organizations", "accessToken": false }),
    ] {
        assert_eq!(app.post(MAPPERS, body.clone()).await.status, StatusCode::CREATED, "{body}");
    }
    let again = app.post(MAPPERS, json!({ "claim": "tier", "source": "Fixed", "value": "silver" })).await;
    assert_eq!(again.status, StatusCode::BAD_REQUEST, "one mapper a claim: {:?}", again.body);

    let answer = sign_in(&app, &web).await;
    let access = claims(answer["access_token"].as_str().unwrap());
    assert_eq!((access["tier"].clone(), access["given"].clone()), (json!("gold"), json!("Ada")));
    assert_eq!((access["roles"].clone(), access["teams"].clone()), (json!(["buyer"]), json!(["staff"])));
    assert!(access.get("orgs").is_none(), "the orgs mapper is for ID tokens only");
    assert_eq!(access["sub"], ada.as_str(), "registered claims stay the service's");
    let id = claims(answer["id_token"].as_str().unwrap());
    assert_eq!((id["orgs"].clone(), id["tier"].clone()), (json!(["Initech"]), json!("gold")));
    assert!(id.get("roles").is_none() && id.get("given").is_none(), "access-only mappers");

    let events_before = app.events("login_succeeded").await.len();
    let preview = app.get(&format!("{MAPPERS}/preview?userId={ada}")).await;
    assert_eq!(preview.status, StatusCode::OK, "{:?}", preview.body);
    assert_eq!(preview.data()["accessTokenClaims"]["roles"], json!(["buyer"]));
    assert_eq!(preview.data()["idTokenClaims"]["orgs"], json!(["Initech"]));
    assert_eq!(app.events("login_succeeded").await.len(), events_before, "a preview publishes nothing");

    let listed = app.get(MAPPERS).await;
    let tier = listed.data().as_array().unwrap().iter().find(|m| m["claim"] == "tier").unwrap()["id"].clone();
    let removed = app.delete(&format!("{MAPPERS}/{}", tier.as_str().unwrap())).await;
    assert_eq!(removed.status, StatusCode::OK, "{:?}", removed.body);
    let access = claims(sign_in(&app, &web).await["access_token"].as_str().unwrap());
    assert!(access.get("tier").is_none(), "removed: {access}");
    let trail = app.get("/audit-trail?realmId=acme&resourceType=client_claim_mappers").await;
    assert_eq!(trail.items().len(), 6, "five creations and a removal: {:?}", trail.body);
}

#[tokio::test]
async fn a_delegated_token_carries_the_claims_of_the_client_the_person_signed_in_to() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let web = app.create_client("acme", "web", &["password"], &["openid", "orders:read"]).await;
    let body = json!({ "id": "agent",
        "clientConfiguration": { "grantTypes": ["client_credentials"], "allowedScopes": ["orders:read"], "tokenExchangeEnabled": true } });
    let created = app.post("/realms/acme/clients", body).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let agent = TestClient {
        realm: "acme".into(),
        id: "agent".into(),
        secret: created.data()["clientSecret"].as_str().unwrap().into(),
    };
    let ada = app.create_user("acme", "ada", PASSWORD).await;
    app.post(MAPPERS, json!({ "claim": "tier", "source": "Fixed", "value": "gold" })).await;
    let own = app
        .post(
            "/realms/acme/clients/agent/claim-mappers",
            json!({ "claim": "tier", "source": "Fixed", "value": "platinum" }),
        )
        .await;
    assert_eq!(own.status, StatusCode::CREATED);
    created_id(
        &app,
        "/realms/acme/delegation-grants",
        json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:read"] }),
    )
    .await;

    let form = [("grant_type", "password"), ("username", "ada"), ("password", PASSWORD), ("scope", "orders:read")];
    let subject = app.token(&web, &form).await.body["access_token"].as_str().unwrap().to_owned();
    let exchange = [
        ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"),
        ("subject_token", subject.as_str()),
        ("subject_token_type", "urn:ietf:params:oauth:token-type:access_token"),
    ];
    let answer = app.token(&agent, &exchange).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let delegated = claims(answer.body["access_token"].as_str().unwrap());
    assert_eq!(delegated["tier"], "gold", "the person's claims as the client they signed in to maps them");
    assert!(delegated.get("act").is_some());
}

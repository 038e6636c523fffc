//! Identity providers of a realm: OpenID Connect providers by their discovery address and plain
//! OAuth 2.0 providers by their three addresses; a client secret sealed at rest and never shown;
//! role mappings that must name the realm's roles and groups.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::{created_id, spawn_app};

const PROVIDERS: &str = "/realms/acme/identity-providers";

#[tokio::test]
async fn a_provider_is_written_read_and_deleted_with_its_secret_never_shown() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    created_id(&app, "/realms/acme/roles", json!({ "name": "admin" })).await;
    created_id(&app, "/realms/acme/groups", json!({ "name": "staff" })).await;
    let google = json!({
        "id": "google", "protocol": "OpenIdConnect", "clientId": "acme-at-google", "clientSecret": "GOCSPX-very-secret-9876",
        "discoveryUrl": "https://accounts.google.com/.well-known/openid-configuration",
        "roleMappings": [{ "claim": "hd", "value": "acme.example", "roles": ["admin"], "groups": ["staff"] }],
    });
    let created = app.post(PROVIDERS, google).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let view = created.data();
    assert_eq!((&view["displayName"], &view["clientSecretLastFour"]), (&json!("google"), &json!("9876")));
    assert_eq!(view["scopes"], json!(["openid", "profile", "email"]), "OpenID Connect's defaults");
    assert_eq!(view["claims"]["username"], "preferred_username");
    assert_eq!(view["trustVerifiedEmail"], false, "no upstream e-mail links to a person unless trusted");
    assert!(!created.body.to_string().contains("very-secret"), "the secret is never shown");

    let store = app.database().await;
    let (sealed,): (String,) = sqlx::query_as("SELECT client_secret FROM identity_providers WHERE id = 'google'")
        .fetch_one(store.pool())
        .await
        .expect("the provider is stored");
    assert!(!sealed.contains("very-secret"), "sealed at rest: {sealed}");

    let changed =
        app.put(&format!("{PROVIDERS}/google"), json!({ "displayName": "Google", "clientSecret": null })).await;
    assert_eq!(changed.status, StatusCode::OK, "{:?}", changed.body);
    assert_eq!(changed.data()["displayName"], "Google");
    assert!(changed.data().get("clientSecretLastFour").is_none(), "the secret was removed");
    let moved = app.put(&format!("{PROVIDERS}/google"), json!({ "protocol": "OAuth2" })).await;
    assert_eq!(moved.refused_fields(), [("protocol".to_owned(), "Immutable".to_owned())]);
    assert_eq!(app.get(PROVIDERS).await.items().len(), 1);

    app.create_client("acme", "web", &["authorization_code"], &[]).await;
    let unknown = app
        .put("/realms/acme/clients/web/identity-providers", json!({ "identityProviders": ["google", "okta"] }))
        .await;
    assert_eq!(unknown.refused_fields(), [("identityProviders[1]".to_owned(), "NotFound".to_owned())]);
    let offer = json!({ "identityProviders": ["google"] });
    assert_eq!(app.put("/realms/acme/clients/web/identity-providers", offer.clone()).await.data(), &json!(["google"]));
    let initech = created_id(&app, "/realms/acme/organizations", json!({ "name": "Initech" })).await;
    let organization = format!("/realms/acme/organizations/{initech}/identity-providers");
    assert_eq!(app.put(&organization, offer).await.status, StatusCode::OK);
    assert_eq!(app.get(&organization).await.data(), &json!(["google"]));

    let created = app.events("admin_resource_created").await;
    assert!(
        created
            .iter()
            .any(|(_, _, data)| data["resource_type"] == "identity_provider" && data["resource_id"] == "google")
    );
    assert_eq!(app.delete(&format!("{PROVIDERS}/google")).await.status, StatusCode::OK);
    assert_eq!(app.get(&format!("{PROVIDERS}/google")).await.status, StatusCode::NOT_FOUND);
    assert_eq!(app.get("/realms/acme/clients/web/identity-providers").await.data(), &json!([]), "no longer offered");
    assert_eq!(app.get(&organization).await.data(), &json!([]));
}

#[tokio::test]
async fn a_provider_is_refused_with_every_problem_named() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let github = json!({ "id": "github", "protocol": "OAuth2", "clientId": "Iv1.abc",
        "authorizationUrl": "https://github.com/login/oauth/authorize", "tokenUrl": "http://github.com/login/oauth/access_token" });
    let refused = app.post(PROVIDERS, github.clone()).await;
    let fields = refused.refused_fields();
    assert!(fields.contains(&("tokenUrl".to_owned(), "Format".to_owned())), "https only: {fields:?}");
    let loopback = json!({ "id": "dev", "protocol": "OpenIdConnect", "clientId": "c",
                           "discoveryUrl": "http://127.0.0.1:8080/.well-known/openid-configuration" });
    let refused_loopback = app.post(PROVIDERS, loopback).await.refused_fields();
    assert!(refused_loopback.contains(&("discoveryUrl".to_owned(), "Format".to_owned())), "not even on loopback");
    assert!(fields.contains(&("userinfoUrl".to_owned(), "Required".to_owned())), "{fields:?}");

    let mut github = github;
    github["tokenUrl"] = json!("https://github.com/login/oauth/access_token");
    github["userinfoUrl"] = json!("https://api.github.com/user");
    github["roleMappings"] =
        json!([{ "claim": "org", "value": "acme", "roles": ["owner"] }, { "claim": "org", "value": "x" }]);
    let refused = app.post(PROVIDERS, github.clone()).await;
    assert_eq!(refused.refused_fields(), [("roleMappings[1].roles".to_owned(), "Required".to_owned())]);
    github["roleMappings"] = json!([{ "claim": "org", "value": "acme", "roles": ["owner"] }]);
    let refused = app.post(PROVIDERS, github.clone()).await;
    assert_eq!(refused.refused_fields(), [("roleMappings[0].roles[0]".to_owned(), "NotFound".to_owned())]);
    github["roleMappings"] = json!([]);
    let created = app.post(PROVIDERS, github.clone()).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    assert_eq!(created.data()["claims"], json!({ "username": "login", "email": "email" }), "GitHub's names");
    assert_eq!(app.post(PROVIDERS, github).await.status, StatusCode::CONFLICT, "the id is taken");

    let bad_id = app
        .post(
            PROVIDERS,
            json!({ "id": "Google!", "protocol": "OpenIdConnect", "clientId": "x",
        "discoveryUrl": "https://accounts.google.com/.well-known/openid-configuration" }),
        )
        .await;
    assert_eq!(bad_id.refused_fields(), [("id".to_owned(), "Pattern".to_owned())]);

    let auditor = app.key_with(&["Auditor"], None).await;
    let read = app.call_as(&auditor, Method::GET, &format!("{PROVIDERS}/github"), None).await;
    assert_eq!(read.status, StatusCode::OK);
    let write = app.call_as(&auditor, Method::DELETE, &format!("{PROVIDERS}/github"), None).await;
    assert_eq!(write.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_provider_s_metadata_and_keys_are_fetched_through_the_address_checks_and_kept_as_answered() {
    use castellan::oauth::federation::upstream;

    let app =
        crate::support::spawn_with(crate::support::TestDatabase::new().await, crate::operations::webhooks::receiving)
            .await;
    let (discovery, jwks) =
        (crate::support::receiver::Receiver::start().await, crate::support::receiver::Receiver::start().await);
    let base = discovery.url.trim_end_matches("/hooks").to_owned();
    let issuer = format!("{base}/realms/people");
    let address = format!("{issuer}/.well-known/openid-configuration");
    discovery.serve(
        json!({ "issuer": issuer, "authorization_endpoint": format!("{issuer}/auth"), "token_endpoint": format!("{issuer}/token"),
                "jwks_uri": jwks.url, "code_challenge_methods_supported": ["S256"] }),
        "max-age=300",
    );
    let keys = json!({ "keys": [{ "kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256", "use": "sig",
        "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0" }] });
    jwks.serve(keys, "max-age=300");

    let metadata = upstream::discover(&app.state, &address).await.expect("the metadata is read");
    assert_eq!((metadata.issuer.as_str(), metadata.jwks_uri.as_str()), (issuer.as_str(), jwks.url.as_str()));
    let found = upstream::keys(&app.state, &metadata.jwks_uri, false).await.expect("the keys are read");
    assert_eq!(found.keys[0].common.key_id.as_deref(), Some("k1"));

    discovery.answer_with(500);
    jwks.answer_with(500);
    assert!(upstream::discover(&app.state, &address).await.is_ok(), "kept for the five minutes its answer allows");
    assert!(upstream::keys(&app.state, &metadata.jwks_uri, false).await.is_ok());
    app.advance(301).await;
    let failed = upstream::discover(&app.state, &address).await.expect_err("read anew once that time is over");
    assert!(failed.contains("500"), "{failed}");
    assert!(upstream::keys(&app.state, &metadata.jwks_uri, false).await.is_err());

    let closed = spawn_app().await;
    let refused = upstream::discover(&closed.state, &address).await.expect_err("loopback is not a public address");
    assert!(refused.contains("refused") || refused.contains("cannot be read"), "{refused}");
}

#[tokio::test]
async fn an_upstream_person_is_linked_once_created_with_the_provider_and_never_takes_over_an_address() {
    use castellan::oauth::federation::person::{Found, Refused, TakeError, take};
    use castellan::store::{clients, identity_providers, realms};

    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.create_client("acme", "web", &["authorization_code"], &[]).await;
    created_id(&app, "/realms/acme/roles", json!({ "name": "admin" })).await;
    let staff = created_id(&app, "/realms/acme/groups", json!({ "name": "staff" })).await;
    let discovery = "https://accounts.google.com/.well-known/openid-configuration";
    for (id, trusted) in [("google", false), ("corp", true)] {
        let provider = json!({ "id": id, "protocol": "OpenIdConnect", "clientId": "acme", "discoveryUrl": discovery,
            "trustVerifiedEmail": trusted,
            "roleMappings": [{ "claim": "hd", "value": "acme.example", "roles": ["admin"], "groups": ["staff"] }] });
        assert_eq!(app.post(PROVIDERS, provider).await.status, StatusCode::CREATED);
    }
    let grace = app.create_user("acme", "grace", "grace hopper cobol").await;
    let store = app.database().await;
    let realm = realms::find(store.pool(), "acme").await.unwrap().unwrap();
    let web = clients::find(store.pool(), "acme", "web").await.unwrap().unwrap();
    let google = identity_providers::find(store.pool(), "acme", "google").await.unwrap().unwrap();
    let corp = identity_providers::find(store.pool(), "acme", "corp").await.unwrap().unwrap();
    let claims = |value: serde_json::Value| value.as_object().cloned().unwrap();
    let sign_in = |provider, value| {
        let (state, realm, web) = (&app.state, &realm, &web);
        async move { take(state, realm, web, provider, &claims(value)).await }
    };

    let ada = json!({ "sub": "g-1", "preferred_username": "ada", "email": "ada@acme.example", "email_verified": true,
                      "given_name": "Ada", "hd": "acme.example" });
    let (created, how) = sign_in(&google, ada.clone()).await.unwrap();
    // Google is not trusted here to say addresses are verified: the address stays unconfirmed.
    assert_eq!((how, created.username.as_str(), created.email_confirmed), (Found::Created, "ada", false));
    let events = app.events("user_created").await;
    let (_, client, data) = events.last().unwrap();
    assert_eq!(
        (client.as_deref(), &data["identity_provider"], &data["first_name"]),
        (Some("web"), &json!("google"), &json!("Ada"))
    );
    let roles = app.get(&format!("/realms/acme/users/{}/roles", created.id)).await;
    assert_eq!(roles.data()["direct"][0]["name"], "admin", "the role mapping applied");
    let members = app.get(&format!("/realms/acme/groups/{staff}/members")).await;
    assert_eq!(members.data(), &json!([created.id.to_string()]), "and the group mapping");

    let (again, how) = sign_in(&google, ada).await.unwrap();
    assert_eq!((how, again.id.clone()), (Found::Linked, created.id.clone()), "found by the link, not made twice");
    assert_eq!(app.events("user_created").await.len(), 2, "grace and ada only");

    let takeover =
        json!({ "sub": "g-2", "preferred_username": "gh", "email": "grace@example.com", "email_verified": true });
    let refused = sign_in(&google, takeover.clone()).await;
    assert!(matches!(refused, Err(TakeError::Refused(Refused::EmailTaken))), "a provider not trusted for e-mail");
    let unverified = json!({ "sub": "c-2", "email": "grace@example.com", "email_verified": false });
    assert!(
        matches!(sign_in(&corp, unverified).await, Err(TakeError::Refused(Refused::EmailTaken))),
        "an unverified address"
    );
    let verified = json!({ "sub": "c-2", "email": "GRACE@example.com", "email_verified": true });
    let unconfirmed = sign_in(&corp, verified.clone()).await;
    assert!(
        matches!(unconfirmed, Err(TakeError::Refused(Refused::EmailTaken))),
        "grace's address was never confirmed here: whoever typed it may not have been grace"
    );
    let confirmed = app.put(&format!("/realms/acme/users/{grace}"), json!({ "emailConfirmed": true })).await;
    assert_eq!(confirmed.status, StatusCode::OK);
    let (linked, how) = sign_in(&corp, verified.clone()).await.unwrap();
    assert_eq!((how, linked.id.to_string()), (Found::ByVerifiedEmail, grace.clone()));
    assert_eq!(sign_in(&corp, verified).await.unwrap().1, Found::Linked);

    let clash = json!({ "sub": "g-3", "preferred_username": "grace", "email": "other@example.com" });
    let (other, _) = sign_in(&google, clash).await.unwrap();
    assert_eq!(other.username, "google.g-3", "a local person's name is never taken");
    assert!(!other.email_confirmed);

    assert_eq!(
        app.put(&format!("/realms/acme/users/{grace}"), json!({ "status": "Disabled" })).await.status,
        StatusCode::OK
    );
    let disabled = sign_in(&corp, json!({ "sub": "c-2" })).await;
    assert!(matches!(disabled, Err(TakeError::Refused(Refused::Disabled))));
    assert!(matches!(
        sign_in(&google, json!({ "email": "x@example.com" })).await,
        Err(TakeError::Refused(Refused::NoSubject))
    ));
}

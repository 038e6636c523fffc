//! Introspection (RFC 7662) as a stock client reads it: the `oauth2` crate (through
//! `openidconnect`) parses every answer with the RFC's types (`exp`, `iat` and `nbf` as
//! NumericDate integers, `scope` space-delimited, `aud` a string or a list), and an access
//! token's answer equals the token's own claims. The other kinds of token are read the same way
//! in their own tests: delegated (`delegation`), DPoP-bound (`dpop`), impersonation (`team`) and
//! consumer keys (`consumers`).

use openidconnect::core::{CoreClient, CoreTokenIntrospectionResponse};
use openidconnect::{
    AccessToken, ClientId, ClientSecret, IntrospectionUrl, IssuerUrl, JsonWebKeySet, TokenIntrospectionResponse,
};

use crate::support::{TestApp, TestClient, claims, spawn_app};

/// `token` introspected by `client` through the stock client, with `hint` when given; the answer
/// must parse.
pub async fn introspected(
    app: &TestApp,
    client: &TestClient,
    token: &str,
    hint: Option<&str>,
) -> CoreTokenIntrospectionResponse {
    let realm = format!("{}/realms/{}", app.base, client.realm);
    let url = IntrospectionUrl::new(format!("{realm}/protocol/openid-connect/token/introspect")).unwrap();
    let stock =
        CoreClient::new(ClientId::new(client.id.clone()), IssuerUrl::new(realm).unwrap(), JsonWebKeySet::default())
            .set_client_secret(ClientSecret::new(client.secret.clone()))
            .set_introspection_url(url);
    let token = AccessToken::new(token.to_owned());
    let mut request = stock.introspect(&token);
    if let Some(hint) = hint {
        request = request.set_token_type_hint(hint);
    }
    match request.request_async(&app.http).await {
        Ok(answer) => answer,
        Err(error) => panic!("the stock client reads the introspection answer: {error:?}"),
    }
}

/// Asserts that `answer` describes the JWT `token` active, with its own claims.
pub fn assert_describes(answer: &CoreTokenIntrospectionResponse, token: &str) {
    let claims = claims(token);
    assert!(answer.active(), "{answer:?}");
    let second = |instant: Option<chrono::DateTime<chrono::Utc>>| instant.map(|at| at.timestamp());
    assert_eq!(second(answer.exp()), claims["exp"].as_i64(), "exp");
    assert_eq!(second(answer.iat()), claims["iat"].as_i64(), "iat");
    assert_eq!(answer.sub(), claims["sub"].as_str(), "sub");
    assert_eq!(answer.iss(), claims["iss"].as_str(), "iss");
    assert_eq!(answer.jti(), claims["jti"].as_str(), "jti");
    assert_eq!(answer.client_id().map(|id| id.as_str()), claims["client_id"].as_str(), "client_id");
    let scopes: Option<Vec<String>> = answer.scopes().map(|s| s.iter().map(|scope| scope.to_string()).collect());
    let claimed: Option<Vec<String>> =
        claims["scope"].as_str().map(|s| s.split(' ').filter(|s| !s.is_empty()).map(str::to_owned).collect());
    assert_eq!(scopes.filter(|s| !s.is_empty()), claimed.filter(|s| !s.is_empty()), "scope");
    let audiences: Option<Vec<String>> = match &claims["aud"] {
        serde_json::Value::String(one) => Some(vec![one.clone()]),
        serde_json::Value::Array(many) => Some(many.iter().filter_map(|a| a.as_str().map(str::to_owned)).collect()),
        _ => None,
    };
    assert_eq!(answer.aud().cloned(), audiences, "aud");
}

#[tokio::test]
async fn access_and_refresh_tokens_are_described_with_the_rfc_types_and_their_own_claims() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let service = app.create_client("acme", "service", &["client_credentials"], &[]).await;
    let issued = app.token(&service, &[("grant_type", "client_credentials")]).await;
    let access = issued.body["access_token"].as_str().unwrap();
    let answer = introspected(&app, &service, access, None).await;
    assert_describes(&answer, access);
    assert_eq!(answer.token_type().map(|t| t.as_ref().to_ascii_lowercase()).as_deref(), Some("bearer"));

    let web = app.create_client("acme", "web", &["password", "refresh_token"], &[]).await;
    app.create_user("acme", "ada", "analytical engine").await;
    let signed_in =
        app.token(&web, &[("grant_type", "password"), ("username", "ada"), ("password", "analytical engine")]).await;
    let access = signed_in.body["access_token"].as_str().unwrap();
    let answer = introspected(&app, &web, access, None).await;
    assert_describes(&answer, access);
    assert_eq!(answer.username(), Some("ada"));

    let refresh = signed_in.body["refresh_token"].as_str().unwrap();
    let answer = introspected(&app, &web, refresh, Some("refresh_token")).await;
    assert!(answer.active());
    assert_eq!(answer.token_type().map(|t| t.as_ref()), Some("refresh_token"));
    assert_eq!(answer.sub(), claims(access)["sub"].as_str());
    let (issued, expires) = (answer.iat().unwrap(), answer.exp().unwrap());
    assert!(issued <= app.state.clock.now() && expires > issued, "{issued} {expires}");

    // Inactive answers parse too, with nothing but `active`.
    let answer = introspected(&app, &web, "not-a-token", None).await;
    assert!(!answer.active() && answer.exp().is_none() && answer.sub().is_none());
}

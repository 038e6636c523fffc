//! Server-side request forgery: every address a webhook or the account's notifications could be
//! pointed at inside (private, loopback, link-local, CGNAT, NAT64, IPv4-mapped and the other IPv6
//! forms that embed an IPv4 address, and every odd notation of them) is refused when it is set,
//! for client and realm endpoints and the notification address alike. Each send checks again
//! (`webhooks::every_connection_checks_the_address_again`).

use reqwest::StatusCode;
use serde_json::json;

use crate::support::spawn_app;

/// Hosts that are, or resolve to, addresses no webhook may reach.
const INSIDE: &[&str] = &[
    // Loopback, however it is written.
    "127.0.0.1",
    "127.255.255.254",
    "127.1",
    "2130706433",
    "0x7f000001",
    "0x7f.0.0.1",
    "0177.0.0.1",
    "017700000001",
    "127.0.0.1.",
    "localhost",
    "LOCALHOST",
    "[::1]",
    "[0:0:0:0:0:0:0:1]",
    // "This network" and the unspecified addresses.
    "0.0.0.0",
    "0",
    "[::]",
    // Private networks.
    "10.0.0.1",
    "10.255.255.255",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.0.1",
    "192.168.255.255",
    // Link-local, cloud metadata included.
    "169.254.169.254",
    "169.254.0.1",
    "0xa9fea9fe",
    "[fe80::1]",
    "[febf::1]",
    // Shared address space (CGNAT).
    "100.64.0.1",
    "100.127.255.254",
    // IETF assignments, benchmarking, documentation, multicast, broadcast.
    "192.0.0.1",
    "198.18.0.1",
    "198.19.255.255",
    "192.0.2.1",
    "224.0.0.1",
    "239.255.255.255",
    "255.255.255.255",
    "[ff02::1]",
    // IPv6 unique local and site-local.
    "[fc00::1]",
    "[fd12:3456:789a::1]",
    "[fec0::1]",
    // IPv6 forms that embed an IPv4 address: mapped, compatible, NAT64, 6to4, Teredo.
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[0:0:0:0:0:ffff:a9fe:a9fe]",
    "[::ffff:10.0.0.1]",
    "[::127.0.0.1]",
    "[::a00:1]",
    "[64:ff9b::7f00:1]",
    "[64:ff9b::a9fe:a9fe]",
    "[64:ff9b::10.0.0.1]",
    "[2002:7f00:1::1]",
    "[2002:a9fe:a9fe::]",
    "[2001::1]",
    "[2001:0:4136:e378:8000:63bf:3fff:fdd2]",
];

#[tokio::test]
async fn no_webhook_or_notification_address_reaches_inside_however_it_is_written() {
    let app = spawn_app().await;
    app.create_realm("hooks").await;
    app.create_client("hooks", "shop", &["client_credentials"], &[]).await;
    for host in INSIDE {
        // Ten calls a host, within the caller's 300 a minute.
        app.advance(2).await;
        for path in ["/", ":8443/hook", "/hook?x=1#f"] {
            let url = format!("https://{host}{path}");
            let client = app
                .post(
                    "/realms/hooks/clients/shop/webhooks",
                    json!({ "name": "in", "url": url, "events": ["user_created"] }),
                )
                .await;
            assert_eq!(client.refused_fields(), [("url".to_owned(), "Format".to_owned())], "client endpoint: {url}");
            let realm = app
                .post(
                    "/realms/hooks/webhooks",
                    json!({ "name": "in", "url": url, "events": ["admin_resource_created"] }),
                )
                .await;
            assert_eq!(realm.refused_fields(), [("url".to_owned(), "Format".to_owned())], "realm endpoint: {url}");
            let notified = app.put("/account/notification-preferences", json!({ "webhookUrl": url })).await;
            assert_eq!(
                notified.refused_fields(),
                [("webhookUrl".to_owned(), "Format".to_owned())],
                "notification address: {url}"
            );
        }
        // With credentials before the host, the host is still the one checked.
        let url = format!("https://public.example@{host}/hook");
        let client = app
            .post(
                "/realms/hooks/clients/shop/webhooks",
                json!({ "name": "in", "url": url, "events": ["user_created"] }),
            )
            .await;
        assert_eq!(client.status, StatusCode::BAD_REQUEST, "{url}");
    }
    // None of them was stored.
    assert!(app.get("/realms/hooks/clients/shop/webhooks").await.items().is_empty());
    assert!(app.get("/realms/hooks/webhooks").await.items().is_empty());
    assert!(app.get("/account/notification-preferences").await.data()["webhookUrl"].is_null());

    // A public address is accepted, so the refusals above are the addresses' own.
    let public = json!({ "name": "out", "url": "https://203.0.114.7/hook", "events": ["user_created"] });
    assert_eq!(app.post("/realms/hooks/clients/shop/webhooks", public).await.status, StatusCode::CREATED);
}

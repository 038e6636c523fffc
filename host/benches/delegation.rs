//! The cost of one delegation decision by the Cedar policies (`policies/delegation.cedar`): the
//! entities built from a grant and an exchange, evaluated, for an allow and for a refusal.
//!
//! `cargo bench -p castellan --bench delegation`

use std::path::Path;
use std::time::Instant;

use castellan::authz::Authorizer;
use castellan::authz::delegation::{DelegationVerdict, ExchangeFacts, GrantFacts};
use chrono::DateTime;

const ROUNDS: u32 = 100_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let policies = Path::new(env!("CARGO_MANIFEST_DIR")).join("../policies");
    let authorizer = Authorizer::load(&policies)?;
    let scopes: Vec<String> = ["orders:read", "orders:write"].map(String::from).to_vec();
    let asked: Vec<String> = vec!["orders:read".into()];
    let resources: Vec<String> = vec!["https://orders.example.com".into()];
    let organizations: Vec<String> = vec!["initech".into()];
    let grant = GrantFacts {
        id: "0193a000-0000-7000-8000-000000000001",
        client_id: "agent",
        subject_user_id: "0193a000-0000-7000-8000-000000000002",
        scopes: &scopes,
        max_depth: 1,
        allowed_resources: &resources,
        organization_id: Some("initech"),
        expires_at: DateTime::from_timestamp_millis(1_900_000_000_000),
        minimum_level: Some(3),
    };
    let allowed = ExchangeFacts {
        realm_id: "acme",
        client_id: "agent",
        person_id: "0193a000-0000-7000-8000-000000000002",
        person_organizations: &organizations,
        now: DateTime::from_timestamp_millis(1_800_000_000_000).unwrap_or_default(),
        scopes: &asked,
        subject_scopes: &scopes,
        client_scopes: &scopes,
        depth: 0,
        resource: Some("https://orders.example.com"),
        subject_level: 4,
    };
    let refused = ExchangeFacts { depth: 2, ..allowed };
    for (name, exchange, expected_allow) in [("allow", allowed, true), ("refusal", refused, false)] {
        let started = Instant::now();
        for _ in 0..ROUNDS {
            let verdict = authorizer.decide_delegation(&grant, std::hint::black_box(&exchange))?;
            assert_eq!(verdict == DelegationVerdict::Allow, expected_allow);
        }
        println!("delegation decision, {name}: {:.2?} each", started.elapsed() / ROUNDS);
    }
    Ok(())
}

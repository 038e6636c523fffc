//! An authenticator in a few lines (a P-256 key of `aws-lc-rs`, CBOR written by hand) against
//! each check of registration and assertion.

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair as _};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use super::*;

const PARTY: RelyingParty<'static> = RelyingParty { id: "login.example", origin: "https://login.example" };
const CHALLENGE: &[u8] = b"a challenge of the service";
const UP_UV: u8 = 0x05;

/// A CBOR head of `major` with `argument`.
fn head(major: u8, argument: usize) -> Vec<u8> {
    let major = major << 5;
    match argument {
        0..=23 => vec![major | argument as u8],
        24..=255 => vec![major | 24, argument as u8],
        _ => vec![major | 25, (argument >> 8) as u8, argument as u8],
    }
}

fn bytes(value: &[u8]) -> Vec<u8> {
    [head(2, value.len()), value.to_vec()].concat()
}

fn text(value: &str) -> Vec<u8> {
    [head(3, value.len()), value.as_bytes().to_vec()].concat()
}

fn negative(value: i64) -> Vec<u8> {
    head(1, (-1 - value) as usize)
}

struct Authenticator {
    key: EcdsaKeyPair,
    id: Vec<u8>,
}

impl Authenticator {
    fn new() -> Self {
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &SystemRandom::new()).unwrap();
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref()).unwrap();
        Self { key, id: vec![7; 16] }
    }

    fn cose(&self) -> Vec<u8> {
        let point = self.key.public_key().as_ref();
        let (x, y) = (&point[1..33], &point[33..65]);
        [
            vec![0xa5, 0x01, 0x02, 0x03],
            negative(-7),
            negative(-1),
            vec![0x01],
            negative(-2),
            bytes(x),
            negative(-3),
            bytes(y),
        ]
        .concat()
    }

    fn data(&self, rp_id: &str, flags: u8, counter: u32, attested: bool) -> Vec<u8> {
        let mut data = Sha256::digest(rp_id.as_bytes()).to_vec();
        data.push(flags | if attested { ATTESTED_DATA } else { 0 });
        data.extend_from_slice(&counter.to_be_bytes());
        if attested {
            data.extend_from_slice(&[0; 16]);
            data.extend_from_slice(&(self.id.len() as u16).to_be_bytes());
            data.extend_from_slice(&self.id);
            data.extend_from_slice(&self.cose());
        }
        data
    }

    fn attestation(&self, flags: u8) -> Vec<u8> {
        let data = self.data(PARTY.id, flags, 0, true);
        [vec![0xa3], text("fmt"), text("none"), text("attStmt"), vec![0xa0], text("authData"), bytes(&data)].concat()
    }

    fn sign(&self, data: &[u8], client_data: &[u8]) -> Vec<u8> {
        let signed = [data, Sha256::digest(client_data).as_slice()].concat();
        self.key.sign(&SystemRandom::new(), &signed).unwrap().as_ref().to_vec()
    }
}

fn client_data(kind: &str, origin: &str) -> Vec<u8> {
    let challenge = URL_SAFE_NO_PAD.encode(CHALLENGE);
    format!(r#"{{"type":"{kind}","challenge":"{challenge}","origin":"{origin}","crossOrigin":false}}"#).into_bytes()
}

fn ours(challenge: &[u8]) -> bool {
    challenge == CHALLENGE
}

#[test]
fn a_registration_gives_the_credential_and_its_key_verifies_the_assertions_that_follow() {
    let authenticator = Authenticator::new();
    let created = client_data("webauthn.create", PARTY.origin);
    let credential = registration(PARTY, &created, &authenticator.attestation(UP_UV), ours).unwrap();
    assert_eq!(credential.id, authenticator.id);
    assert_eq!(credential.public_key.algorithm, Algorithm::Es256);
    assert_eq!(credential.format, "none");
    assert!(credential.flags.user_verified && !credential.flags.backup_eligible);

    // The key is kept as its COSE bytes and read again.
    let key = PublicKey::from_cose(&credential.public_key.cose).unwrap();
    let got = client_data("webauthn.get", PARTY.origin);
    let data = authenticator.data(PARTY.id, UP_UV | 0x18, 5, false);
    let signature = authenticator.sign(&data, &got);
    let asserted = assertion(PARTY, &key, &got, &data, &signature, ours).unwrap();
    assert_eq!(asserted.counter, 5);
    assert!(asserted.flags.backup_eligible && asserted.flags.backed_up);

    // One changed bit of what was signed, or a signature of another key, does not verify.
    let mut changed = data.clone();
    changed[36] ^= 1;
    assert_eq!(assertion(PARTY, &key, &got, &changed, &signature, ours), Err(Refused::Signature));
    let other = Authenticator::new();
    let forged = other.sign(&data, &got);
    assert_eq!(assertion(PARTY, &key, &got, &data, &forged, ours), Err(Refused::Signature));
}

#[test]
fn each_check_of_the_client_and_authenticator_data_refuses_what_it_guards_against() {
    let authenticator = Authenticator::new();
    let key = PublicKey::from_cose(&authenticator.cose()).unwrap();
    let check = |client: Vec<u8>, data: Vec<u8>, good: fn(&[u8]) -> bool| {
        let signature = authenticator.sign(&data, &client);
        assertion(PARTY, &key, &client, &data, &signature, good)
    };
    let got = || client_data("webauthn.get", PARTY.origin);
    let data = |rp: &str, flags| authenticator.data(rp, flags, 1, false);
    assert_eq!(
        check(client_data("webauthn.create", PARTY.origin), data(PARTY.id, UP_UV), ours),
        Err(Refused::WrongType("sign-in"))
    );
    assert_eq!(check(got(), data(PARTY.id, UP_UV), |_| false), Err(Refused::Challenge));
    assert_eq!(
        check(client_data("webauthn.get", "https://evil.example"), data(PARTY.id, UP_UV), ours),
        Err(Refused::Origin)
    );
    let framed = String::from_utf8(got()).unwrap().replace(r#""crossOrigin":false"#, r#""crossOrigin":true"#);
    assert_eq!(check(framed.into_bytes(), data(PARTY.id, UP_UV), ours), Err(Refused::CrossOrigin));
    assert_eq!(check(got(), data("evil.example", UP_UV), ours), Err(Refused::RelyingParty));
    assert_eq!(check(got(), data(PARTY.id, 0x04), ours), Err(Refused::UserNotPresent));
    assert_eq!(check(got(), data(PARTY.id, 0x01), ours), Err(Refused::UserNotVerified));
    assert_eq!(check(got(), data(PARTY.id, UP_UV | 0x10), ours), Err(Refused::BackupState));
    assert_eq!(check(b"{".to_vec(), data(PARTY.id, UP_UV), ours), Err(Refused::Malformed("the client data")));
    assert_eq!(check(got(), vec![0; 20], ours), Err(Refused::Malformed("the authenticator data")));

    // A registration without user verification, or whose attestation carries no credential.
    let created = client_data("webauthn.create", PARTY.origin);
    assert_eq!(registration(PARTY, &created, &authenticator.attestation(0x01), ours), Err(Refused::UserNotVerified));
    let bare = authenticator.data(PARTY.id, UP_UV, 0, false);
    let object = [vec![0xa2], text("fmt"), text("none"), text("authData"), bytes(&bare)].concat();
    assert!(matches!(registration(PARTY, &created, &object, ours), Err(Refused::Malformed(_))));
}

#[test]
fn keys_of_other_algorithms_and_curves_are_refused() {
    // ES256 named with the P-384 curve, and an unknown algorithm.
    let authenticator = Authenticator::new();
    let mut wrong_curve = authenticator.cose();
    let at = wrong_curve.windows(2).position(|w| w == [0x20, 0x01]).unwrap();
    wrong_curve[at + 1] = 0x02;
    assert_eq!(PublicKey::from_cose(&wrong_curve), Err(Refused::Algorithm));
    let unknown = [vec![0xa2, 0x01, 0x02, 0x03], negative(-260)].concat();
    assert_eq!(PublicKey::from_cose(&unknown), Err(Refused::Algorithm));
}

#[test]
fn a_counter_that_does_not_go_up_shows_a_clone_unless_the_authenticator_keeps_none() {
    assert!(!counter_went_back(0, 0));
    assert!(!counter_went_back(4, 5));
    assert!(counter_went_back(5, 5));
    assert!(counter_went_back(5, 2));
    assert!(counter_went_back(5, 0));
}

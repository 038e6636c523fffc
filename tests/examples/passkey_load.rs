//! A load run of passkey sign-ins at the login page's passkey step, end to end: a software
//! authenticator (a P-256 key of `aws-lc-rs`, attestation `none`, a counter that stays at zero as
//! synced passkeys' do) registers a passkey for a person through the account API; then each
//! sign-in is a login page fetched beforehand (its form cookie, form token and challenge) and an
//! assertion signed over that challenge, posted with `connections` at a time. Each is answered
//! with the redirect carrying a code when it verifies.
//!
//!   cargo run --release -p castellan-tests --example passkey_load -- \
//!       BASE CLIENT_ID REDIRECT_URI ACCESS_TOKEN SIGN_INS CONNECTIONS
//!
//! Prints the sign-ins a second, the median and 99th percentile latency, and the refusals.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair as _};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

struct Authenticator {
    key: EcdsaKeyPair,
    id: Vec<u8>,
    rp_id: String,
    origin: String,
}

impl Authenticator {
    fn cbor_bytes(value: &[u8]) -> Vec<u8> {
        let mut out = if value.len() < 24 { vec![0x40 | value.len() as u8] } else { vec![0x58, value.len() as u8] };
        out.extend_from_slice(value);
        out
    }

    fn cbor_text(value: &str) -> Vec<u8> {
        let mut out = vec![0x60 | value.len() as u8];
        out.extend_from_slice(value.as_bytes());
        out
    }

    /// The registration's attestation object (`none`) and client data, for `challenge`.
    fn created(&self, challenge: &str) -> Value {
        let point = self.key.public_key().as_ref();
        let cose = [
            &[0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21][..],
            &Self::cbor_bytes(&point[1..33]),
            &[0x22],
            &Self::cbor_bytes(&point[33..65]),
        ]
        .concat();
        let mut data = Sha256::digest(self.rp_id.as_bytes()).to_vec();
        data.push(0x45);
        data.extend_from_slice(&[0; 4 + 16]);
        data.extend_from_slice(&(self.id.len() as u16).to_be_bytes());
        data.extend_from_slice(&self.id);
        data.extend_from_slice(&cose);
        let mut object = vec![0xa3];
        object.extend(Self::cbor_text("fmt"));
        object.extend(Self::cbor_text("none"));
        object.extend(Self::cbor_text("attStmt"));
        object.push(0xa0);
        object.extend(Self::cbor_text("authData"));
        object.extend([0x59, (data.len() >> 8) as u8, data.len() as u8]);
        object.extend(data);
        let client_data = json!({ "type": "webauthn.create", "challenge": challenge, "origin": self.origin });
        json!({
            "id": URL_SAFE_NO_PAD.encode(&self.id), "rawId": URL_SAFE_NO_PAD.encode(&self.id), "type": "public-key",
            "response": {
                "clientDataJSON": URL_SAFE_NO_PAD.encode(client_data.to_string()),
                "attestationObject": URL_SAFE_NO_PAD.encode(object),
            },
        })
    }

    /// An assertion over `challenge`, its counter at zero.
    fn asserted(&self, challenge: &str, user_handle: &str) -> Result<String> {
        let mut data = Sha256::digest(self.rp_id.as_bytes()).to_vec();
        data.extend_from_slice(&[0x05, 0, 0, 0, 0]);
        let client_data = json!({ "type": "webauthn.get", "challenge": challenge, "origin": self.origin }).to_string();
        let signed = [data.as_slice(), Sha256::digest(client_data.as_bytes()).as_slice()].concat();
        let signature = self.key.sign(&SystemRandom::new(), &signed).context("a signature")?;
        Ok(json!({
            "id": URL_SAFE_NO_PAD.encode(&self.id), "rawId": URL_SAFE_NO_PAD.encode(&self.id), "type": "public-key",
            "response": {
                "clientDataJSON": URL_SAFE_NO_PAD.encode(&client_data),
                "authenticatorData": URL_SAFE_NO_PAD.encode(&data),
                "signature": URL_SAFE_NO_PAD.encode(signature.as_ref()),
                "userHandle": user_handle,
            },
        })
        .to_string())
    }
}

/// The value of the attribute `name` in `html`.
fn attribute(html: &str, name: &str) -> Result<String> {
    let marker = format!(r#"{name}=""#);
    let start = html.find(&marker).context("the attribute")? + marker.len();
    Ok(html[start..start + html[start..].find('"').context("its end")?].replace("&quot;", "\"").replace("&amp;", "&"))
}

/// A prepared sign-in: the form cookie and the body to post.
struct Prepared {
    cookie: String,
    body: String,
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [base, client_id, redirect_uri, token, sign_ins, connections] = args.as_slice() else {
        anyhow::bail!("usage: passkey_load BASE CLIENT_ID REDIRECT_URI ACCESS_TOKEN SIGN_INS CONNECTIONS");
    };
    let (sign_ins, connections): (usize, usize) =
        (sign_ins.parse().context("a count")?, connections.parse().context("a count")?);
    // reqwest's TLS takes the process's provider: the service's own, aws-lc-rs.
    let _ = tokio_rustls::rustls::crypto::aws_lc_rs::default_provider().install_default();
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().context("a client")?;
    let account = format!("{base}/realms/acme/account/authenticators/passkey");

    // Registration.
    let options: Value =
        http.post(&account).bearer_auth(token).send().await.context("options")?.json().await.context("json")?;
    let public = &options["publicKey"];
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &SystemRandom::new()).context("a key")?;
    let authenticator = Authenticator {
        key: EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref()).context("the key")?,
        id: (0..32u8).collect(),
        rp_id: public["rp"]["id"].as_str().context("an rp id")?.to_owned(),
        origin: url::Url::parse(base).context("a base")?.origin().ascii_serialization(),
    };
    let user_handle = public["user"]["id"].as_str().context("a user handle")?.to_owned();
    let created = authenticator.created(public["challenge"].as_str().context("a challenge")?);
    let kept = http
        .post(format!("{account}/confirm"))
        .bearer_auth(token)
        .form(&[("credential", created.to_string())])
        .send()
        .await
        .context("confirm")?;
    if kept.status() != 201 {
        anyhow::bail!("the passkey was not kept: {}", kept.text().await.unwrap_or_default());
    }

    // The login pages, fetched beforehand.
    let mut authorize =
        url::Url::parse(&format!("{base}/realms/acme/protocol/openid-connect/auth")).context("an address")?;
    authorize
        .query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("scope", "openid")
        .append_pair("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        .append_pair("code_challenge_method", "S256");
    let fetched = Instant::now();
    let mut pages = Vec::with_capacity(sign_ins);
    for chunk in (0..sign_ins).collect::<Vec<_>>().chunks(64) {
        let each = chunk.iter().map(|_| async {
            let answer = http.get(authorize.as_str()).send().await.context("a login page")?;
            let cookie = answer
                .headers()
                .get_all("set-cookie")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .find(|v| v.starts_with("castellan_form="))
                .and_then(|v| v.split(';').next())
                .context("a form cookie")?
                .to_owned();
            Ok::<_, anyhow::Error>((cookie, answer.text().await.context("a page")?))
        });
        for page in futures_util::future::join_all(each).await {
            pages.push(page?);
        }
    }
    let mut prepared = Vec::with_capacity(sign_ins);
    for (cookie, page) in pages {
        let form = &page[page.find(r#"id="passkey-sign-in""#).context("the passkey form")?..];
        let form = &form[..form.find("</form>").context("its end")?];
        let challenge = attribute(form, "data-challenge")?;
        let mut body = url::form_urlencoded::Serializer::new(String::new());
        let mut rest = form;
        while let Some(at) = rest.find(r#"<input type="hidden" name=""#) {
            rest = &rest[at + r#"<input type="hidden" name=""#.len()..];
            let name = &rest[..rest.find('"').context("a name")?];
            if name != "credential" {
                body.append_pair(name, &attribute(rest, "value")?);
            }
        }
        body.append_pair("credential", &authenticator.asserted(&challenge, &user_handle)?);
        prepared.push(Prepared { cookie, body: body.finish() });
    }
    eprintln!("{sign_ins} login pages fetched and assertions signed in {:.1} s", fetched.elapsed().as_secs_f64());

    // The load.
    let prepared = Arc::new(prepared);
    let next = Arc::new(AtomicUsize::new(0));
    let step = format!("{base}/realms/acme/protocol/openid-connect/auth/passkey");
    let started = Instant::now();
    let workers = (0..connections).map(|_| {
        let (http, prepared, next, step) = (http.clone(), prepared.clone(), next.clone(), step.clone());
        tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut refused = 0usize;
            loop {
                let at = next.fetch_add(1, Ordering::Relaxed);
                let Some(one) = prepared.get(at) else { break };
                let sent = Instant::now();
                let answer = http
                    .post(&step)
                    .header("cookie", &one.cookie)
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body(one.body.clone())
                    .send()
                    .await?;
                let signed_in = answer.status() == 303
                    && answer
                        .headers()
                        .get("location")
                        .and_then(|l| l.to_str().ok())
                        .is_some_and(|l| l.contains("code="));
                latencies.push(sent.elapsed());
                if !signed_in {
                    refused += 1;
                }
            }
            Ok::<_, reqwest::Error>((latencies, refused))
        })
    });
    let mut latencies: Vec<Duration> = Vec::new();
    let mut refused = 0;
    for worker in futures_util::future::join_all(workers).await {
        let (mine, theirs) = worker.context("a worker")??;
        latencies.extend(mine);
        refused += theirs;
    }
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64 - 1.0) * q) as usize].as_secs_f64() * 1000.0;
    println!(
        "passkey sign-ins: {sign_ins} in {elapsed:.2} s: {:.0}/s, p50 {:.2} ms, p99 {:.2} ms, refused {refused}",
        sign_ins as f64 / elapsed,
        at(0.5),
        at(0.99)
    );
    Ok(())
}

//! The signature check: paste a signing secret, a delivery's `X-Service-Signature` header and its
//! body, and the page says whether they match. The browser computes the HMAC with WebCrypto; the
//! fields sit in no form, so nothing typed here is ever sent anywhere, to the service or elsewhere.

use axum::http::StatusCode;
use maud::html;

use super::page::{Section, Shell};
use super::{Console, Page};

/// Reads `t=<seconds>,v1=<hex>` (several `v1` while a secret rotates), computes
/// HMAC-SHA256(secret, `t.body`) and compares; a signature more than five minutes from now is
/// called stale, as receivers refuse it.
const CHECK: &str = r#"
const field = (id) => document.getElementById(id);
const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
field("check").addEventListener("click", async () => {
  const verdict = field("verdict");
  let t = null;
  const signatures = [];
  for (const part of field("signature").value.split(",")) {
    const at = part.indexOf("=");
    if (at < 0) continue;
    const [name, value] = [part.slice(0, at).trim(), part.slice(at + 1).trim()];
    if (name === "t") t = value;
    if (name === "v1") signatures.push(value.toLowerCase());
  }
  if (!t || !/^[0-9]+$/.test(t) || signatures.length === 0) {
    verdict.textContent = "Not checked: the header must read t=<seconds>,v1=<64 hex characters>.";
    return;
  }
  const text = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", text.encode(field("secret").value),
    { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = hex(new Uint8Array(await crypto.subtle.sign("HMAC", key, text.encode(t + "." + field("body").value))));
  const age = Math.round(Date.now() / 1000) - Number(t);
  if (!signatures.includes(mac)) {
    verdict.textContent = "Not valid: the signature does not match this secret and body.";
  } else if (Math.abs(age) > 300) {
    verdict.textContent = "Valid, but stale: signed " + age + " seconds ago; receivers refuse signatures older than 5 minutes.";
  } else {
    verdict.textContent = "Valid: the signature matches this secret and body.";
  }
});
"#;

/// `/console/webhooks/signature-check`.
pub async fn page(console: Console) -> Page {
    let content = html! {
        p { "Checks a delivery's signature in this browser. What you paste stays here: the page sends nothing." }
        div.panel {
            div { label for="secret" { "Signing secret" } input #secret type="password" autocomplete="off" size="50"; }
            div { label for="signature" { "X-Service-Signature header" } input #signature autocomplete="off" size="80" placeholder="t=1700000000,v1=…"; }
            div { label for="body" { "Body, exactly as received" } textarea #body rows="8" cols="80" {} }
            button #check type="button" { "Check the signature" }
            p #verdict role="status" aria-live="polite" {}
        }
    };
    let shell = Shell { console: &console, section: Section::SignatureCheck, title: "Signature check" };
    Ok(shell.answer_with_script(StatusCode::OK, content, Some(CHECK)))
}

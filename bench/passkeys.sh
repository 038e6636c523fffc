#!/usr/bin/env bash
# Load run of passkey sign-ins on loopback: a person registers a passkey of a software
# authenticator through the account API, then SIGN_INS login pages are fetched and an assertion
# signed over each page's challenge; the assertions are then posted to the login page's passkey
# step, CONNECTIONS at a time, each answered with the redirect carrying a code
# (tests/examples/passkey_load.rs).
#
#   bench/passkeys.sh sqlite|postgres [sign-ins] [connections]
#
# Needs curl and python3.
set -euo pipefail
sign_ins="${2:-20000}"
connections="${3:-32}"
# shellcheck source=bench/service.sh
source "$(dirname "$0")/service.sh" "${1:-sqlite}" 18195
cargo build --release --quiet -p castellan-tests --example passkey_load --manifest-path "$root/Cargo.toml"
redirect="http://127.0.0.1:9/callback"
clients="$base/api/v1/admin/realms/acme/clients"
admin -o /dev/null -d '{"id":"acme"}' "$base/api/v1/admin/realms"
admin -o /dev/null -d "{\"id\":\"web\",\"clientConfiguration\":{\"grantTypes\":[\"authorization_code\"],\"redirectUris\":[\"$redirect\"]}}" "$clients"
secret=$(admin -d '{"id":"portal","clientConfiguration":{"grantTypes":["password"]}}' "$clients" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["clientSecret"])')
admin -o /dev/null -d '{"username":"ada","password":"analytical engine"}' "$base/api/v1/admin/realms/acme/users"
token=$(curl -sf -u "portal:$secret" -d 'grant_type=password&username=ada&password=analytical%20engine' \
  "$base/realms/acme/protocol/openid-connect/token" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
"${CARGO_TARGET_DIR:-$root/target}/release/examples/passkey_load" "$base" web "$redirect" "$token" "$sign_ins" "$connections"

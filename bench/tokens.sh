#!/usr/bin/env bash
# Load run of the token service on loopback, with wrk:
#   client_credentials grants, token introspection, refresh_token grants, token exchanges under a
#   delegation grant, password sign-ins.
#
#   bench/tokens.sh sqlite|postgres [connections] [seconds]
#   ONLY=token_exchange bench/tokens.sh sqlite    (one run: client_credentials, introspection,
#                                                  refresh_token, token_exchange or password)
#
# Starts a release build on a fresh database with one realm, one confidential client and one
# person; seeds single-use refresh tokens for the refresh run; warms up 3 s before the other runs.
# Needs wrk (Debian package `wrk`), curl, python3 and, for PostgreSQL, psql.
set -euo pipefail
command -v wrk >/dev/null || { echo "this load run needs wrk: apt-get install wrk" >&2; exit 1; }
connections="${2:-32}"
seconds="${3:-15}"
# shellcheck source=bench/service.sh
source "$(dirname "$0")/service.sh" "${1:-sqlite}" 18191
admin -o /dev/null -d '{"id":"acme"}' "$base/api/v1/admin/realms"
admin -o /dev/null -d '{"name":"orders:read"}' "$base/api/v1/admin/realms/acme/scopes"
secret=$(admin -d '{"id":"agent","clientConfiguration":{"grantTypes":["client_credentials","password","refresh_token"],"allowedScopes":["orders:read"]}}' \
  "$base/api/v1/admin/realms/acme/clients" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["clientSecret"])')
ada=$(admin -d '{"username":"ada","password":"analytical engine"}' "$base/api/v1/admin/realms/acme/users" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["id"])')
export BASIC
BASIC=$(printf 'agent:%s' "$secret" | base64 -w0)
token_url="$base/realms/acme/protocol/openid-connect/token"

run() { # name, wrk arguments...
  local name="$1"; shift
  if [ -n "${ONLY:-}" ] && [ "$ONLY" != "$name" ]; then return; fi
  echo "== $name"
  if [ "${WARMUP:-yes}" = yes ]; then wrk -t2 -c"$connections" -d3s "$@" >/dev/null; fi
  wrk -t2 -c"$connections" -d"${seconds}s" --latency "$@" | grep -E 'Requests/sec|Non-2xx|50%|99%|requests in'
}

FORM="grant_type=client_credentials" run "client_credentials" -s "$root/bench/form.lua" "$token_url"

access=$(curl -sf -u "agent:$secret" -d grant_type=client_credentials "$token_url" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
FORM="token=$access" run "introspection" -s "$root/bench/form.lua" "$token_url/introspect"

if [ -z "${ONLY:-}" ] || [ "$ONLY" = refresh_token ]; then
  python3 "$root/bench/seed_sessions.py" "$work/data/secret.key" "$database" acme agent ada 150000 "$work/refresh.txt"
  # Each refresh token is single-use: no warm-up run, which would spend the tokens the run needs.
  WARMUP=no TOKENS_FILE="$work/refresh.txt" run "refresh_token" -s "$root/bench/refresh.lua" "$token_url"
fi

# An agent acting for Ada under a delegation grant, exchanging her access token again and again.
assistant=$(admin -d '{"id":"assistant","clientConfiguration":{"grantTypes":["client_credentials"],"allowedScopes":["orders:read"],"tokenExchangeEnabled":true}}' \
  "$base/api/v1/admin/realms/acme/clients" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["clientSecret"])')
admin -o /dev/null -d "{\"clientId\":\"assistant\",\"subjectUserId\":\"$ada\",\"scopes\":[\"orders:read\"]}" \
  "$base/api/v1/admin/realms/acme/delegation-grants"
person=$(curl -sf -u "agent:$secret" -d grant_type=password -d username=ada --data-urlencode 'password=analytical engine' \
  -d scope=orders:read "$token_url" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
BASIC=$(printf 'assistant:%s' "$assistant" | base64 -w0) \
  FORM="grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=$person&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token" \
  run "token_exchange" -s "$root/bench/form.lua" "$token_url"

FORM="grant_type=password&username=ada&password=analytical%20engine" \
  run "password" -s "$root/bench/form.lua" "$token_url"
echo "resident memory after the runs: $(grep VmRSS /proc/$pid/status | awk '{print $2, $3}')"

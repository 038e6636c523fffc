#!/usr/bin/env bash
# The JWKS after a registration flood, beside discovery, on loopback with wrk:
#   a realm open to registration receives N registrations from addresses that change each time
#   (behind a trusted proxy, as from a /48 an attacker rotates through), then the realm's JWKS is
#   measured (its size, and requests a second on 32 connections) beside the realm's discovery
#   document, and how many registrations went through.
#
#   bench/jwks.sh sqlite|postgres [registrations] [seconds]
#   BOUNDS=raised bench/jwks.sh sqlite   (the realm's bounds on clients anyone adds set high, so
#                                         that every registration goes through)
#
# Builds and starts a release binary (CASTELLAN_BENCH_BIN runs another build, an earlier commit's,
# for a comparison). Needs wrk, curl and python3.
set -euo pipefail
command -v wrk >/dev/null || { echo "this load run needs wrk: apt-get install wrk" >&2; exit 1; }
registrations="${2:-2000}"
seconds="${3:-10}"
# shellcheck source=bench/service.sh
source "$(dirname "$0")/service.sh" "${1:-sqlite}" 18195 --trusted-proxies 127.0.0.1
admin -o /dev/null -d '{"id":"acme"}' "$base/api/v1/admin/realms"
admin -o /dev/null -X PUT -d '{"clientRegistration":"Open"}' "$base/api/v1/admin/realms/acme"
if [ "${BOUNDS:-}" = raised ]; then
  admin -o /dev/null -X PUT -d '{"selfRegisteredClientsPerMinute":10000,"maxSelfRegisteredClients":1000000}' \
    "$base/api/v1/admin/realms/acme" || echo "(this build has no bounds to raise)"
fi
# A token of the realm's own client, so that the realm has signed with a key.
secret=$(admin -d '{"id":"web","clientConfiguration":{"grantTypes":["client_credentials"]}}' \
  "$base/api/v1/admin/realms/acme/clients" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["clientSecret"])')
curl -sf -o /dev/null -u "web:$secret" -d grant_type=client_credentials "$base/realms/acme/protocol/openid-connect/token"

python3 - "$base" "$registrations" <<'PY'
import http.client, json, sys, time, urllib.parse
base, count = sys.argv[1], int(sys.argv[2])
url = urllib.parse.urlparse(base)
connection = http.client.HTTPConnection(url.hostname, url.port)
body = json.dumps({"client_name": "flood", "redirect_uris": ["http://127.0.0.1/cb"],
                   "token_endpoint_auth_method": "none", "grant_types": ["authorization_code"]})
statuses = {}
started = time.monotonic()
for n in range(count):
    headers = {"content-type": "application/json", "x-forwarded-for": f"2001:db8:{n // 65536:x}:{n % 65536:x}::1"}
    connection.request("POST", "/realms/acme/protocol/openid-connect/register", body, headers)
    answer = connection.getresponse()
    answer.read()
    statuses[answer.status] = statuses.get(answer.status, 0) + 1
took = time.monotonic() - started
print(f"== registrations: {count} in {took:.1f} s, by status {dict(sorted(statuses.items()))}")
PY

certs="$base/realms/acme/protocol/openid-connect/certs"
size=$(curl -sf "$certs" | wc -c)
keys=$(curl -sf "$certs" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["keys"]))')
echo "== jwks: $keys keys, $size bytes"
for name in jwks discovery; do
  case "$name" in
    jwks) address="$certs" ;;
    discovery) address="$base/realms/acme/.well-known/openid-configuration" ;;
  esac
  echo "== $name"
  wrk -t2 -c32 -d3s "$address" >/dev/null
  wrk -t2 -c32 -d"${seconds}s" --latency "$address" | grep -E 'Requests/sec|Non-2xx|50%|99%|requests in'
done

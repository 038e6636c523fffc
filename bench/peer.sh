#!/usr/bin/env bash
# Castellan beside its peer, node oidc-provider (bench/peer: the certified OpenID provider teams
# embed, pinned as the federation tests pin it), in alternating rounds on loopback, with wrk:
#
#   client_credentials      a client-credentials grant, one ES256-signed JWT access token each
#   client_credentials_x2   the same, the peer run as two node workers (stateless, so it may)
#   introspection           introspection of an access token the service issued
#   login_page              an authorization request of a browser not signed in (Castellan
#                           answers the login form; the peer answers a redirect to its form,
#                           having stored the interaction)
#   single_sign_on          an authorization request of a signed-in browser, answered with a code
#   code_exchange           codes made by single sign-on for CODE_SECONDS (10), then exchanged for
#                           EXCHANGE_SECONDS (3), each once, for an access and an ID token (the
#                           peer's access token is its opaque one: it signs one token, Castellan two)
#   code_exchange_jwt       the same, the peer's client `app` given JWT access tokens for a resource
#                           server, so that it signs two tokens too
#
#   bench/peer.sh sqlite|postgres [connections] [seconds] [rounds]
#   ONLY=single_sign_on bench/peer.sh sqlite
#
# First it prints one ES256 signature's cost on this machine (openssl speed) and the server CPU of
# Castellan's cheapest request (GET /healthz), the floors a token and any request stand on.
# Each round runs Castellan, then the peer, for `seconds` after a 2 s warm-up (code exchanges: no
# warm-up, codes are single-use). It prints every figure, then for each run the mean of each
# service and their ratio. The peer keeps everything in its memory (its default adapter);
# Castellan writes to SQLite or PostgreSQL. Needs wrk, curl, python3 and node with npm.
set -euo pipefail
command -v wrk >/dev/null || { echo "this load run needs wrk: apt-get install wrk" >&2; exit 1; }
connections="${2:-32}"
seconds="${3:-5}"
rounds="${4:-3}"
# shellcheck source=bench/service.sh
source "$(dirname "$0")/service.sh" "${1:-sqlite}" 18195

peer_dir="$root/bench/peer"
if ! cmp -s "$peer_dir/package-lock.json" "$peer_dir/node_modules/.installed-lock.json"; then
  npm ci --prefix "$peer_dir" --no-audit --no-fund --silent
  cp "$peer_dir/package-lock.json" "$peer_dir/node_modules/.installed-lock.json"
fi
peer="http://127.0.0.1:18301"
peer_x2="http://127.0.0.1:18302"
node "$peer_dir/provider.mjs" 18301 >"$work/peer.txt" 2>&1 &
peer_pid=$!
node "$peer_dir/provider.mjs" 18302 2 >"$work/peer_x2.txt" 2>&1 &
peer_x2_pid=$!
trap 'kill $pid $peer_pid $peer_x2_pid 2>/dev/null || true; rm -rf "$work"' EXIT
until grep -q listening "$work/peer.txt" 2>/dev/null && grep -q listening "$work/peer_x2.txt" 2>/dev/null; do
  kill -0 "$peer_pid" "$peer_x2_pid" 2>/dev/null || { cat "$work"/peer*.txt >&2; exit 1; }
  sleep 0.2
done

json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
quote() { python3 -c "import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1], safe=''))" "$1"; }
redirect="http://127.0.0.1:9/callback"
# The verifier and challenge of RFC 7636's example.
verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk
challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM
query="response_type=code&client_id=web&redirect_uri=$(quote "$redirect")&scope=openid&state=s&nonce=n&code_challenge=$challenge&code_challenge_method=S256"
rest="&redirect_uri=$(quote "$redirect")&code_verifier=$verifier"

# Castellan: the realm, its two clients and a person, and a browser signed in as her.
admin -o /dev/null -d '{"id":"acme"}' "$base/api/v1/admin/realms"
admin -o /dev/null -d '{"name":"orders:read"}' "$base/api/v1/admin/realms/acme/scopes"
agent=$(admin -d '{"id":"agent","clientConfiguration":{"grantTypes":["client_credentials"],"allowedScopes":["orders:read"]}}' \
  "$base/api/v1/admin/realms/acme/clients" | json '["data"]["clientSecret"]')
web=$(admin -d "{\"id\":\"web\",\"clientConfiguration\":{\"grantTypes\":[\"authorization_code\"],\"redirectUris\":[\"$redirect\"]}}" \
  "$base/api/v1/admin/realms/acme/clients" | json '["data"]["clientSecret"]')
admin -o /dev/null -d '{"username":"ada","password":"analytical engine"}' "$base/api/v1/admin/realms/acme/users"
token_url="$base/realms/acme/protocol/openid-connect/token"
auth_url="$base/realms/acme/protocol/openid-connect/auth?$query"
jar="$work/castellan.cookies"
form=$(curl -sf -c "$jar" "$auth_url" | python3 -c '
import html, re, sys, urllib.parse
page = sys.stdin.read()
fields = re.findall(r"<input type=\"hidden\" name=\"([^\"]+)\" value=\"([^\"]*)\">", page)
fields += [("username", "ada"), ("password", "analytical engine")]
print(urllib.parse.urlencode([(n, html.unescape(v)) for n, v in fields]))')
curl -s -o /dev/null -b "$jar" -c "$jar" -d "$form" "$base/realms/acme/protocol/openid-connect/auth/login"
cookie="castellan_session=$(awk '$6 == "castellan_session" { print $7 }' "$jar")"
access=$(curl -sf -u "agent:$agent" -d grant_type=client_credentials -d scope=orders:read "$token_url" | json '["access_token"]')

# The peer: a browser signed in through its development pages, and an access token of `web`.
peer_auth="$peer/auth?$query"
pjar="$work/peer.cookies"
interaction=$(curl -s -c "$pjar" -b "$pjar" -o /dev/null -w '%{redirect_url}' "$peer_auth")
curl -s -o /dev/null -c "$pjar" -b "$pjar" "$interaction"
resume=$(curl -s -c "$pjar" -b "$pjar" -o /dev/null -w '%{redirect_url}' -d 'prompt=login&login=ada&password=x' "$interaction")
curl -s -o /dev/null -c "$pjar" -b "$pjar" "$resume"
peer_cookie=$(awk '$6 ~ /^_session/ { printf "%s%s=%s", (n++ ? "; " : ""), $6, $7 }' "$pjar")
code=$(curl -s -H "Cookie: $peer_cookie" -o /dev/null -w '%{redirect_url}' "$peer_auth" | sed 's/.*[?&]code=\([^&]*\).*/\1/')
peer_access=$(curl -sf -u web:web-secret -d grant_type=authorization_code -d "code=$code" \
  -d "redirect_uri=$redirect" -d "code_verifier=$verifier" "$peer/token" | json '["access_token"]')

b64() { printf '%s' "$1" | base64 -w0; }
wrk_() { wrk -t2 -c"$connections" "$@"; }
# Each run is a function for Castellan and one for the peer, given wrk's duration arguments.
castellan_client_credentials() {
  FORM="grant_type=client_credentials&scope=orders%3Aread" BASIC=$(b64 "agent:$agent") \
    wrk_ "$@" -s "$root/bench/form.lua" "$token_url"
}
peer_client_credentials() {
  FORM="grant_type=client_credentials&scope=orders%3Aread" BASIC=$(b64 agent:agent-secret) \
    wrk_ "$@" -s "$root/bench/form.lua" "$peer/token"
}
castellan_client_credentials_x2() { castellan_client_credentials "$@"; }
peer_client_credentials_x2() {
  FORM="grant_type=client_credentials&scope=orders%3Aread" BASIC=$(b64 agent:agent-secret) \
    wrk_ "$@" -s "$root/bench/form.lua" "$peer_x2/token"
}
castellan_introspection() {
  FORM="token=$access" BASIC=$(b64 "agent:$agent") wrk_ "$@" -s "$root/bench/form.lua" "$token_url/introspect"
}
peer_introspection() {
  FORM="token=$peer_access" BASIC=$(b64 web:web-secret) wrk_ "$@" -s "$root/bench/form.lua" "$peer/token/introspection"
}
castellan_login_page() { wrk_ "$@" "$auth_url"; }
peer_login_page() { wrk_ "$@" "$peer_auth"; }
castellan_single_sign_on() { wrk_ "$@" -H "Cookie: $cookie" "$auth_url"; }
peer_single_sign_on() { wrk_ "$@" -H "Cookie: $peer_cookie" "$peer_auth"; }
exchanges() { # authorization URL, cookie, client id:secret, token URL, wrk duration arguments...
  local auth="$1" with="$2" client="$3" token="$4"; shift 4
  rm -f "$work"/codes*
  COOKIE="$with" CODES_PREFIX="$work/codes" wrk_ -d"${CODE_SECONDS:-10}s" -s "$root/bench/codes.lua" "$auth" >/dev/null
  cat "$work"/codes* >"$work/all-codes.txt"
  echo "  codes made: $(wc -l <"$work/all-codes.txt")" >&2
  [ -s "$work/all-codes.txt" ] || { echo "no authorization request was answered with a code: $auth" >&2; return 1; }
  BASIC=$(b64 "$client") CODES_FILE="$work/all-codes.txt" REST="$rest" \
    wrk_ -d"${EXCHANGE_SECONDS:-3}s" -s "$root/bench/code_exchange.lua" "$token"
}
castellan_code_exchange() { exchanges "$auth_url" "$cookie" "web:$web" "$token_url" "$@"; }
peer_code_exchange() { exchanges "$peer_auth" "$peer_cookie" web:web-secret "$peer/token" "$@"; }
castellan_code_exchange_jwt() { castellan_code_exchange "$@"; }
peer_code_exchange_jwt() { exchanges "${peer_auth/client_id=web/client_id=app}" "$peer_cookie" app:app-secret "$peer/token" "$@"; }

figures="$work/figures.txt"
# The CPU time a process has used, user and system, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
ticks_per_second=$(getconf CLK_TCK)
measure() { # service, run: runs it, prints its figures and appends "run service requests/s"
  local service="$1" name="$2" out process before requests
  # The server's CPU per request, where one process serves the run (not the two-worker peer).
  case "$service/$name" in
    */code_exchange* | peer/client_credentials_x2) process="" ;;
    castellan/*) process=$pid ;;
    peer/*) process=$peer_pid ;;
  esac
  [ -z "$process" ] || before=$(cpu_ticks "$process")
  out=$("${service}_${name}" -d"${seconds}s" --latency)
  printf '%s\n' "$out" | grep -E 'Requests/sec|Non-2xx|non-2xx|50%|99%' | sed "s/^/  $service: /"
  if [ -n "$process" ]; then
    requests=$(printf '%s\n' "$out" | awk '/requests in/ { print $1 }')
    echo "  $service: server CPU $(( ($(cpu_ticks "$process") - before) * 1000000 / ticks_per_second / requests )) µs a request"
  fi
  echo "$name $service $(printf '%s\n' "$out" | awk '/Requests\/sec/ { print $2 }')" >>"$figures"
}
# The floor a signed token stands on: one ES256 signature on this machine, now.
if command -v openssl >/dev/null; then
  openssl speed -seconds 2 ecdsap256 2>/dev/null | awk '/256 bits ecdsa/ { printf "== one ES256 signature: %.1f µs (openssl speed)\n", 1000000 / $7 }'
fi
# The floor every request stands on: Castellan's cheapest route, GET /healthz, through the same
# middleware (request id, client address, access log, metrics) and at the same load.
wrk_ -d2s "$base/healthz" >/dev/null
floor_before=$(cpu_ticks "$pid")
floor=$(wrk_ -d"${seconds}s" "$base/healthz")
floor_requests=$(printf '%s\n' "$floor" | awk '/requests in/ { print $1 }')
echo "== the HTTP floor: GET /healthz, $(printf '%s\n' "$floor" | awk '/Requests\/sec/ { print $2 }') requests/s," \
  "server CPU $(( ($(cpu_ticks "$pid") - floor_before) * 1000000 / ticks_per_second / floor_requests )) µs a request"
for name in client_credentials client_credentials_x2 introspection login_page single_sign_on code_exchange code_exchange_jwt; do
  [ -z "${ONLY:-}" ] || [ "$ONLY" = "$name" ] || continue
  for round in $(seq 1 "$rounds"); do
    echo "== $name, round $round"
    for service in castellan peer; do
      [[ "$name" = code_exchange* ]] || "${service}_${name}" -d2s >/dev/null
      measure "$service" "$name"
    done
  done
done

echo "== means (requests/s) and ratio"
python3 - "$figures" <<'SUMMARY'
import collections, sys
runs = collections.OrderedDict()
for line in open(sys.argv[1]):
    name, service, rate = line.split()
    runs.setdefault(name, collections.defaultdict(list))[service].append(float(rate))
for name, services in runs.items():
    ours, theirs = (sum(v) / len(v) for v in (services["castellan"], services["peer"]))
    print(f"{name:24} castellan {ours:9,.0f}   peer {theirs:9,.0f}   ratio {ours / theirs:5.2f}")
SUMMARY

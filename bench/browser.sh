#!/usr/bin/env bash
# Load run of browser sign-in on loopback, with wrk: the login page (an authorization request of
# a browser that is not signed in, answered with the rendered form), single sign-on (an
# authorization request of a signed-in browser, answered with a code: a client session, a code
# and a login_succeeded event written each time), and code exchanges at the token endpoint (codes
# made by a single sign-on run just before, exchanged within their 60 seconds); then whole browser
# sign-ins (the page, the form with the password, the code exchanged) beside password grants at
# the same concurrency (PAIR_CONNECTIONS, 4 by default, one per wrk thread): both are bounded by
# the password hash.
#
#   bench/browser.sh sqlite|postgres [connections] [seconds]
#   ONLY=login_page bench/browser.sh sqlite         (one run: login_page, single_sign_on,
#                                                    code_exchange or whole_sign_in, which runs
#                                                    the password grant beside it)
#
# Needs wrk (Debian package `wrk`), curl and python3.
set -euo pipefail
command -v wrk >/dev/null || { echo "this load run needs wrk: apt-get install wrk" >&2; exit 1; }
connections="${2:-32}"
seconds="${3:-15}"
# shellcheck source=bench/service.sh
source "$(dirname "$0")/service.sh" "${1:-sqlite}" 18193
redirect="http://127.0.0.1:9/callback"
admin -o /dev/null -d '{"id":"acme"}' "$base/api/v1/admin/realms"
secret=$(admin -d "{\"id\":\"web\",\"name\":\"The web app\",\"clientConfiguration\":{\"grantTypes\":[\"authorization_code\",\"password\"],\"redirectUris\":[\"$redirect\"]}}" \
  "$base/api/v1/admin/realms/acme/clients" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["clientSecret"])')
admin -o /dev/null -d '{"username":"ada","password":"analytical engine"}' "$base/api/v1/admin/realms/acme/users"
# The verifier and challenge of RFC 7636's example.
verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk
challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM
auth_url="$base/realms/acme/protocol/openid-connect/auth?response_type=code&client_id=web&redirect_uri=$(python3 -c "import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1], safe=''))" "$redirect")&scope=openid&state=s&nonce=n&code_challenge=$challenge&code_challenge_method=S256"

run() { # name, wrk arguments...
  local name="$1"; shift
  if [ -n "${ONLY:-}" ] && [ "$ONLY" != "$name" ]; then return; fi
  echo "== $name"
  wrk -t2 -c"$connections" -d3s "$@" >/dev/null
  wrk -t2 -c"$connections" -d"${seconds}s" --latency "$@" | grep -E 'Requests/sec|Non-2xx|50%|99%|requests in'
}

run "login_page" "$auth_url"

# A browser signed in once: its session cookie, from the login form's answer.
jar="$work/cookies.txt"
page=$(curl -sf -c "$jar" "$auth_url")
form=$(printf '%s' "$page" | python3 -c '
import html, re, sys, urllib.parse
page = sys.stdin.read()
fields = re.findall(r"<input type=\"hidden\" name=\"([^\"]+)\" value=\"([^\"]*)\">", page)
fields += [("username", "ada"), ("password", "analytical engine")]
print(urllib.parse.urlencode([(n, html.unescape(v)) for n, v in fields]))')
curl -s -o /dev/null -b "$jar" -c "$jar" -d "$form" "$base/realms/acme/protocol/openid-connect/auth/login"
session=$(awk '$6 == "castellan_session" { print $7 }' "$jar")
[ -n "$session" ] || { echo "the sign-in set no session cookie" >&2; exit 1; }
# Every answer is a 303 with a code: wrk counts it as Non-2xx.
run "single_sign_on" -H "Cookie: castellan_session=$session" "$auth_url"

if [ -z "${ONLY:-}" ] || [ "$ONLY" = code_exchange ]; then
  # Codes live 60 seconds: made for a few seconds, then exchanged at once, each one once.
  echo "== code_exchange"
  COOKIE="castellan_session=$session" CODES_PREFIX="$work/codes" \
    wrk -t2 -c"$connections" -d"${CODE_SECONDS:-10}s" -s "$root/bench/codes.lua" "$auth_url" >/dev/null
  cat "$work"/codes* > "$work/all-codes.txt"
  echo "codes made: $(wc -l < "$work/all-codes.txt")"
  BASIC=$(printf 'web:%s' "$secret" | base64 -w0) CODES_FILE="$work/all-codes.txt" \
    REST="&redirect_uri=$(python3 -c "import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1], safe=''))" "$redirect")&code_verifier=$verifier" \
    wrk -t2 -c"$connections" -d"${EXCHANGE_SECONDS:-3}s" --latency -s "$root/bench/code_exchange.lua" \
    "$base/realms/acme/protocol/openid-connect/token" | grep -E 'Requests/sec|non-2xx|50%|99%|requests in'
fi

if [ -z "${ONLY:-}" ] || [ "$ONLY" = whole_sign_in ]; then
  pair="${PAIR_CONNECTIONS:-4}"
  rest="&redirect_uri=$(python3 -c "import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1], safe=''))" "$redirect")&code_verifier=$verifier"
  whole() { # wrk duration
    QUERY="${auth_url#*\?}" REALM_PATH=/realms/acme BASIC=$(printf 'web:%s' "$secret" | base64 -w0) \
      USERNAME=ada PASSWORD=analytical%20engine REST="$rest" \
      wrk -t"$pair" -c"$pair" -d"$1" -s "$root/bench/sign_in.lua" "$base"
  }
  grants() { # wrk duration
    FORM="grant_type=password&username=ada&password=analytical%20engine" BASIC=$(printf 'web:%s' "$secret" | base64 -w0) \
      wrk -t"$pair" -c"$pair" -d"$1" --latency -s "$root/bench/form.lua" "$base/realms/acme/protocol/openid-connect/token"
  }
  echo "== whole_sign_in ($pair connections)"
  whole 3s >/dev/null
  whole "${seconds}s" | grep -E 'sign-ins completed|requests in'
  echo "== password_grant ($pair connections)"
  grants 3s >/dev/null
  grants "${seconds}s" | grep -E 'Requests/sec|Non-2xx|requests in'
fi

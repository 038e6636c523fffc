#!/usr/bin/env bash
# Load run of browser sign-in on loopback, with wrk: the login page (an authorization request of
# a browser that is not signed in, answered with the rendered form), and single sign-on (an
# authorization request of a signed-in browser, answered with a code: a client session, a code
# and a login_succeeded event written each time).
#
#   bench/browser.sh sqlite|postgres [connections] [seconds]
#   ONLY=login_page bench/browser.sh sqlite         (one run: login_page or single_sign_on)
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
admin -o /dev/null -d "{\"id\":\"web\",\"name\":\"The web app\",\"clientConfiguration\":{\"grantTypes\":[\"authorization_code\"],\"redirectUris\":[\"$redirect\"]}}" \
  "$base/api/v1/admin/realms/acme/clients"
admin -o /dev/null -d '{"username":"ada","password":"analytical engine"}' "$base/api/v1/admin/realms/acme/users"
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

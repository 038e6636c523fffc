#!/usr/bin/env bash
# Load runs of attack protection on loopback, with wrk:
#   blocked — password sign-ins from a source the service blocked (refused before any account
#             lookup, with no database work);
#   failed  — failed password sign-ins from 65,536 forwarded addresses per wrk thread, each for a
#             name the realm never had, so that every attempt is counted and decided on and none is
#             refused: the cost detection adds to a failed sign-in (Argon2id dominates it);
#   stuffing — bench/stuffing.py: 100,000 sign-ins over 10,000 names from 50 sources, then the
#             incidents and counts the service recorded.
#
#   bench/protection.sh sqlite|postgres [connections] [seconds]
#   ONLY=blocked bench/protection.sh sqlite     (one run: blocked, failed or stuffing)
#
# Starts a release build on a fresh database with one realm, one confidential client and one
# person, has 127.0.0.1 fail against 8 unknown accounts (which blocks it for 15 minutes), then runs
# wrk's password grants from it: every answer is 429 TooManyRequests.
# Needs wrk (Debian package `wrk`), curl, python3 and, for PostgreSQL, psql.
set -euo pipefail
command -v wrk >/dev/null || { echo "this load run needs wrk: apt-get install wrk" >&2; exit 1; }
connections="${2:-32}"
seconds="${3:-10}"
# shellcheck source=bench/service.sh
source "$(dirname "$0")/service.sh" "${1:-sqlite}" 18192 --trusted-proxies 127.0.0.1
password_client
admin -o /dev/null -d '{"username":"ada","password":"analytical engine"}' "$base/api/v1/admin/realms/acme/users"
for n in 1 2 3 4 5 6 7 8; do
  curl -s -o /dev/null -u "shop:$secret" -d grant_type=password -d "username=list-$n" -d password=guess "$token_url"
done
status=$(curl -s -o /dev/null -w '%{http_code}' -u "shop:$secret" -d grant_type=password -d username=ada \
  --data-urlencode 'password=analytical engine' "$token_url")
[ "$status" = 429 ] || { echo "the source is not blocked (answer $status)"; exit 1; }

export FORM
FORM="grant_type=password&username=ada&password=analytical%20engine"
wanted() { [ -z "${ONLY:-}" ] || [ "$ONLY" = "$1" ]; }
if wanted blocked; then
  echo "== password sign-ins from a blocked source"
  wrk -t2 -c"$connections" -d3s -s "$root/bench/form.lua" "$token_url" >/dev/null
  wrk -t2 -c"$connections" -d"${seconds}s" --latency -s "$root/bench/form.lua" "$token_url" \
    | grep -E 'Requests/sec|Non-2xx|50%|99%|requests in'
fi
if wanted failed; then
  echo "== failed password sign-ins from many sources"
  wrk -t2 -c"$connections" -d3s -s "$root/bench/forwarded.lua" "$token_url" >/dev/null
  wrk -t2 -c"$connections" -d"${seconds}s" --latency -s "$root/bench/forwarded.lua" "$token_url" \
    | grep -E 'Requests/sec|Non-2xx|50%|99%|requests in'
fi
if wanted stuffing; then
  echo "== credential stuffing: 100,000 attempts, 10,000 names, 50 sources"
  python3 "$root/bench/stuffing.py" "$base" "$key"
fi
echo "resident memory after the runs: $(grep VmRSS /proc/$pid/status | awk '{print $2, $3}')"

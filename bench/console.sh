#!/usr/bin/env bash
# Load run of the console's pages with 10,000 incidents, 100,000 delivery attempts and 10,000
# users in the database (bench/seed_console.py), each page for a while with wrk, on loopback.
#
#   bench/console.sh sqlite|postgres [connections] [seconds]
#
# Starts a release build on a fresh database, creates the realm acme and its client shop, stops it,
# seeds, starts it again with an admin rate limit no load run reaches (the console's calls of the
# admin API count against the person's limit, 300 a minute by default), checks every page answers
# 200 to the seeded console session, then measures each after a 2 s warm-up. Needs wrk.
set -euo pipefail
command -v wrk >/dev/null || { echo "this load run needs wrk: apt-get install wrk" >&2; exit 1; }
backend="${1:-sqlite}"
connections="${2:-4}"
seconds="${3:-10}"
config="$(mktemp --suffix=.toml)"
printf '[admin_rate_limits]\nrequests = 100000000\n' >"$config"
# shellcheck source=bench/service.sh
source "$(dirname "${BASH_SOURCE[0]}")/service.sh" "$backend" 18195 --config "$config"
trap 'kill $pid 2>/dev/null || true; rm -rf "$work" "$config"' EXIT

admin -o /dev/null -d '{"id":"acme"}' "$base/api/v1/admin/realms"
admin -o /dev/null -d '{"id":"shop","clientConfiguration":{"grantTypes":["client_credentials"]}}' \
  "$base/api/v1/admin/realms/acme/clients"
kill "$pid"
wait "$pid" || true
python3 "$root/bench/seed_console.py" "$work/data/secret.key" "$database" "$work/cookie.txt"
# PostgreSQL plans from the statistics and visibility maps autovacuum keeps up within a minute or
# so of a bulk load; make them now, as a database that has been running would have them.
if [ "$backend" = postgres ]; then psql "$database" -qc "VACUUM ANALYZE"; fi
"$bin" "${args[@]}" >"$work/out.txt" 2>"$work/err.txt" &
pid=$!
until curl -sf "127.0.0.1:18195/readyz" >/dev/null; do
  kill -0 "$pid" 2>/dev/null || { cat "$work/err.txt" >&2; echo "the service did not start again" >&2; exit 1; }
done

cookie="castellan_console=$(cat "$work/cookie.txt")"
first() { python3 -c 'import json,sys; print(json.load(sys.stdin)["pagination"]["items"][0]["id"])'; }
incident=$(admin "$base/api/v1/admin/threat-incidents?pageSize=1" | first)
endpoint=$(admin "$base/api/v1/admin/realms/acme/clients/shop/webhooks" | first)
hooks="/console/realms/acme/clients/shop/webhooks/$endpoint"
pages=(
  "/console/attack-protection?days=90"
  "/console/attack-protection/incidents"
  "/console/attack-protection/incidents?pageSize=96&incidentStatus=Resolved&realmId=acme"
  "/console/attack-protection/incidents/$incident"
  "/console/attack-protection/exposures"
  "/console/realms/acme"
  "$hooks?view=overview"
  "$hooks?view=events"
  "$hooks?view=deliveries"
  "/console/realms/acme/delegation-grants"
)
for page in "${pages[@]}"; do
  status=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $cookie" "$base$page")
  [ "$status" = 200 ] || { echo "$page answered $status" >&2; exit 1; }
done

# wrk runs at most one thread per connection.
threads=$((connections < 2 ? connections : 2))
echo "console pages, $connections connections, ${seconds} s each ($backend)"
printf '%-92s %10s %9s %9s %9s\n' page requests/s p50 p99 errors
for page in "${pages[@]}"; do
  wrk -t"$threads" -c"$connections" -d2s -H "Cookie: $cookie" "$base$page" >/dev/null
  out=$(wrk -t"$threads" -c"$connections" -d"${seconds}s" --latency -H "Cookie: $cookie" "$base$page")
  rate=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  errors=$(awk '/Non-2xx/ {print $5}' <<<"$out")
  printf '%-92s %10s %9s %9s %9s\n' "$(sed -e "s/$incident/{incident}/" -e "s/$endpoint/{endpoint}/" <<<"$page")" "$rate" "$p50" "$p99" "${errors:-0}"
done

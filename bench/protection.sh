#!/usr/bin/env bash
# Load run of attack protection on loopback, with wrk: password sign-ins from a source the service
# blocked (refused before any account lookup, with no database work).
#
#   bench/protection.sh sqlite|postgres [connections] [seconds]
#
# Starts a release build on a fresh database with one realm, one confidential client and one
# person, has 127.0.0.1 fail against 8 unknown accounts (which blocks it for 15 minutes), then runs
# wrk's password grants from it: every answer is 429 TooManyRequests.
# Needs wrk (Debian package `wrk`), curl, python3 and, for PostgreSQL, psql.
set -euo pipefail
backend="${1:-sqlite}"
connections="${2:-32}"
seconds="${3:-10}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
port=18192
cd "$work"

cargo build --release --quiet -p castellan --manifest-path "$root/Cargo.toml"
bin="${CARGO_TARGET_DIR:-$root/target}/release/castellan"
args=(serve --policies "$root/policies" --listen "127.0.0.1:$port")
if [ "$backend" = postgres ]; then
  url="${CASTELLAN_BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/castellan_bench}"
  psql "${url%/*}/postgres" -qc "DROP DATABASE IF EXISTS ${url##*/}" -c "CREATE DATABASE ${url##*/}"
  args+=(--database-url "$url")
fi
"$bin" "${args[@]}" >"$work/out.txt" 2>"$work/err.txt" &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
until curl -sf "127.0.0.1:$port/readyz" >/dev/null; do :; done

key=$(grep -o 'cstl_key_[A-Za-z0-9_-]*' "$work/out.txt" | head -n 1)
admin() { curl -sf -H "x-api-key: $key" -H 'content-type: application/json' "$@"; }
base="http://127.0.0.1:$port"
admin -o /dev/null -d '{"id":"acme"}' "$base/api/v1/admin/realms"
secret=$(admin -d '{"id":"shop","clientConfiguration":{"grantTypes":["password"]}}' \
  "$base/api/v1/admin/realms/acme/clients" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["clientSecret"])')
admin -o /dev/null -d '{"username":"ada","password":"analytical engine"}' "$base/api/v1/admin/realms/acme/users"
token_url="$base/realms/acme/protocol/openid-connect/token"
for n in 1 2 3 4 5 6 7 8; do
  curl -s -o /dev/null -u "shop:$secret" -d grant_type=password -d "username=list-$n" -d password=guess "$token_url"
done
status=$(curl -s -o /dev/null -w '%{http_code}' -u "shop:$secret" -d grant_type=password -d username=ada \
  --data-urlencode 'password=analytical engine' "$token_url")
[ "$status" = 429 ] || { echo "the source is not blocked (answer $status)"; exit 1; }

export BASIC FORM
BASIC=$(printf 'shop:%s' "$secret" | base64 -w0)
FORM="grant_type=password&username=ada&password=analytical%20engine"
echo "== password sign-ins from a blocked source"
wrk -t2 -c"$connections" -d3s -s "$root/bench/form.lua" "$token_url" >/dev/null
wrk -t2 -c"$connections" -d"${seconds}s" --latency -s "$root/bench/form.lua" "$token_url" \
  | grep -E 'Requests/sec|Non-2xx|50%|99%|requests in'
echo "resident memory after the run: $(grep VmRSS /proc/$pid/status | awk '{print $2, $3}')"

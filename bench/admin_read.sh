#!/usr/bin/env bash
# Load run: authenticated GET /api/v1/admin/realms/{realm} on loopback, with wrk.
#
#   bench/admin_read.sh sqlite|postgres [connections] [seconds]
#
# With CASTELLAN_BENCH_REDIS_URL set (redis://127.0.0.1:6379/15, say), the service counts in that
# Redis: each request then takes its rate-limit token there, in one round trip.
#
# Starts a release build of the service on a fresh database, creates a realm, adds 5,000 Owner
# keys (each caller may make 300 requests a minute, so a load of 10,000 a second needs
# thousands of callers), warms up for 4 s, then measures. Also reports start-up to ready on the
# existing database and the idle resident memory. Needs wrk (Debian package `wrk`).
set -euo pipefail
command -v wrk >/dev/null || { echo "this load run needs wrk: apt-get install wrk" >&2; exit 1; }
backend="${1:-sqlite}"
connections="${2:-32}"
seconds="${3:-15}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
port=18190
cd "$work"

cargo build --release --quiet -p castellan --manifest-path "$root/Cargo.toml"
bin="${CARGO_TARGET_DIR:-$root/target}/release/castellan"
args=(serve --policies "$root/policies" --listen "127.0.0.1:$port")
if [ -n "${CASTELLAN_BENCH_REDIS_URL:-}" ]; then
  args+=(--redis-url "$CASTELLAN_BENCH_REDIS_URL")
fi
if [ "$backend" = postgres ]; then
  url="${CASTELLAN_BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/castellan_bench}"
  psql "${url%/*}/postgres" -qc "DROP DATABASE IF EXISTS ${url##*/}" -c "CREATE DATABASE ${url##*/}"
  args+=(--database-url "$url")
  database="$url"
else
  database="$work/data/castellan.db"
fi

start() {
  "$bin" "${args[@]}" >"$work/out.txt" 2>"$work/err.txt" &
  pid=$!
  until curl -sf "127.0.0.1:$port/readyz" >/dev/null; do :; done
}

start
key=$(grep -o 'cstl_key_[A-Za-z0-9_-]*' "$work/out.txt" | head -n 1)
curl -sf -o /dev/null -H "x-api-key: $key" -H 'content-type: application/json' -d '{"id":"acme"}' \
  "127.0.0.1:$port/api/v1/admin/realms"
python3 "$root/bench/seed_keys.py" "$work/data/secret.key" "$database" 5000 "$work/keys.txt"
kill "$pid"; wait "$pid" || true

begun=$(date +%s%N)
start
ready=$(date +%s%N)
echo "start-up to ready on the existing database: $(( (ready - begun) / 1000000 )) ms"
sleep 2
echo "idle resident memory: $(grep VmRSS /proc/$pid/status | awk '{print $2, $3}')"

url="http://127.0.0.1:$port/api/v1/admin/realms/acme"
KEYS_FILE="$work/keys.txt" wrk -t2 -c"$connections" -d4s -s "$root/bench/keys.lua" "$url" >/dev/null
KEYS_FILE="$work/keys.txt" wrk -t2 -c"$connections" -d"${seconds}s" --latency -s "$root/bench/keys.lua" "$url"
echo "resident memory after the run: $(grep VmRSS /proc/$pid/status | awk '{print $2, $3}')"
kill "$pid"; wait "$pid" || true
rm -rf "$work"

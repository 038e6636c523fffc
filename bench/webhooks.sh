#!/usr/bin/env bash
# Load run of webhook delivery on loopback:
#   throughput — a backlog of signed deliveries to one HTTPS receiver, from a fresh start of the
#                service until every attempt is recorded Succeeded (fan-out, payload component,
#                signing, sending and recording all included);
#   latency    — events raised one after the other through the admin API, and for each the time
#                from the event to its first attempt being sent.
#
#   bench/webhooks.sh sqlite|postgres [events] [latency-samples]
#
# The backlog is seeded by copying one real `user_created` event in the outbox while the service
# is stopped. Needs curl, python3 and sqlite3 or psql.
set -euo pipefail
backend="${1:-sqlite}"
events="${2:-20000}"
samples="${3:-250}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
port=18192
receiver_port=18443
cd "$work"

# CASTELLAN_BENCH_BIN runs another build (an earlier commit's, for a comparison) instead.
[ -n "${CASTELLAN_BENCH_BIN:-}" ] || cargo build --release --quiet -p castellan --manifest-path "$root/Cargo.toml"
cargo build --release --quiet -p castellan-tests --example webhook_receiver --manifest-path "$root/Cargo.toml"
target="${CARGO_TARGET_DIR:-$root/target}/release"
bin="${CASTELLAN_BENCH_BIN:-$target/castellan}"
"$target/examples/webhook_receiver" "$receiver_port" "$work/authority.pem" >"$work/receiver.txt" &
receiver=$!
until [ -s "$work/authority.pem" ]; do sleep 0.05; done

args=(serve --policies "$root/policies" --listen "127.0.0.1:$port"
  --webhook-allowed-networks 127.0.0.0/8 --webhook-ca-file "$work/authority.pem")
if [ "$backend" = postgres ]; then
  url="${CASTELLAN_BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/castellan_bench}"
  psql "${url%/*}/postgres" -qc "DROP DATABASE IF EXISTS ${url##*/}" -c "CREATE DATABASE ${url##*/}"
  args+=(--database-url "$url")
  sql() { psql "$url" -Atqc "$1"; }
else
  sql() { sqlite3 "$work/data/castellan.db" "$1"; }
fi
pid=
start() {
  "$bin" "${args[@]}" >>"$work/out.txt" 2>>"$work/err.txt" &
  pid=$!
  until curl -sf "127.0.0.1:$port/readyz" >/dev/null; do sleep 0.01; done
}
trap 'kill $pid $receiver 2>/dev/null || true; rm -rf "$work"' EXIT
start

key=$(grep -o 'cstl_key_[A-Za-z0-9_-]*' "$work/out.txt" | head -n 1)
admin() { curl -sf -H "x-api-key: $key" -H 'content-type: application/json' "$@"; }
base="http://127.0.0.1:$port/api/v1/admin"
admin -o /dev/null -d '{"id":"acme"}' "$base/realms"
admin -o /dev/null -d '{"id":"shop","clientConfiguration":{"grantTypes":["client_credentials"]}}' "$base/realms/acme/clients"
admin -o /dev/null -d "{\"name\":\"Load\",\"url\":\"https://127.0.0.1:$receiver_port/hooks\",\"events\":[\"user_created\"]}" \
  "$base/realms/acme/clients/shop/webhooks"
admin -o /dev/null -d '{"username":"first"}' "$base/realms/acme/users"
succeeded() { sql "SELECT COUNT(*) FROM webhook_attempts WHERE state = 'Succeeded'"; }
until [ "$(succeeded)" = 1 ]; do sleep 0.05; done

echo "== throughput: $events deliveries ($backend)"
kill -TERM "$pid"; wait "$pid" || true
sql "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $events)
     INSERT INTO event_outbox (id, event_type, account_id, realm_id, client_id, created_at, data)
     SELECT 'seed' || i || '-' || e.id, e.event_type, e.account_id, e.realm_id, e.client_id, e.created_at, e.data
     FROM event_outbox e, n WHERE e.event_type = 'user_created'"
began=$(date +%s%N)
start
until [ "$(succeeded)" -ge $((events + 1)) ]; do sleep 0.1; done
ended=$(date +%s%N)
python3 -c "
seconds = ($ended - $began) / 1e9
print(f'{$events} deliveries in {seconds:.2f} s: {$events / seconds:,.0f} deliveries/s')"
sql "SELECT COUNT(*) FROM webhook_attempts WHERE state <> 'Succeeded'" | sed 's/^/not succeeded: /'

echo "== latency: $samples events one after the other"
for n in $(seq 1 "$samples"); do
  admin -o /dev/null -d "{\"username\":\"sample-$n\"}" "$base/realms/acme/users"
done
until [ "$(succeeded)" -ge $((events + 1 + samples)) ]; do sleep 0.05; done
sql "SELECT a.sent_at - e.created_at FROM webhook_attempts a JOIN event_outbox e ON e.id = a.event_id
     WHERE a.kind = 'Event' AND e.id NOT LIKE 'seed%' ORDER BY 1" | python3 -c "
import sys
values = [int(line) for line in sys.stdin if line.strip()]
pick = lambda p: values[min(len(values) - 1, (len(values) * p + 99) // 100 - 1)]
print(f'{len(values)} events: event to first attempt p50 {pick(50)} ms, p99 {pick(99)} ms, max {values[-1]} ms')"

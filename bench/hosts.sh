#!/usr/bin/env bash
# Load run of one, two and three hosts behind HAProxy (the configuration of deploy/haproxy.cfg,
# with other ports), sharing one PostgreSQL database and one Redis, with wrk through the balancer:
# client_credentials grants and token exchanges under a delegation grant, and the CPU time each
# process used during each run (from /proc/<pid>/stat).
#
#   bench/hosts.sh [connections] [seconds]
#
# Starts release builds on a fresh PostgreSQL database (castellan_bench_hosts) and Redis database
# 9 (emptied first). Host 1 starts alone, then host 2 and host 3 join; HAProxy is started again
# with one more server each time. Each run is preceded by a 3 s warm-up.
# Needs wrk, haproxy, curl, python3, psql, and PostgreSQL and Redis on loopback.
set -euo pipefail
for tool in wrk haproxy curl python3 psql redis-cli; do
  command -v "$tool" >/dev/null || { echo "this load run needs $tool" >&2; exit 1; }
done
connections="${1:-32}"
seconds="${2:-15}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
front=18280

if [ -n "${CASTELLAN_BENCH_BIN:-}" ]; then
  bin="$CASTELLAN_BENCH_BIN"
else
  cargo build --release --quiet -p castellan --manifest-path "$root/Cargo.toml"
  bin="${CARGO_TARGET_DIR:-$root/target}/release/castellan"
fi
url="${CASTELLAN_BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/castellan_bench_hosts}"
psql "${url%/*}/postgres" -qc "DROP DATABASE IF EXISTS ${url##*/}" -c "CREATE DATABASE ${url##*/}"
redis="redis://127.0.0.1:6379/9"
redis-cli -n 9 flushdb >/dev/null

hosts=()
balancer=""
stop_all() {
  [ -n "$balancer" ] && kill "$balancer" 2>/dev/null || true
  for pid in "${hosts[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${hosts[@]}"; do tail --pid="$pid" -f /dev/null 2>/dev/null || true; done
  rm -rf "$work"
}
trap stop_all EXIT

start_host() { # number
  local port=$((front + $1))
  "$bin" serve --policies "$root/policies" --listen "127.0.0.1:$port" --database-url "$url" \
    --redis-url "$redis" --public-url "http://127.0.0.1:$front" --trusted-proxies 127.0.0.1 \
    --secret-key-file "$work/secret.key" >"$work/out$1.txt" 2>"$work/err$1.txt" &
  hosts+=($!)
  until curl -sf "127.0.0.1:$port/readyz" >/dev/null; do
    kill -0 "${hosts[-1]}" 2>/dev/null || { cat "$work/err$1.txt" >&2; echo "host $1 did not start" >&2; exit 1; }
  done
}

start_balancer() { # number of hosts
  if [ -n "$balancer" ]; then
    kill "$balancer"
    tail --pid="$balancer" -f /dev/null
  fi
  sed -e "s/127.0.0.1:8080/127.0.0.1:$front/" -e '/log 127.0.0.1:514/d' \
    -e "s/127.0.0.1:808\([1-9]\)/127.0.0.1:1828\1/" "$root/deploy/haproxy.cfg" \
    | awk -v n="$1" '!/^ *server host/ || substr($2, 5) + 0 <= n' >"$work/haproxy.cfg"
  haproxy -D -f "$work/haproxy.cfg" -p "$work/haproxy.pid"
  balancer=$(cat "$work/haproxy.pid")
  until curl -sf "127.0.0.1:$front/readyz" >/dev/null; do :; done
}

# CPU time (user + system, in clock ticks) of the processes.
ticks() { for pid in "$@"; do awk '{ sum += $14 + $15 } END { print sum + 0 }' "/proc/$pid/stat" 2>/dev/null || echo 0; done; }
sum_ticks() { local total=0; for t in $(ticks "$@"); do total=$((total + t)); done; echo "$total"; }
hz=$(getconf CLK_TCK)

run() { # name, wrk arguments...
  local name="$1"; shift
  wrk -t2 -c"$connections" -d3s "$@" >/dev/null
  local postgres redis_pid before_hosts before_pg before_redis before_lb
  postgres=$(pgrep -d ' ' -x postgres)
  redis_pid=$(pgrep -d ' ' -x redis-server)
  read -r -a before_hosts <<<"$(ticks "${hosts[@]}" | tr '\n' ' ')"
  # shellcheck disable=SC2086
  before_pg=$(sum_ticks $postgres)
  # shellcheck disable=SC2086
  before_redis=$(sum_ticks $redis_pid)
  before_lb=$(sum_ticks "$balancer")
  local TIMEFORMAT='%U %S'
  { time wrk -t2 -c"$connections" -d"${seconds}s" --latency "$@" >"$work/wrk.txt"; } 2>"$work/wrk_time.txt"
  read -r -a after_hosts <<<"$(ticks "${hosts[@]}" | tr '\n' ' ')"
  local line="hosts=${#hosts[@]} $name:"
  line+=" $(awk '/Requests\/sec/ { print $2 }' "$work/wrk.txt") req/s,"
  line+=" p50 $(awk '$1 == "50%" { print $2 }' "$work/wrk.txt"), p99 $(awk '$1 == "99%" { print $2 }' "$work/wrk.txt"),"
  line+=" non-2xx $(awk '/Non-2xx/ { print $5 }' "$work/wrk.txt")"
  echo "${line%,}"
  local cpu="   CPU seconds in ${seconds} s:"
  for i in "${!hosts[@]}"; do
    cpu+=" host$((i + 1)) $(python3 -c "print(f'{(${after_hosts[$i]} - ${before_hosts[$i]}) / $hz:.1f}')")"
  done
  # shellcheck disable=SC2086
  cpu+=", haproxy $(python3 -c "print(f'{($(sum_ticks "$balancer") - $before_lb) / $hz:.1f}')")"
  # shellcheck disable=SC2086
  cpu+=", postgres $(python3 -c "print(f'{($(sum_ticks $postgres) - $before_pg) / $hz:.1f}')")"
  # shellcheck disable=SC2086
  cpu+=", redis $(python3 -c "print(f'{($(sum_ticks $redis_pid) - $before_redis) / $hz:.1f}')")"
  cpu+=", wrk $(awk '{ printf "%.1f", $1 + $2 }' "$work/wrk_time.txt")"
  echo "$cpu"
}

start_host 1
key=$(grep -o 'cstl_key_[A-Za-z0-9_-]*' "$work/out1.txt" | head -n 1)
admin() { curl -sf -H "x-api-key: $key" -H 'content-type: application/json' "$@"; }
base="http://127.0.0.1:$((front + 1))"
json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
admin -o /dev/null -d '{"id":"acme"}' "$base/api/v1/admin/realms"
admin -o /dev/null -d '{"name":"orders:read"}' "$base/api/v1/admin/realms/acme/scopes"
secret=$(admin -d '{"id":"agent","clientConfiguration":{"grantTypes":["client_credentials","password"],"allowedScopes":["orders:read"]}}' \
  "$base/api/v1/admin/realms/acme/clients" | json '["data"]["clientSecret"]')
ada=$(admin -d '{"username":"ada","password":"analytical engine"}' "$base/api/v1/admin/realms/acme/users" | json '["data"]["id"]')
assistant=$(admin -d '{"id":"assistant","clientConfiguration":{"grantTypes":["client_credentials"],"allowedScopes":["orders:read"],"tokenExchangeEnabled":true}}' \
  "$base/api/v1/admin/realms/acme/clients" | json '["data"]["clientSecret"]')
admin -o /dev/null -d "{\"clientId\":\"assistant\",\"subjectUserId\":\"$ada\",\"scopes\":[\"orders:read\"]}" \
  "$base/api/v1/admin/realms/acme/delegation-grants"
token_url="http://127.0.0.1:$front/realms/acme/protocol/openid-connect/token"
export BASIC FORM

for count in 1 2 3; do
  [ "$count" -gt 1 ] && start_host "$count"
  start_balancer "$count"
  BASIC=$(printf 'agent:%s' "$secret" | base64 -w0)
  FORM="grant_type=client_credentials"
  run client_credentials -s "$root/bench/form.lua" "$token_url"
  # Ada's access token (5 minutes), exchanged again and again by the agent acting for her.
  person=$(curl -sf -u "agent:$secret" -d grant_type=password -d username=ada \
    --data-urlencode 'password=analytical engine' -d scope=orders:read "$token_url" | json '["access_token"]')
  BASIC=$(printf 'assistant:%s' "$assistant" | base64 -w0)
  FORM="grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=$person&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token"
  run token_exchange -s "$root/bench/form.lua" "$token_url"
done

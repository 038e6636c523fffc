#!/usr/bin/env bash
# Worst-case protocol forms against a release build on loopback: how long the service takes to
# answer them, and whether /healthz keeps answering while two of them are in flight.
#
#   bench/hostile_input.sh sqlite|postgres
#   CASTELLAN_BENCH_BIN=/path/to/other/castellan bench/hostile_input.sh sqlite   (another build)
#
# Bodies: 110,000 distinct parameter names (879 KB, within the default body limit) at the token endpoint, and one `scope` of
# 100,000 distinct names at the client_credentials grant. Needs curl and python3.
set -euo pipefail
# shellcheck source=bench/service.sh
source "$(dirname "$0")/service.sh" "${1:-sqlite}" 18193
admin -o /dev/null -d '{"id":"acme"}' "$base/api/v1/admin/realms"
secret=$(admin -d '{"id":"agent","clientConfiguration":{"grantTypes":["client_credentials"]}}' \
  "$base/api/v1/admin/realms/acme/clients" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["clientSecret"])')
token_url="$base/realms/acme/protocol/openid-connect/token"
python3 -c 'print("&".join(f"p{i}=" for i in range(110000)), end="")' >"$work/parameters.txt"
python3 -c 'print("grant_type=client_credentials&scope=" + "+".join(f"s{i}" for i in range(100000)), end="")' >"$work/scopes.txt"

post() { # body file, extra curl arguments...
  local file="$1"; shift
  curl -s -o "$work/answer.txt" -w '%{http_code} %{time_total}\n' -H 'content-type: application/x-www-form-urlencoded' \
    --data-binary "@$file" "$@" "$token_url"
}
echo "== 110,000 parameters (status, seconds), five times"
for _ in 1 2 3 4 5; do post "$work/parameters.txt"; done
echo "   answer: $(head -c 200 "$work/answer.txt")"
echo "== 100,000 scopes (status, seconds), five times"
for _ in 1 2 3 4 5; do post "$work/scopes.txt" -u "agent:$secret"; done
echo "   answer: $(head -c 200 "$work/answer.txt")"
echo "== /healthz while two 110,000-parameter bodies are in flight (seconds)"
post "$work/parameters.txt" >/dev/null &
post "$work/parameters.txt" >/dev/null &
sleep 0.2 # both bodies sent and being read
curl -s -o /dev/null -w '%{time_total}\n' "$base/healthz"
wait

#!/usr/bin/env bash
# Failed password sign-ins from many forwarded addresses, each for a name the realm never had
# (bench/forwarded.lua): what counting and deciding add to a failed sign-in. Run it against this
# build and, with CASTELLAN_BENCH_BIN, against a build without attack protection to compare.
#
#   bench/failed_sign_ins.sh sqlite|postgres [connections] [seconds]
set -euo pipefail
command -v wrk >/dev/null || { echo "this load run needs wrk: apt-get install wrk" >&2; exit 1; }
connections="${2:-32}"
seconds="${3:-30}"
# shellcheck source=bench/service.sh
source "$(dirname "$0")/service.sh" "${1:-sqlite}" 18195 --trusted-proxies 127.0.0.1
password_client
wrk -t2 -c"$connections" -d3s -s "$root/bench/forwarded.lua" "$token_url" >/dev/null
wrk -t2 -c"$connections" -d"${seconds}s" --latency -s "$root/bench/forwarded.lua" "$token_url" \
  | grep -E 'Requests/sec|Non-2xx|50%|99%|requests in'

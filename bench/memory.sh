#!/usr/bin/env bash
# Resident memory of the service: idle once started (every default component loaded), where it
# lies (the largest mappings), and after a load run of client-credentials grants and single
# sign-on with 32 connections.
#
#   bench/memory.sh sqlite|postgres [seconds]
#
# Needs wrk, curl and python3.
set -euo pipefail
command -v wrk >/dev/null || { echo "this load run needs wrk: apt-get install wrk" >&2; exit 1; }
seconds="${2:-10}"
# shellcheck source=bench/service.sh
source "$(dirname "$0")/service.sh" "${1:-sqlite}" 18197

resident() { # label: the process's resident memory now, and the largest mappings with `detail`
  local kb
  kb=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")
  printf '%-34s %6.1f MB\n' "$1" "$(echo "$kb / 1024" | bc -l)"
  if [ "${2:-}" = detail ]; then
    awk '/^(Rss|Anonymous|Shared_Clean|Private_Clean|Private_Dirty):/ { printf "  %-16s %7.1f MB\n", $1, $2 / 1024 }' \
      "/proc/$pid/smaps_rollup"
    python3 - "$pid" <<'MAPPINGS'
import re, sys
sizes, name = {}, None
for line in open(f"/proc/{sys.argv[1]}/smaps"):
    head = re.match(r"^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$", line)
    if head:
        name = head.group(1) or "[anonymous]"
    elif line.startswith("Rss:"):
        sizes[name] = sizes.get(name, 0) + int(line.split()[1])
for name, kb in sorted(sizes.items(), key=lambda item: -item[1])[:6]:
    print(f"  {kb / 1024:7.1f} MB  {name}")
MAPPINGS
  fi
}

sleep 3
resident "idle, started" detail
password_client
admin -o /dev/null -d '{"username":"ada","password":"analytical engine"}' "$base/api/v1/admin/realms/acme/users"
resident "idle, a realm and a client"
FORM="grant_type=password&username=ada&password=analytical%20engine" wrk -t2 -c32 -d"${seconds}s" \
  -s "$root/bench/form.lua" "$token_url" | grep Requests/sec
resident "after password sign-ins"
secret_cc=$(admin -d '{"id":"agent","clientConfiguration":{"grantTypes":["client_credentials"]}}' \
  "$base/api/v1/admin/realms/acme/clients" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["clientSecret"])')
FORM="grant_type=client_credentials" BASIC=$(printf 'agent:%s' "$secret_cc" | base64 -w0) \
  wrk -t2 -c32 -d"${seconds}s" -s "$root/bench/form.lua" "$token_url" | grep Requests/sec
resident "after client credentials" detail

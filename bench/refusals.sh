#!/usr/bin/env bash
# How long a wrong password takes, by what the name holds: an unknown name, an account with the
# service's own Argon2id hash, and an account still holding an imported bcrypt hash (cost 10, as
# Auth0 exports), through the password grant, one request at a time, each from another address
# (behind a trusted proxy, so that attack protection does not block the run).
#
#   bench/refusals.sh sqlite|postgres [tries]
#
# Prints the median and the spread of each, in milliseconds. Needs curl and python3.
set -euo pipefail
tries="${2:-40}"
# shellcheck source=bench/service.sh
source "$(dirname "$0")/service.sh" "${1:-sqlite}" 18197 --trusted-proxies 127.0.0.1
password_client
admin -o /dev/null -d '{"username":"ada","password":"analytical engine"}' "$base/api/v1/admin/realms/acme/users"
# bcrypt (cost 10) of "alan turing enigma", made by Python's crypt.
curl -sf -o /dev/null -H "x-api-key: $key" -H 'content-type: application/json' \
  -d '[{"username":"alan","passwordHash":{"algorithm":"bcrypt","value":"$2b$10$/YTikKGV3TYW6N2mbCClmOHXsaUr5NzeamdtH3fJJNneLGf9qo.Ge"}}]' \
  "$base/api/v1/admin/realms/acme/clients/shop/users/import"
n=0
for name in nobody ada alan; do
  times=()
  for _ in $(seq 1 "$tries"); do
    n=$((n + 1))
    times+=("$(curl -s -o /dev/null -w '%{time_total}' -u "shop:$secret" -H "x-forwarded-for: 198.18.$((n / 250)).$((n % 250 + 1))" \
      -d grant_type=password -d "username=$name" -d password=wrong "$token_url")")
  done
  printf '%s\n' "${times[@]}" | python3 -c "
import statistics, sys
ms = sorted(float(line) * 1000 for line in sys.stdin)
print(f'== $name: median {statistics.median(ms):.1f} ms, from {ms[0]:.1f} to {ms[-1]:.1f} ms over {len(ms)} tries')"
done

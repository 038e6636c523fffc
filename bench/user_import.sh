#!/usr/bin/env bash
# Load run: importing users with bcrypt hashes through POST …/users/import as JSON Lines.
#
#   bench/user_import.sh sqlite|postgres [users]
#
# Starts a release build on a fresh database, writes a JSON Lines file of `users` people (100,000
# by default; e-mail, names, a bcrypt hash of cost 10 each, stored as exported: no hashing at
# import), posts it with curl, and while it runs reads the import's progress once a second
# through GET …/users/import. Prints the rate, the peak resident memory of the service, and the
# progress seen.
set -euo pipefail
backend="${1:-sqlite}"
users="${2:-100000}"
source "$(dirname "$0")/service.sh" "$backend" 18195

admin -o /dev/null -d '{"id":"acme"}' "$base/api/v1/admin/realms"
admin -o /dev/null -d '{"id":"web","clientConfiguration":{"grantTypes":["password"]}}' "$base/api/v1/admin/realms/acme/clients"
python3 - "$users" >"$work/users.jsonl" <<'PY'
import json, sys
# Ten distinct bcrypt hashes of cost 10, made by Python's crypt (libxcrypt), cycled.
hashes = [
    "$2b$10$pt8o9fI5WlGMDoPO1Ycc9OEOMZtjr/0vLvcqUJHpLMdcnbbEnsKaC",
    "$2b$10$qZmOhkbXWaaMmqxAU5LahuVG9WD5qXz18GP.nnCqi9E.n6WTNABQy",
    "$2b$10$ZxdPJ.P8ylORwkZ22BmbKOfKCCn73gDrgeV8B/bfvyNNjdniH2.S2",
    "$2b$10$UadFN3jseuPJ393u8RhdPunywilo8l1x4jcboGYllBGqaXvCCWy02",
    "$2b$10$hccUjTflZV0vSpp57zfpqO9C4jRT9hZhJsmghjHscNDOjs/B3jhyO",
    "$2b$10$ggfKe2D6nGg3sxg371FUC.rAiwGvbTn520MOX/.v0T3W2GOfKroQG",
    "$2b$10$YEpZNUxaTkd6FgflVK5So.8ENz.1hHRpAyZorQgMo9X/EZrFYTuz6",
    "$2b$10$oMJAnL.doMfZIiHDqfio.OBi9VUbEYAzat7wker5Ax.P3F1V3fk9y",
    "$2b$10$gZPBNfBFDwcq2xyJuPdzWOMP3WCZ/bNw6HfH6Zu/tGONwVg0jvIwu",
    "$2b$10$vR7A0lM3TrP0BG/t9Pn8e.1ngBZuJsLCnCv.49BJ1yRuHbJi35X7K",
]
for n in range(int(sys.argv[1])):
    print(json.dumps({
        "username": f"person{n:07d}", "email": f"person{n:07d}@example.com",
        "firstName": "Imported", "lastName": f"Person {n}", "emailConfirmed": True,
        "passwordHash": {"algorithm": "bcrypt", "value": hashes[n % len(hashes)]},
    }))
PY
size=$(stat -c %s "$work/users.jsonl")
grep VmRSS "/proc/$pid/status" | awk '{print "resident memory of the service before the import:", $2 / 1024, "MB"}'
import_url="$base/api/v1/admin/realms/acme/clients/web/users/import"
(
  while sleep 1; do
    admin "$import_url?status=Running" | python3 -c '
import json, sys
for job in json.load(sys.stdin)["pagination"]["items"]:
    print("progress:", job["rowsRead"], "rows read,", job["created"], "created")' || true
  done
) &
watcher=$!
trap 'kill $watcher $pid 2>/dev/null || true; rm -rf "$work"' EXIT
start=$(date +%s.%N)
curl -sS -H "x-api-key: $key" -H "content-type: application/x-ndjson" --data-binary "@$work/users.jsonl" "$import_url" >"$work/report.json"
end=$(date +%s.%N)
kill $watcher 2>/dev/null || true
python3 - "$work/report.json" "$start" "$end" "$users" "$size" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))["data"]
seconds = float(sys.argv[3]) - float(sys.argv[2])
users = int(sys.argv[4])
print(f"status {report['status']}: {report['created']} created, {report['refused']} refused of {report['rowsRead']} rows")
print(f"{users} users ({int(sys.argv[5]) / 1e6:.1f} MB) in {seconds:.2f} s: {users / seconds:,.0f} users/s")
PY
grep VmHWM "/proc/$pid/status" | awk '{print "peak RSS of the service:", $2 / 1024, "MB"}'

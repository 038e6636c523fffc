#!/usr/bin/env bash
# Latency of GET /api/v1/admin/realms/acme/users?searchTerm=… in a realm of many people.
#
#   bench/user_search.sh sqlite|postgres [people] [requests per term]
#
# Starts a release build on a fresh database (CASTELLAN_BENCH_BIN runs another build), imports
# `people` people (100,000 by default) through the JSON Lines import, then asks for the first page
# of ten for each term below, one request at a time over one kept-alive connection, and prints the
# matches counted and the median, 99th percentile and slowest answer of each term. The terms run
# from one person to every person, and from one character to a whole address.
set -euo pipefail
backend="${1:-sqlite}"
people="${2:-100000}"
requests="${3:-60}"
source "$(dirname "$0")/service.sh" "$backend" 18196

admin -o /dev/null -d '{"id":"acme"}' "$base/api/v1/admin/realms"
admin -o /dev/null -d '{"id":"web","clientConfiguration":{"grantTypes":["password"]}}' "$base/api/v1/admin/realms/acme/clients"
python3 "$root/bench/people.py" "$people" >"$work/people.jsonl"
started=$(date +%s.%N)
# No `Expect: 100-continue`: earlier builds cut an upload they had answered with `100 Continue` once
# it outlasted the header-read timeout, and comparisons run them too.
curl -sS -H "x-api-key: $key" -H "Expect:" -H "content-type: application/x-ndjson" --data-binary "@$work/people.jsonl" \
  "$base/api/v1/admin/realms/acme/clients/web/users/import" >"$work/report.json"
ended=$(date +%s.%N)
python3 - "$work/report.json" "$started" "$ended" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))["data"]
seconds = float(sys.argv[3]) - float(sys.argv[2])
print(f"imported {report['created']} of {report['rowsRead']} people in {seconds:.1f} s: {report['created'] / seconds:,.0f} a second")
PY
# PostgreSQL plans from the statistics autovacuum gathers within a minute or so of a bulk load;
# gather them now, as a database that has been running would have them.
if [ "$backend" = postgres ]; then psql "$database" -qc "ANALYZE"; fi
python3 "$root/bench/seed_keys.py" "$work/data/secret.key" "$database" 40 "$work/keys.txt"
python3 - "$base" "$work/keys.txt" "$requests" "$people" "$root/bench" <<'PY'
import http.client, json, sys, time, urllib.parse
base, keys, requests = urllib.parse.urlparse(sys.argv[1]), open(sys.argv[2]).read().split(), int(sys.argv[3])
sys.path.insert(0, sys.argv[5])
from people import person
one = person(int(sys.argv[4]) * 2 // 3)["username"]
terms = [
    one,                   # one person, by username
    one.split(".")[1] + "@",  # one person, inside the address
    "lovelace",            # one last name in a hundred
    "amelia",              # one first name in fifty
    "globex",              # one company in twenty
    "example",             # everyone
    # Terms of one or two characters match the start of a field.
    "qz",                  # two characters no field starts with
    "zu",                  # two characters: one last name in a hundred
    "an",                  # two characters: three people in a hundred
    "q",                   # one character no field starts with
    "a",                   # one character: a person in nine
]
connection = http.client.HTTPConnection(base.hostname, base.port)
print(f"{'term':<20} {'matches':>8} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
turn = 0
for term in terms:
    path = "/api/v1/admin/realms/acme/users?pageSize=10&searchTerm=" + urllib.parse.quote(term)
    times = []
    for _ in range(requests + 3):
        turn += 1
        begun = time.perf_counter()
        connection.request("GET", path, headers={"x-api-key": keys[turn % len(keys)]})
        answer = connection.getresponse()
        body = answer.read()
        times.append((time.perf_counter() - begun) * 1000)
        assert answer.status == 200, body
    page = json.loads(body)["pagination"]
    matches = f"{page['totalItems']}{'+' if page.get('totalItemsAtLeast') else ''}"
    times = sorted(times[3:])
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(f"{term:<20} {matches:>8} {times[len(times) // 2]:8.1f} {p99:8.1f} {times[-1]:8.1f}")
PY

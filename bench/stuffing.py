#!/usr/bin/env python3
"""A credential-stuffing simulation against a running service: 100,000 password sign-ins over
10,000 account names (the first 250 real, created here within the admin rate limit) from 50
forwarded source addresses, sent by 4 threads on kept-alive connections; then the incidents,
measures and counts the service recorded.

    bench/stuffing.py BASE_URL API_KEY   (the service must trust 127.0.0.1 as a proxy; the realm
                                          `stuffing` and its client `shop` are created here)
"""
import base64
import http.client
import json
import sys
import threading
import time
import urllib.parse

ATTEMPTS, ACCOUNTS, REAL, SOURCES, THREADS = 100_000, 10_000, 250, 50, 4


def main() -> None:
    base, key = sys.argv[1], sys.argv[2]
    host = urllib.parse.urlsplit(base).netloc

    def admin(method: str, path: str, body: dict | None = None) -> dict:
        connection = http.client.HTTPConnection(host)
        headers = {"x-api-key": key, "content-type": "application/json"}
        connection.request(method, f"/api/v1/admin{path}", json.dumps(body) if body else None, headers)
        response = connection.getresponse()
        answer = json.loads(response.read() or b"{}")
        assert response.status < 300, (path, response.status, answer)
        return answer

    admin("POST", "/realms", {"id": "stuffing"})
    client = {"id": "shop", "clientConfiguration": {"grantTypes": ["password"]}}
    secret = admin("POST", "/realms/stuffing/clients", client)["data"]["clientSecret"]
    basic = base64.b64encode(f"shop:{secret}".encode()).decode()
    for n in range(REAL):
        admin("POST", "/realms/stuffing/users", {"username": f"user{n}", "password": f"real passphrase {n}"})
    statuses: dict[int, int] = {}
    lock = threading.Lock()

    def work(offset: int) -> None:
        connection = http.client.HTTPConnection(host)
        seen: dict[int, int] = {}
        for n in range(offset, ATTEMPTS, THREADS):
            body = urllib.parse.urlencode(
                {"grant_type": "password", "username": f"user{n % ACCOUNTS}", "password": "guess"}
            )
            headers = {
                "Authorization": f"Basic {basic}",
                "Content-Type": "application/x-www-form-urlencoded",
                "X-Forwarded-For": f"203.0.113.{n % SOURCES}",
            }
            connection.request("POST", "/realms/stuffing/protocol/openid-connect/token", body, headers)
            response = connection.getresponse()
            response.read()
            seen[response.status] = seen.get(response.status, 0) + 1
        with lock:
            for status, count in seen.items():
                statuses[status] = statuses.get(status, 0) + count

    started = time.monotonic()
    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    print(f"{ATTEMPTS} attempts in {elapsed:.1f} s ({ATTEMPTS / elapsed:.0f}/s); answers by status: {statuses}")

    incidents = admin("GET", "/threat-incidents?realmId=stuffing")["pagination"]["items"]
    for incident in incidents:
        keys = ("kind", "severity", "status", "detections", "refusedAttempts", "blockedSources", "protectedAccounts")
        print({k: incident[k] for k in keys})
    totals = admin("GET", "/threat-incidents/summary?realmId=stuffing&days=7")["data"]["totals"]
    print(f"summary totals: {totals}")


if __name__ == "__main__":
    main()

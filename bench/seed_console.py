#!/usr/bin/env python3
"""Fills a Castellan database for the console's load run, and opens a console session.

Adds to the realm acme of the bootstrap account: 10,000 users, 10,000 attack-protection incidents
spread over the last 90 days (each with a blocked source), and a paused client endpoint of the
client shop with 100,000 delivery attempts over the last 30 days (nine in ten accepted). Then opens
a console session for the account's Owner, bound to a platform session, as signing in would, and
writes the cookie value to COOKIE_OUT. Rows are written as the service writes them; the service
must be stopped.

usage: seed_console.py SECRET_KEY_FILE DATABASE COOKIE_OUT
  DATABASE is a SQLite file path or a postgres:// URL (psql is used for PostgreSQL).
"""
import hashlib
import hmac
import io
import json
import random
import secrets
import sqlite3
import subprocess
import sys
import time
import uuid

USERS, INCIDENTS, ATTEMPTS = 10_000, 10_000, 100_000
DAY = 86_400_000


def main() -> None:
    key_file, database, cookie_out = sys.argv[1], sys.argv[2], sys.argv[3]
    key = bytes.fromhex(open(key_file).read().strip())
    now = int(time.time() * 1000)
    rng = random.Random(7)
    db = Database(database)
    account, owner = db.one("SELECT account_id, user_id FROM account_members LIMIT 1")

    db.insert("users", ["id", "realm_id", "username", "email", "first_name", "last_name", "email_confirmed",
                        "status", "password_hash", "must_change_password", "created_at", "updated_at"],
              [(str(uuid.uuid4()), "acme", f"person{n}", f"person{n}@example.com", "Person", str(n), 1, "Active",
                None, 0, now - n * 1000, now - n * 1000) for n in range(USERS)])

    kinds = ["CredentialStuffing", "PasswordSpraying", "BruteForce", "PushBombing", "RecoveryAbuse"]
    severities = ["Low", "Medium", "High", "Critical"]
    incidents, measures = [], []
    for n in range(INCIDENTS):
        started = now - rng.randrange(90 * DAY)
        incident = str(uuid.uuid4())
        status = "Active" if n % 500 == 0 else rng.choice(["Resolved", "Resolved", "Dismissed"])
        closed = None if status == "Active" else started + 1_800_000
        incidents.append((incident, account, "acme", "shop", rng.choice(kinds), rng.choice(severities), status,
                          started, started, started + 60_000, closed, 1, rng.randrange(1, 40), 1,
                          rng.randrange(0, 5), rng.randrange(0, 2)))
        address = f"198.51.{rng.randrange(256)}.{rng.randrange(256)}"
        measures.append((str(uuid.uuid4()), incident, account, "acme", "SourceBlocked", address, None, None,
                         None, json.dumps(["8 accounts from one source"]), started, started + 900_000, None,
                         None, None))
    db.insert("threat_incidents", ["id", "account_id", "realm_id", "client_id", "kind", "severity", "status",
                                   "started_at", "last_detection_at", "last_activity_at", "closed_at",
                                   "detections", "refused_attempts", "blocked_sources", "protected_accounts",
                                   "exposed_passwords"], incidents)
    db.insert("threat_measures", ["id", "incident_id", "account_id", "realm_id", "kind", "target_address",
                                  "target_user_id", "country", "network", "reasons", "created_at", "lapses_at",
                                  "lifted_at", "lifted_by", "resolved_at"], measures)

    endpoint = str(uuid.uuid4())
    db.insert("webhook_endpoints", ["id", "account_id", "realm_id", "kind", "client_id", "name", "url", "description",
                                    "events", "retries", "first_retry_after_seconds", "status", "secret_sealed",
                                    "secret_last_four", "consecutive_failures", "created_at", "updated_at"],
              [(endpoint, account, "acme", "Client", "shop", "Orders", "https://hooks.example.com/castellan", None,
                json.dumps(["user_created", "login_succeeded"]), 5, 60, "Paused", "sealed elsewhere", "abcd", 0,
                now - 30 * DAY, now - 30 * DAY)])
    attempts = []
    for n in range(ATTEMPTS):
        at = now - rng.randrange(30 * DAY)
        accepted = n % 10 != 0
        event_type = "user_created" if n % 3 else "login_succeeded"
        payload = json.dumps({"id": f"evt_{n}", "type": event_type, "data": {"user_id": str(n)}})
        attempts.append((str(uuid.uuid4()), endpoint, "acme", "Client", "shop", f"evt_{n}", event_type, "Event", 0,
                         payload, "Succeeded" if accepted else "Failed", at, None, at, 200 if accepted else 500,
                         "{}", "" if accepted else "upstream failed", rng.randrange(20, 400),
                         None if accepted else "answered 500", at))
    db.insert("webhook_attempts", ["id", "endpoint_id", "realm_id", "endpoint_kind", "client_id", "event_id",
                                   "event_type", "kind", "retry_number", "payload", "state", "due_at",
                                   "claimed_until", "sent_at", "response_status", "response_headers",
                                   "response_body", "latency_ms", "error", "created_at"], attempts)
    # Each event's fan-out to the client, as the fan-out records it beside the first attempt.
    db.insert("webhook_fan_outs", ["event_id", "realm_id", "endpoint_kind", "client_id", "event_type", "created_at"],
              [(a[5], "acme", "Client", "shop", a[6], a[19]) for a in attempts])

    # The Owner's platform session and a console session bound to it, as signing in makes them.
    session = str(uuid.uuid4())
    db.insert("sessions", ["id", "realm_id", "client_id", "user_id", "ip_address", "user_agent",
                           "authentication_methods", "created_at", "last_active_at", "expires_at", "ended_at",
                           "end_reason", "browser_session_id"],
              [(session, "platform", "platform", owner, "127.0.0.1", "load run", '["pwd"]', now, now,
                now + DAY, None, None, None)])
    cookie = secrets.token_urlsafe(32)
    digest = hmac.new(key, cookie.encode(), hashlib.sha256).hexdigest()
    db.insert("console_sessions", ["id", "session_id", "user_id", "csrf_token", "created_at", "expires_at"],
              [(digest, session, owner, secrets.token_urlsafe(32), now, now + DAY // 2)])
    db.close()
    with open(cookie_out, "w") as out:
        out.write(cookie)


class Database:
    """SQLite through sqlite3, PostgreSQL through psql's COPY."""

    def __init__(self, database: str) -> None:
        self.url = database if database.startswith("postgres") else None
        self.sqlite = None if self.url else sqlite3.connect(database)

    def one(self, query: str):
        if self.sqlite:
            return self.sqlite.execute(query).fetchone()
        out = subprocess.run(["psql", self.url, "-Atqc", query], check=True, capture_output=True, text=True)
        return tuple(out.stdout.strip().split("|"))

    def insert(self, table: str, columns: list, rows: list) -> None:
        if self.sqlite:
            marks = ", ".join("?" * len(columns))
            self.sqlite.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)
            return
        text = io.StringIO()
        for row in rows:
            text.write("\t".join("\\N" if v is None else str(v).replace("\\", "\\\\").replace("\t", "\\t")
                                 .replace("\n", "\\n") for v in row) + "\n")
        copy = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
        subprocess.run(["psql", self.url, "-qc", copy], input=text.getvalue(), check=True, text=True)

    def close(self) -> None:
        if self.sqlite:
            self.sqlite.commit()
            self.sqlite.close()


if __name__ == "__main__":
    main()

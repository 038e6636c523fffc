#!/usr/bin/env python3
"""Adds N sign-in sessions, each with one refresh token, for a user and client of a Castellan
database, for load runs of the refresh grant. Rows are written exactly as the service writes them:
the value is `cstl_rt_<token id>.<secret>` and is stored as HMAC-SHA256 under the deployment's secret key.

usage: seed_sessions.py SECRET_KEY_FILE DATABASE REALM CLIENT USERNAME N TOKENS_OUT
  DATABASE is a SQLite file path or a postgres:// URL (psql is used for PostgreSQL).
"""
import hashlib
import hmac
import secrets
import sqlite3
import subprocess
import sys
import time
import uuid


def main() -> None:
    key_file, database, realm, client, username, count, out = sys.argv[1:8]
    key = bytes.fromhex(open(key_file).read().strip())
    now = int(time.time() * 1000)
    day = 24 * 3600 * 1000
    values, statements = [], []
    for _ in range(int(count)):
        session, token = str(uuid.uuid4()), str(uuid.uuid4())
        value = f"cstl_rt_{token}." + secrets.token_urlsafe(32)
        digest = hmac.new(key, value.encode(), hashlib.sha256).hexdigest()
        statements.append(
            "INSERT INTO sessions (id, realm_id, client_id, user_id, ip_address, user_agent, authentication_methods, "
            f"created_at, last_active_at, expires_at) SELECT '{session}', '{realm}', '{client}', id, '127.0.0.1', "
            f"'load', '[\"pwd\"]', {now}, {now}, {now + day} FROM users WHERE realm_id = '{realm}' "
            f"AND username = '{username}';"
        )
        statements.append(
            "INSERT INTO refresh_tokens (id, session_id, token_hash, scopes, created_at, expires_at) "
            f"VALUES ('{token}', '{session}', '{digest}', '[]', {now}, {now + day});"
        )
        values.append(value)
    script = "\n".join(statements)
    if database.startswith("postgres"):
        subprocess.run(["psql", database, "-q", "-1"], input=script, text=True, check=True)
    else:
        with sqlite3.connect(database) as db:
            db.executescript("BEGIN;" + script + "COMMIT;")
    with open(out, "w") as f:
        f.write("\n".join(values) + "\n")


if __name__ == "__main__":
    main()

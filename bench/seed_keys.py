#!/usr/bin/env python3
"""Adds N Owner API keys to the bootstrap account of a Castellan database, for load runs.

The admin API allows each caller 300 requests a minute, so a load of thousands of requests a
second needs thousands of callers. Keys are stored exactly as the service stores them: HMAC-SHA256
of the value under the deployment's secret key.

usage: seed_keys.py SECRET_KEY_FILE DATABASE N KEYS_OUT
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
    key_file, database, count, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    key = bytes.fromhex(open(key_file).read().strip())
    now = int(time.time() * 1000)
    rows, values = [], []
    for n in range(count):
        value = "cstl_key_" + secrets.token_urlsafe(32)
        digest = hmac.new(key, value.encode(), hashlib.sha256).hexdigest()
        rows.append((str(uuid.uuid4()), f"load key {n}", digest, value[-4:], now))
        values.append(value)
    insert = (
        "INSERT INTO secrets (id, account_id, secret_type, name, value_hash, value_last_four, roles, "
        "created_at, updated_at) SELECT '{}', id, 'ApiKey', '{}', '{}', '{}', '[\"Owner\"]', {}, {} "
        "FROM accounts LIMIT 1;"
    )
    statements = "\n".join(insert.format(i, name, h, last, t, t) for i, name, h, last, t in rows)
    if database.startswith("postgres"):
        subprocess.run(["psql", database, "-q", "-1"], input=statements, text=True, check=True)
    else:
        with sqlite3.connect(database) as db:
            db.executescript("BEGIN;" + statements + "COMMIT;")
    with open(out, "w") as f:
        f.write("\n".join(values) + "\n")


if __name__ == "__main__":
    main()

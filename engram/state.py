"""Mutable runtime state in ``state.db``: fetch counts and hook sessions (stdlib only).

Hosts run hooks in parallel, so the file is in WAL mode with a busy
timeout, and every read-modify-write happens in one IMMEDIATE transaction.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from .index import apply_migrations

BUSY_TIMEOUT_MS = 5000


def open_state(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        conn.execute("PRAGMA journal_mode = WAL")
    if conn.execute("PRAGMA user_version").fetchone()[0] == 0:
        with contextlib.suppress(sqlite3.OperationalError):  # another process migrated first
            apply_migrations(conn, "state")
    return conn


@contextlib.contextmanager
def write_transaction(conn: sqlite3.Connection):
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def fetch_counts(conn: sqlite3.Connection) -> dict[tuple[str, str], int]:
    return {(scope, mid): count for scope, mid, count in conn.execute("SELECT scope, id, count FROM fetches")}


def record_fetches(conn: sqlite3.Connection, keys: list[tuple[str, str]]) -> None:
    with write_transaction(conn):
        conn.executemany(
            "INSERT INTO fetches (scope, id, count) VALUES (?, ?, 1)"
            " ON CONFLICT (scope, id) DO UPDATE SET count = count + 1",
            keys,
        )

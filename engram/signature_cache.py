"""The long signature tables (`signature_tables`) as lookups of the words a task writes.

Loading the tables' 40,000 entries costs a process about 9 ms, a third of a prompt hook. They are
read instead from a SQLite copy in the user's folder (`$ENGRAM_CACHE_DIR`, else
`<config dir>/cache/`), which a first use writes from the tables and which a routed task asks for
its own words' rows only. Where the copy cannot be written or read, the tables themselves answer,
as before. Stdlib only.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable

from .config import user_config_dir
from .errors import debug
from .paths import remove_if_present, replacing, sqlite_uri

TABLES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "signature_tables.py")
CHUNK = 500  # keys one query asks for
SEPARATOR = " "  # between a row's technologies: no technology's name holds one
TABLES = ("first_words", "signatures", "code")


class Tables:
    """The tables loaded into this process (`signature_tables`)."""

    def __init__(self) -> None:
        from . import signature_tables

        self.rows: dict[str, dict] = {
            "first_words": signature_tables.FIRST_WORDS,
            "signatures": signature_tables.SIGNATURES,
            "code": signature_tables.CODE,
        }

    def get(self, table: str, keys: Iterable[str]) -> dict:
        rows = self.rows[table]
        return {key: rows[key] for key in keys if key in rows}


class Copy:
    """The tables' SQLite copy; the tables themselves once it fails to answer."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.fallback: Tables | None = None

    def get(self, table: str, keys: Iterable[str]) -> dict:
        if self.fallback is None:
            try:
                return self._rows(table, list(dict.fromkeys(keys)))
            except sqlite3.Error as exc:  # damaged since it was opened: answered without it
                debug(f"the signature tables' copy cannot be read ({exc}); the tables answer")
                self.fallback = Tables()
        return self.fallback.get(table, keys)

    def _rows(self, table: str, keys: list[str]) -> dict:
        out: dict = {}
        for start in range(0, len(keys), CHUNK):
            chunk = keys[start : start + CHUNK]
            marks = ", ".join("?" * len(chunk))
            for key, value in self.conn.execute(f"SELECT key, value FROM {table} WHERE key IN ({marks})", chunk):
                out[key] = value if isinstance(value, int) else tuple(value.split(SEPARATOR))
        return out


_LOOKUP: Tables | Copy | None = None


def lookup() -> Tables | Copy:
    """This process's lookup: the copy where it can be read, else the tables (writing the copy
    for the processes after this one)."""
    global _LOOKUP
    if _LOOKUP is None:
        path = copy_path()
        _LOOKUP = _opened(path) if path else None
        if _LOOKUP is None:
            _LOOKUP = Tables()
            if path:
                write_copy(path, _LOOKUP)
    return _LOOKUP


def copy_path() -> str | None:
    """Where the copy of these tables is: named for the tables file's size and time, so that
    another engram's tables (an upgrade, an edit) have a copy of their own."""
    try:
        stat = os.stat(TABLES_FILE)
    except OSError:
        return None
    folder = os.environ.get("ENGRAM_CACHE_DIR") or os.path.join(user_config_dir(), "cache")
    return os.path.join(folder, f"signatures-{stat.st_size}-{stat.st_mtime_ns}.db")


def _opened(path: str) -> Copy | None:
    if not os.path.isfile(path):
        return None
    try:
        # immutable: never written after its rename into place, so no locks are taken to read it
        conn = sqlite3.connect(sqlite_uri(path) + "&immutable=1", uri=True, check_same_thread=False)
        if {name for (name,) in conn.execute("SELECT name FROM sqlite_master")} >= set(TABLES):
            return Copy(conn)
        conn.close()
    except sqlite3.Error as exc:
        debug(f"the signature tables' copy {path} cannot be read ({exc}); it is written again")
    with contextlib.suppress(OSError):
        remove_if_present(path)
    return None


def write_copy(path: str, tables: Tables) -> None:
    """Write the copy beside no other (older copies removed), atomically: a reader sees a whole
    copy or none. Best effort: a folder that cannot be written leaves the tables to answer."""
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(folder):  # a writer's temp file is hidden (`paths.temp_name`): never one
            if name.startswith("signatures-") and os.path.join(folder, name) != path:
                with contextlib.suppress(OSError):
                    remove_if_present(os.path.join(folder, name))
        with replacing(path) as temp:
            conn = sqlite3.connect(temp)
            try:
                with conn:
                    for table, rows in tables.rows.items():
                        kind = "INTEGER" if table == "first_words" else "TEXT"
                        conn.execute(
                            f"CREATE TABLE {table} (key TEXT PRIMARY KEY, value {kind} NOT NULL) WITHOUT ROWID"
                        )
                        conn.executemany(
                            f"INSERT INTO {table} VALUES (?, ?)",
                            (
                                (key, value if isinstance(value, int) else SEPARATOR.join(value))
                                for key, value in rows.items()
                            ),
                        )
            finally:
                conn.close()
    except (OSError, sqlite3.Error) as exc:
        debug(f"the signature tables' copy {path} is not written ({exc}); the tables answer")

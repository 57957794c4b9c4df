"""The index file: schema migrations, opening and validating (stdlib only).

Migrations are numbered ``.sql`` files applied in order by ``PRAGMA
user_version``. They ship inside the wheel as ``engram/_migrations``; in a
source checkout they are read from the top-level ``migrations/`` folder.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3

from .errors import EngramError
from .paths import read_text, sqlite_uri

APPLICATION_ID = 1701728114  # "engr"
# The last index migration's number; a constant, so opening an index never reads the migration
# files (tests check it matches them).
INDEX_SCHEMA_VERSION = 2
STATE_SCHEMA_VERSION = 3  # the same for state.db
# Bump when what the compiler stores changes without a schema change: indexes rebuild themselves.
COMPILER_VERSION = "8"
REQUIRED_TABLES = ("meta", "files", "memories", "edges", "memories_fts")
MAX_MIGRATION_BYTES = 1024 * 1024
FTS_COLUMNS = ("id", "tags", "directive", "summary", "triggers", "body", "paths")


class IndexFileError(EngramError):
    """An index file that cannot be used; the message is one line for the user."""


def _migrations_dir(kind: str) -> str:
    from importlib import resources  # only when a database is created: keeps `load` starting fast

    packaged = resources.files("engram") / "_migrations" / kind
    if packaged.is_dir():
        return str(packaged)
    return os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "migrations", kind)


def migrations(kind: str) -> tuple[tuple[int, str], ...]:
    """(version, sql) pairs for ``index`` or ``state``, in order; read only when a database is created."""
    folder = _migrations_dir(kind)
    names = sorted(name for name in os.listdir(folder) if name.endswith(".sql"))
    return tuple((int(name.split("_", 1)[0]), read_text(os.path.join(folder, name), MAX_MIGRATION_BYTES)) for name in names)


def schema_version(kind: str) -> int:
    return migrations(kind)[-1][0]


def apply_migrations(conn: sqlite3.Connection, kind: str) -> None:
    current = conn.execute("PRAGMA user_version").fetchone()[0]
    for version, sql in migrations(kind):
        if version > current:
            try:
                conn.executescript(sql)
            except sqlite3.Error:
                conn.rollback()
                raise


def connect_readonly(path: str) -> sqlite3.Connection:
    """Open an index without ever writing to it (works on read-only media)."""
    conn = sqlite3.connect(sqlite_uri(path), uri=True, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    return conn


def open_index(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """Open and validate an index read-only; raise IndexFileError with a one-line reason."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise IndexFileError(f"{path}: no index file")
    try:
        with open(path, "rb") as handle:
            header = handle.read(16)
    except OSError as exc:
        raise IndexFileError(f"{path}: cannot read index ({exc.strerror or exc})") from None
    if header != b"SQLite format 3\x00":
        raise IndexFileError(f"{path}: not an engram index (not a SQLite file)")
    try:
        conn = connect_readonly(path)
        check_schema(conn, path)
    except sqlite3.DatabaseError as exc:
        raise IndexFileError(f"{path}: corrupt index ({exc})") from None
    return conn


def index_damage(path: str) -> str | None:
    """Why the index file at ``path`` is damaged (not merely outdated): a file to set aside and
    rebuild; None when it is sound as far as SQLite can tell, or absent."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(16)
    except OSError:
        return None
    if header != b"SQLite format 3\x00":
        return "not a SQLite file"
    try:
        conn = connect_readonly(path)
        try:
            if conn.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
                return "a foreign SQLite file"
            status = conn.execute("PRAGMA quick_check").fetchone()[0]
            return None if status == "ok" else "SQLite integrity check failed"
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return f"corrupt ({exc})"


def check_schema(conn: sqlite3.Connection, path: str) -> None:
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    if app_id != APPLICATION_ID:
        raise IndexFileError(f"{path}: not an engram index (a foreign SQLite file)")
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    expected = INDEX_SCHEMA_VERSION
    if version > expected:
        raise IndexFileError(f"{path}: index schema {version} is newer than this engram ({expected}); upgrade engram")
    if version < expected:
        raise IndexFileError(f"{path}: index schema {version} is older than {expected}; run `engram index` to rebuild")
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    missing = [t for t in REQUIRED_TABLES if t not in names]
    if missing:
        raise IndexFileError(f"{path}: corrupt index (missing table {missing[0]})")


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    return {row[0]: row[1] for row in conn.execute("SELECT key, value FROM meta")}


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# Every `memories` column a pack or a generated rule file prints (cards print the directive,
# summary or title; headers the id, type and authority), in the order text_sha256 hashes them.
PRINTED_COLUMNS = ("id", "type", "authority", "tags", "applies_to", "title", "directive", "summary", "body")


def printed_digest(columns: dict[str, str]) -> str:
    """The hash of a memory's printed columns (PRINTED_COLUMNS, as stored)."""
    return sha256_text("\0".join(columns[name] for name in PRINTED_COLUMNS))


def fingerprint(rows) -> str:
    """A digest over (rel, sha256) pairs of every source file, given in path order (``ORDER BY rel``)."""
    digest = hashlib.sha256()
    for rel, sha in rows:
        digest.update(f"{rel}\0{sha or '-'}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()

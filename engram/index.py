"""The index file: its schema, opening and validating; state.db's migrations (stdlib only).

`index.db` is a derived cache: one schema and its version. A file of another
version is rebuilt from its sources (a prebuilt one is refused), so it needs no
migrations. `state.db` persists, so its schema changes are numbered ``.sql``
files applied in order by ``PRAGMA user_version``; they ship inside the wheel as
``engram/_migrations/state``, and in a source checkout they are read from the
top-level ``migrations/state`` folder.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3

from .errors import EngramError
from .paths import read_text, sqlite_uri

APPLICATION_ID = 1701728114  # "engr"
# Bump with any change to INDEX_SCHEMA: every index rebuilds itself.
INDEX_SCHEMA_VERSION = 7
# The last state migration's number; a constant, so opening state.db never reads the migration
# files (a test checks it matches them).
STATE_SCHEMA_VERSION = 4
# Bump when what the compiler stores changes without a schema change: indexes rebuild themselves.
COMPILER_VERSION = "18"
REQUIRED_TABLES = ("meta", "files", "memories", "edges", "memories_fts", "pointed_documents")
MAX_MIGRATION_BYTES = 1024 * 1024
FTS_COLUMNS = ("id", "tags", "directive", "summary", "triggers", "body", "paths")
# Lifecycles no load shows (`lifecycle` omissions, with memories past their `valid_until`).
RETIRED = ("archived", "superseded")
_RETIRED_SQL = "(" + ", ".join(f"'{lifecycle}'" for lifecycle in RETIRED) + ")"
# The memories the visibility rule (HIDDEN_SQL) can hide, whatever the roles, date or
# options of a load: the condition of a partial index, so a load scans those alone (a test checks
# that every memory hidden passes it, and that the hidden set is read from that index).
MAY_BE_HIDDEN = (
    f"ignored OR roles != '[]' OR lifecycle IN {_RETIRED_SQL} OR coalesce(valid_until, '') != '' OR confidence = 'low'"
)

# Why a memory is hidden from a normal load (NULL when visible): the one rule of visibility,
# for routed, tagged, path-matched and fetched memories alike. A partial covering index holds its
# columns for the memories it may hide (`MAY_BE_HIDDEN`).
HIDDEN_SQL = f"""CASE
    WHEN m.ignored THEN 'ignored'
    WHEN :roles != '[]' AND m.roles != '[]' AND NOT EXISTS (
        SELECT 1 FROM json_each(m.roles) AS r WHERE r.value IN (SELECT value FROM json_each(:roles))) THEN 'role'
    WHEN m.lifecycle IN {_RETIRED_SQL} THEN 'lifecycle'
    WHEN coalesce(m.valid_until, '') != '' AND m.valid_until < :today THEN 'lifecycle'
    WHEN m.confidence = 'low' AND NOT :include_low THEN 'confidence'
END"""

INDEX_SCHEMA = f"""
BEGIN;
PRAGMA application_id = {APPLICATION_ID};
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- Every source file seen, valid or not, so `check` can name it and `index` can skip it unchanged.
CREATE TABLE files (
    rel TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    sha256 TEXT,
    status TEXT NOT NULL CHECK (status IN ('ok', 'invalid')),
    error TEXT,
    memory INTEGER
);
CREATE TABLE memories (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    rel TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    authority TEXT NOT NULL,
    confidence TEXT NOT NULL,
    lifecycle TEXT NOT NULL,
    level INTEGER NOT NULL,
    valid_until TEXT,
    roles TEXT NOT NULL,        -- JSON list
    tags TEXT NOT NULL,         -- JSON list
    directive TEXT NOT NULL,
    summary TEXT NOT NULL,
    title TEXT NOT NULL,
    triggers TEXT NOT NULL,     -- JSON list
    applies_to TEXT NOT NULL,   -- JSON list
    depends_on TEXT NOT NULL,   -- JSON list, as written
    updated TEXT,
    body TEXT NOT NULL,         -- agent-visible body
    text_sha256 TEXT NOT NULL,  -- digest of everything printed (PRINTED_COLUMNS)
    source_sha256 TEXT NOT NULL,
    tokens INTEGER NOT NULL,    -- estimated tokens of the body
    ignored INTEGER NOT NULL DEFAULT 0,
    safety TEXT,                -- screening label, NULL when clean
    name_terms TEXT NOT NULL,   -- the id and tag terms (terms.name_terms), what judging compares a query with
    pointed TEXT NOT NULL DEFAULT '' -- the terms of the documents a pointer memory links to (`pointers`), in its body's
);
-- The documents pointer memories link to, with their stat when indexed (zeros: not there), so that
-- a load notices an edited, added or removed one (`freshness.pointed_changed`).
CREATE TABLE pointed_documents (
    memory TEXT NOT NULL,       -- the memory file's rel
    rel TEXT NOT NULL,          -- the document, relative to the project
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    PRIMARY KEY (memory, rel)
);
-- Small indexes scanned instead of every row with its body: the columns of the visibility rule
-- (HIDDEN_SQL) of the memories it may hide, read on every load; the `applies_to` globs, read
-- on every file event of a hook; and the `depends_on` references, checked for unknown ids and
-- cycles by every `index` and `check`.
CREATE INDEX memories_hideable ON memories (ignored, confidence, lifecycle, valid_until, roles)
    WHERE {MAY_BE_HIDDEN};
CREATE INDEX memories_paths ON memories (applies_to) WHERE applies_to != '[]';
CREATE INDEX memories_references ON memories (id, rel, depends_on);
-- What `index` and `check` say no agent sees as written (`freshness.unseen_problems`): memories
-- past their `valid_until`, bodies longer than a pack holds (a table scan cost a no-op `index`
-- 38 ms at 10,000 memories).
CREATE INDEX memories_dated ON memories (valid_until, rel) WHERE valid_until IS NOT NULL;
CREATE INDEX memories_tokens ON memories (tokens, rel);
CREATE TABLE edges (
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    kind TEXT NOT NULL,         -- depends_on | related
    weight REAL NOT NULL DEFAULT 1.0,
    PRIMARY KEY (src, dst, kind)
);
-- Contentless: the term streams are recomputed from `memories` when a row is deleted.
CREATE VIRTUAL TABLE memories_fts USING fts5(
    {", ".join(FTS_COLUMNS)},
    content='', tokenize='unicode61 remove_diacritics 0'
);
PRAGMA user_version = {INDEX_SCHEMA_VERSION};
COMMIT;
"""


class IndexFileError(EngramError):
    """An index file that cannot be used; the message is one line for the user."""


class AnotherVersion(IndexFileError):
    """An index of another schema version: a root's own rebuilds itself, a shared one is refused."""


# What rebuilds an index file: `engram index` writes a root's own index.db, never a shared file.
LOCAL_REBUILD = "run `engram index` to rebuild it"
SHARED_REBUILD = "rebuild it with `engram index --output`"
# A shared file copied over in place breaks whoever reads it then; a rename never does
SHARED_REPLACE = "publish a new one by moving it over the old (`mv`), not by copying over it"


def newer_or_older(built: int | None, ours: int | None) -> str:
    """How an index file's version number compares with this engram's, for "built by ... engram"."""
    if built is None or ours is None or built == ours:
        return "another"
    return "a newer" if built > ours else "an older"


def create_index(conn: sqlite3.Connection) -> None:
    """The tables of a new, empty index file."""
    conn.executescript(INDEX_SCHEMA)


def _state_migrations_dir() -> str:
    from importlib import resources  # only when a state.db is created or migrated: keeps `load` starting fast

    packaged = resources.files("engram") / "_migrations" / "state"
    if packaged.is_dir():
        return str(packaged)
    return os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "migrations", "state")


def state_migrations() -> tuple[tuple[int, str], ...]:
    """(version, sql) pairs of state.db's migrations, in order."""
    folder = _state_migrations_dir()
    names = sorted(name for name in os.listdir(folder) if name.endswith(".sql"))
    return tuple(
        (int(name.split("_", 1)[0]), read_text(os.path.join(folder, name), MAX_MIGRATION_BYTES)) for name in names
    )


def migrate_state(conn: sqlite3.Connection) -> None:
    """Apply the state migrations newer than the file's ``user_version``."""
    current = conn.execute("PRAGMA user_version").fetchone()[0]
    for version, sql in state_migrations():
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


def has_engram_header(path: str) -> bool:
    """Whether the file at ``path`` is an SQLite file with engram's application id in its header
    (offset 68), read without opening it as a database."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(72)
    except OSError:
        return False
    return header[:16] == b"SQLite format 3\x00" and int.from_bytes(header[68:72], "big") == APPLICATION_ID


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
    if version != INDEX_SCHEMA_VERSION:
        which = newer_or_older(version, INDEX_SCHEMA_VERSION)
        raise AnotherVersion(
            f"{path}: built by {which} engram (index schema {version}; this one reads {INDEX_SCHEMA_VERSION})"
        )
    objects = conn.execute("SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view', 'trigger')").fetchall()
    # engram writes neither: a view or trigger in a shared file is code run by every query (a
    # recursive view in place of `memories` spun every hook and load that read it)
    if added := next((f"{kind} {name}" for kind, name in objects if kind != "table"), None):
        raise IndexFileError(f"{path}: not an index engram wrote (it holds the {added})")
    missing = [t for t in REQUIRED_TABLES if t not in {name for _, name in objects}]
    if missing:
        raise IndexFileError(f"{path}: corrupt index (missing table {missing[0]})")


def tuple_cursor(conn: sqlite3.Connection) -> sqlite3.Cursor:
    """A cursor giving plain tuples, whatever the connection's row factory: thousands of rows come back."""
    cursor = conn.cursor()
    cursor.row_factory = None
    return cursor


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


def digest_matches(row) -> bool:
    """Whether a stored memory row's printed columns are text and hash to its `text_sha256`."""
    columns = {name: row[name] for name in PRINTED_COLUMNS}
    return all(isinstance(v, str) for v in columns.values()) and printed_digest(columns) == row["text_sha256"]


STORED_TEXT_SQL = f"SELECT rowid, rel, {', '.join(PRINTED_COLUMNS)}, text_sha256 FROM memories ORDER BY rel"


def fingerprint(rows) -> str:
    """A digest over (rel, sha256) pairs of every source file, given in path order (``ORDER BY rel``)."""
    digest = hashlib.sha256()
    for rel, sha in rows:
        digest.update(f"{rel}\0{sha or '-'}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()

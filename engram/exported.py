"""What an exported index keeps for its readers: answers that cannot change while the file does not.

A shared index (`engram index --output`) is written once and only read after that. Three
answers every load asks of an index cost most in a big one: how many memories hold a term
(FTS5's ``fts5vocab`` counts them by reading the term's whole doclist, about a millisecond for a
common term at 100,000 memories), which memories hold a common term in a given field (one more
doclist read per field), and which memories the visibility rule hides (a quarter of 100,000
generated memories, turned into a Python set on every load). The export writes the term counts
as tables shaped like ``fts5vocab``'s, and the holders and the memories hidden whatever a
load's roles and date as packed rowids; a reader of that file asks those tables instead. A
workspace index changes with every edit and has none of them. Stdlib only.
"""

from __future__ import annotations

import sqlite3
import sys
from array import array
from collections.abc import Iterator

from .index import HIDDEN_SQL, MAY_BE_HIDDEN, tuple_cursor

ROWS_TABLE = "main.exported_rows"  # term, doc: how many memories hold the term (fts5vocab's row table)
COLUMNS_TABLE = "main.exported_columns"  # term, col, doc: per FTS column (fts5vocab's col table)
TABLES = ("exported_rows", "exported_columns", "exported_holders", "exported_hidden")
# The terms `evidence` reads per field (held by more memories than its PER_FIELD_DF), listed per
# column but the body: the memories holding the term there. Reading that from FTS5 reads the
# term's whole doclist for each column; the body's lists are most of the postings (27 of 29
# million at 100,000 generated memories) and stay FTS5 reads. A term without a list is read from
# FTS5 as before, so the two thresholds need not agree.
HOLDERS_FROM_DF = 300
# The rows whose being hidden depends on the load (its roles, its date): read at each load, from
# a partial index of their own. Every other memory is hidden or not whatever the load, except that
# `include_low` shows the low-confidence ones (kept as a reason of their own).
VARYING = "m.roles != '[]' OR coalesce(m.valid_until, '') != ''"
FIXED_REASONS = ("ignored", "lifecycle", "confidence")
ROWID_FORMAT = "q"  # 8-byte ints, packed little-endian whatever machine writes or reads the file

SCHEMA = f"""
CREATE TABLE exported_rows (term TEXT PRIMARY KEY, doc INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE exported_columns (
    term TEXT NOT NULL, col TEXT NOT NULL, doc INTEGER NOT NULL, PRIMARY KEY (term, col)
) WITHOUT ROWID;
CREATE TABLE exported_holders (
    term TEXT NOT NULL, col TEXT NOT NULL, rowids BLOB NOT NULL, PRIMARY KEY (term, col)
) WITHOUT ROWID;
CREATE TABLE exported_hidden (reason TEXT PRIMARY KEY, rowids BLOB NOT NULL);
CREATE INDEX exported_varying ON memories (ignored, confidence, lifecycle, valid_until, roles)
    WHERE {VARYING.replace("m.", "")};
"""
VOCABULARIES = """
CREATE VIRTUAL TABLE IF NOT EXISTS temp.exporting_rows USING fts5vocab(main, memories_fts, row);
CREATE VIRTUAL TABLE IF NOT EXISTS temp.exporting_columns USING fts5vocab(main, memories_fts, col);
"""
# Computed from the index itself: what `write` stores and `findings` compares with.
TERM_ROWS_SQL = "SELECT term, doc FROM temp.exporting_rows"
TERM_COLUMNS_SQL = "SELECT term, col, doc FROM temp.exporting_columns"
HELD_SQL = (  # the (term, column) pairs that get a list of holders
    f"SELECT c.term, c.col FROM {COLUMNS_TABLE} AS c JOIN {ROWS_TABLE} AS r USING (term)"
    f" WHERE r.doc > {HOLDERS_FROM_DF} AND c.col != 'body' ORDER BY c.term, c.col"
)
# A term as FTS5 stores it holds no quote (unicode61 splits on it): quoted as it is, it is one token.
HOLDERS_SQL = "SELECT rowid FROM memories_fts WHERE memories_fts MATCH '{' || ? || '}: \"' || ? || '\"' ORDER BY rowid"
FIXED_HIDDEN_SQL = (
    f"SELECT hidden, rowid FROM (SELECT m.rowid AS rowid, {HIDDEN_SQL} AS hidden FROM memories AS m"
    f" WHERE ({MAY_BE_HIDDEN}) AND NOT ({VARYING})) WHERE hidden IS NOT NULL ORDER BY rowid"
)
FIXED_PARAMS = {"roles": "[]", "today": "", "include_low": 0}  # no row of these depends on roles or date
VARYING_HIDDEN_SQL = (
    f"SELECT m.rowid, {HIDDEN_SQL} AS hidden FROM memories AS m WHERE ({VARYING}) AND hidden IS NOT NULL"
)


def write(conn: sqlite3.Connection) -> None:
    """Add the readers' tables to an exported copy, from its own FTS index and memories."""
    conn.executescript(SCHEMA + VOCABULARIES)
    conn.execute(f"INSERT INTO {ROWS_TABLE} {TERM_ROWS_SQL}")
    conn.execute(f"INSERT INTO {COLUMNS_TABLE} {TERM_COLUMNS_SQL}")
    conn.executemany("INSERT INTO exported_holders (term, col, rowids) VALUES (?, ?, ?)", list(_holders(conn)))
    conn.executemany("INSERT INTO exported_hidden (reason, rowids) VALUES (?, ?)", _fixed_hidden(conn).items())
    conn.executescript("DROP TABLE temp.exporting_rows; DROP TABLE temp.exporting_columns;")


def present(conn: sqlite3.Connection) -> bool:
    """Whether the index file carries the readers' tables (one exported by this version)."""
    found = conn.execute(
        f"SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ({', '.join('?' * len(TABLES))})",
        TABLES,
    ).fetchone()[0]
    return found == len(TABLES)


def holders(conn: sqlite3.Connection, column: str, terms: list[str]) -> set[int] | None:
    """The memories holding any of ``terms`` in ``column``, as exported; None when one of the terms
    has no list there (a rarer term, or the body)."""
    out: set[int] = set()
    for term in terms:
        row = (
            tuple_cursor(conn)
            .execute("SELECT rowids FROM exported_holders WHERE term = ? AND col = ?", (term, column))
            .fetchone()
        )
        if row is None:
            return None
        out.update(_unpacked(row[0]))
    return out


def hidden_by_reason(conn: sqlite3.Connection, params: dict[str, object]) -> dict[str, set[int]]:
    """The memories the visibility rule hides for a load with ``params``, by reason: the fixed
    ones as exported, the varying ones read now."""
    out: dict[str, set[int]] = {}
    for reason, blob in tuple_cursor(conn).execute("SELECT reason, rowids FROM exported_hidden"):
        # a reason no index writes is an edited file's: its memories stay hidden, said as `hash`,
        # and its text (printed as an omission reason) is never read
        out.setdefault(reason if reason in FIXED_REASONS else "hash", set()).update(_unpacked(blob))
    if params["include_low"]:
        out.pop("confidence", None)
    for rowid, reason in tuple_cursor(conn).execute(VARYING_HIDDEN_SQL, params):
        out.setdefault(reason, set()).add(rowid)
    return {reason: rowids for reason, rowids in out.items() if rowids}


def findings(conn: sqlite3.Connection) -> list[str]:
    """What in the readers' tables is not what the index holds (an exported file edited by hand)."""
    if not present(conn):
        return []
    conn.executescript(VOCABULARIES)
    out = []
    if _differ(conn, f"SELECT term, doc FROM {ROWS_TABLE}", TERM_ROWS_SQL):
        out.append("its exported term counts are not its FTS index's")
    if _differ(conn, f"SELECT term, col, doc FROM {COLUMNS_TABLE}", TERM_COLUMNS_SQL):
        out.append("its exported column term counts are not its FTS index's")
    listed = tuple_cursor(conn).execute("SELECT term, col, rowids FROM exported_holders ORDER BY term, col").fetchall()
    if listed != list(_holders(conn)):
        out.append("its exported lists of the memories holding common terms are not its FTS index's")
    if dict(tuple_cursor(conn).execute("SELECT reason, rowids FROM exported_hidden")) != _fixed_hidden(conn):
        out.append("its exported hidden memories are not the ones its memories' fields hide")
    return out


def _differ(conn: sqlite3.Connection, stored_sql: str, computed_sql: str) -> bool:
    return any(
        conn.execute(f"SELECT EXISTS ({one} EXCEPT {other})").fetchone()[0]
        for one, other in ((stored_sql, computed_sql), (computed_sql, stored_sql))
    )


def _holders(conn: sqlite3.Connection) -> Iterator[tuple[str, str, bytes]]:
    for term, column in tuple_cursor(conn).execute(HELD_SQL).fetchall():
        yield term, column, _packed([rowid for (rowid,) in tuple_cursor(conn).execute(HOLDERS_SQL, (column, term))])


def _fixed_hidden(conn: sqlite3.Connection) -> dict[str, bytes]:
    rowids: dict[str, list[int]] = {reason: [] for reason in FIXED_REASONS}
    for reason, rowid in tuple_cursor(conn).execute(FIXED_HIDDEN_SQL, FIXED_PARAMS):
        rowids[reason].append(rowid)
    return {reason: _packed(values) for reason, values in rowids.items() if values}


def _packed(rowids: list[int]) -> bytes:
    values = array(ROWID_FORMAT, rowids)
    if sys.byteorder == "big":
        values.byteswap()
    return values.tobytes()


def _unpacked(blob: bytes) -> array:
    values = array(ROWID_FORMAT)
    values.frombytes(blob)
    if sys.byteorder == "big":
        values.byteswap()
    return values

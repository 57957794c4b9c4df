"""Integrity of an index file: schema, FTS structure, the hashes of the printed columns recomputed
from the stored text, structural fields, edges, fingerprint, an exported index's tables for its
readers, and the signature of a shared index."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from . import exported, gate
from .freshness import built_by_another_version
from .graph import references, related_edges
from .index import (
    LOCAL_REBUILD,
    STORED_TEXT_SQL,
    IndexFileError,
    create_index,
    digest_matches,
    fingerprint,
    open_index,
    read_meta,
)
from .paths import sha256_file
from .sources import CORRUPT_SUFFIX
from .trust import check_signature, read_signature

REQUIRED_META = ("schema_version", "tokenizer", "fingerprint", "scope")


def verify_index(path: str | os.PathLike[str], rebuild: str = LOCAL_REBUILD) -> list[str]:
    """Every integrity finding, one line each, naming the path and what to do (``rebuild``: what
    rebuilds this file, `index.SHARED_REBUILD` for a shared one); empty when sound."""
    try:
        conn = open_index(path)
    except IndexFileError as exc:
        return [f"{exc}; {rebuild}"]
    try:
        return [f"{finding}; {rebuild}" for finding in _findings(conn, path)]
    except sqlite3.DatabaseError as exc:
        return [f"{path}: corrupt index ({exc}); {rebuild}"]
    finally:
        conn.close()


def _schema_findings(conn: sqlite3.Connection, path: str | os.PathLike[str]) -> list[str]:
    """Every table, index, trigger and view definition engram writes, as this version writes it:
    the stored SQL is what SQLite runs (a column's default, a constraint, a trigger's body)."""
    expected = sqlite3.connect(":memory:")
    try:
        create_index(expected)
        if exported.present(conn):
            expected.executescript(exported.SCHEMA)
        wanted = dict(expected.execute(_DEFINITIONS).fetchall())
    finally:
        expected.close()
    stored = dict(conn.execute(_DEFINITIONS).fetchall())
    return [
        f"{path}: the definition of {name} is not engram's" for name, sql in wanted.items() if stored.get(name) != sql
    ]


_DEFINITIONS = "SELECT name, sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name"


def _findings(conn: sqlite3.Connection, path: str | os.PathLike[str]) -> list[str]:
    """What is wrong with the index, one line each, without what rebuilds it."""
    findings = []
    status = conn.execute("PRAGMA quick_check").fetchone()[0]
    if status != "ok":
        findings.append(f"{path}: SQLite integrity check failed ({status})")
    meta = read_meta(conn)
    findings += [f"{path}: meta key '{key}' is missing" for key in REQUIRED_META if key not in meta]
    mismatch = built_by_another_version(meta) if "tokenizer" in meta else None  # a missing key is said above
    if mismatch:
        findings.append(f"{path}: {mismatch}")
    for row in conn.execute(STORED_TEXT_SQL):
        where = f"{gate.memory_id(row['id'])} ({gate.path(row['rel'])})"
        field = gate.invalid_field(row)
        if field:
            findings.append(f"{path}: stored {field} of memory {where} is not valid")
        elif not digest_matches(row):
            findings.append(f"{path}: stored text of memory {where} does not match its hash")
    files = conn.execute("SELECT rel, sha256 FROM files ORDER BY rel")
    if meta.get("fingerprint") and fingerprint(files) != meta["fingerprint"]:
        findings.append(f"{path}: file hashes do not match the index fingerprint")
    orphans = conn.execute(
        "SELECT count(*) FROM memories WHERE rel NOT IN (SELECT rel FROM files WHERE status = 'ok')"
    ).fetchone()[0]
    if orphans:
        findings.append(f"{path}: {orphans} memories have no source record")
    findings += _edge_findings(conn, path)
    findings += _schema_findings(conn, path)
    findings += _fts_findings(conn, path)
    findings += [f"{path}: {finding}" for finding in exported.findings(conn)]
    return findings


def _edge_findings(conn: sqlite3.Connection, path: str | os.PathLike[str]) -> list[str]:
    """Edges are not hashed; they must be exactly what the stored memories give (graph.py)."""
    expected = {(src, dst, "depends_on") for src, _, _, dst in references(conn) if dst and dst != src}
    expected |= {(src, dst, "related") for src, dst, _ in related_edges(conn)}
    stored = {tuple(row) for row in conn.execute("SELECT src, dst, kind FROM edges")}
    if stored != expected:
        return [f"{path}: {len(stored ^ expected)} dependency or related edges differ from the stored memories"]
    return []


def signature_line(path: Path, pinned_key: str | None) -> tuple[str | None, str | None]:
    """(what the OK line adds, a finding): a signed index names its key; a bad signature, or a
    missing one when config pins a key, is a finding."""
    try:
        record = read_signature(str(path))
        if record is None and pinned_key is None:
            return None, None
        key = check_signature(str(path), sha256_file(str(path)), pinned_key)
    except (IndexFileError, OSError) as exc:
        return None, f"{gate.line(str(exc))}"
    return f"signature valid, public key {key}", None


def repaired_lines(root_path: str) -> list[str]:
    """Damaged files engram set aside in a memory root (`*.corrupt-<time>`), one line each."""
    try:
        names = sorted(n for n in os.listdir(root_path) if CORRUPT_SUFFIX in n)
    except OSError:
        return []
    return [
        f"repaired: {os.path.join(root_path, n)} was damaged; set aside and rebuilt (remove it when done)"
        for n in names
    ]


def _fts_findings(conn: sqlite3.Connection, path: str | os.PathLike[str]) -> list[str]:
    """FTS5's own structure check needs a writable handle, so run it on an in-memory copy."""
    copy = sqlite3.connect(":memory:")
    try:
        conn.backup(copy)
        copy.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')")
        rows = copy.execute("SELECT count(*) FROM memories_fts_docsize").fetchone()[0]
        count = copy.execute("SELECT count(*) FROM memories").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        return [f"{path}: full-text index is damaged ({exc})"]
    finally:
        copy.close()
    if rows != count:
        return [f"{path}: full-text index holds {rows} rows for {count} memories"]
    return []

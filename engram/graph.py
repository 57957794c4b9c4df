"""The dependency graph: `depends_on` references, edges, layers and cycles (stdlib only)."""

from __future__ import annotations

import json
import sqlite3

from .freshness import Problem, display_path
from .sources import Root


def resolve_reference(ref: str, ids: set[str], stems: dict[str, str]) -> str | None:
    """Resolve a depends_on reference: an id, a file name (``.md`` optional), or ``scope:id``."""
    ref = ref.strip().lower()
    if ":" in ref:
        ref = ref.split(":", 1)[1]
    ref = ref.rsplit("/", 1)[-1]
    if ref in ids:
        return ref
    ref = ref[:-3] if ref.endswith(".md") else ref
    return ref if ref in ids else stems.get(ref)


def _references(conn: sqlite3.Connection):
    rows = conn.execute("SELECT id, rel, depends_on FROM memories").fetchall()
    ids = {r[0] for r in rows}
    stems = {r[1].rsplit("/", 1)[-1][:-3]: r[0] for r in rows}
    for memory_id, rel, raw in rows:
        for ref in json.loads(raw):
            yield memory_id, rel, ref, resolve_reference(ref, ids, stems)


def rebuild_edges(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM edges WHERE kind = 'depends_on'")
    conn.executemany(
        "INSERT OR IGNORE INTO edges (src, dst, kind) VALUES (?, ?, 'depends_on')",
        [(src, dst) for src, _, _, dst in _references(conn) if dst and dst != src],
    )


def dependency_problems(conn: sqlite3.Connection, root: Root) -> list[Problem]:
    return [
        Problem(display_path(root, rel), f"depends_on names unknown id '{ref}'", kind="warning")
        for _, rel, ref, dst in _references(conn)
        if dst is None
    ]

"""The baseline engram is measured against: plain FTS5 BM25, top 8, in the same run.

Porter stemming over unicode61 (diacritics removed), one document per memory made of its id,
tags, directive and the text after its frontmatter; the query's words OR-ed together; nothing
only when no memory holds any of them. This is the baseline of the routing issue's tables.
"""

from __future__ import annotations

import json
import re
import sqlite3

TOP = 8
FRONTMATTER = re.compile(r"\A---\r?\n.*?\r?\n---\r?\n?", re.S)
_indexes: dict[str, sqlite3.Connection] = {}


def _index(project_root: str, conn: sqlite3.Connection) -> sqlite3.Connection:
    if project_root not in _indexes:
        index = sqlite3.connect(":memory:")
        index.execute(
            "CREATE VIRTUAL TABLE docs USING fts5(mid UNINDEXED, text, tokenize='porter unicode61 remove_diacritics 2')"
        )
        for memory_id, tags, directive, rel in conn.execute("SELECT id, tags, directive, rel FROM memories"):
            with open(f"{project_root}/{rel}", encoding="utf-8") as handle:
                body = FRONTMATTER.sub("", handle.read(), count=1)
            text = "\n".join([memory_id, " ".join(json.loads(tags)), directive, body])
            index.execute("INSERT INTO docs VALUES (?, ?)", (memory_id, text))
        _indexes[project_root] = index
    return _indexes[project_root]


def search(project_root: str, conn: sqlite3.Connection, query: str) -> list[str]:
    words = list(dict.fromkeys(re.findall(r"\w+", query.lower())))
    if not words:
        return []
    match = " OR ".join('"' + word.replace('"', '""') + '"' for word in words)
    sql = "SELECT mid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?"
    return [row[0] for row in _index(project_root, conn).execute(sql, (match, TOP))]


def pack_of(case) -> list[str]:
    """The baseline's pack for a `fit.Case`."""
    layer = case.folder.layers[0]
    return search(case.folder.ws.root.path, layer.conn, case.query)

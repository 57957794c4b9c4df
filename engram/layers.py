"""Read flow, step 1: open the workspace index and the optional global index.

A workspace or global root index that is stale is refreshed first (the
compiler is imported only then). A prebuilt index (``--index FILE`` or
``global_index``) is opened read-only and used as is; its memories whose
sources are present and changed count as stale. Stdlib only.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

from .config import Config
from .freshness import ignore_patterns, needs_refresh, open_current
from .index import IndexFileError, open_index, read_meta
from .sources import Root
from .workspace import Workspace


class Layer:
    """One index the read path routes over."""

    def __init__(
        self, scope: str, conn: sqlite3.Connection, index_path: Path, source_root: Path | None, check_sources: bool
    ) -> None:
        self.scope = scope
        self.conn = conn
        self.index_path = index_path
        self.source_root = source_root  # where its sources are, when present
        self.check_sources = check_sources  # True when the index may be behind its sources
        self.shadowed: set[int] = set()  # rowids whose id a layer above holds: hidden here
        self._stale: dict[str, bool] = {}

    def is_stale(self, rel: str, source_sha: str) -> bool:
        """Whether the memory's source changed since the index was built."""
        if not self.check_sources or self.source_root is None:
            return False
        if rel not in self._stale:
            self._stale[rel] = _source_differs(self.source_root / rel, source_sha)
        return self._stale[rel]


def _source_differs(path: Path, recorded_sha: str) -> bool:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return hashlib.sha256(data).hexdigest() != recorded_sha


def open_layers(ws: Workspace, index_file: Path | None, messages: list[str]) -> list[Layer]:
    if index_file is not None:
        return [open_prebuilt(index_file, "workspace")]
    layers = []
    root_layer = _root_layer(ws.root, ws.config, messages)
    if root_layer:
        layers.append(root_layer)
    global_index = ws.config.get("global_index")
    if global_index:
        layers.append(open_prebuilt(Path(os.path.expanduser(global_index)), "global"))
    elif ws.global_root:
        global_layer = _root_layer(ws.global_root, ws.config, messages)
        if global_layer:
            layers.append(global_layer)
    _shadow(layers)
    return layers


def _shadow(layers: list[Layer]) -> None:
    """The workspace copy of an id wins: a lower layer's memories with an id held above are hidden."""
    for position, layer in enumerate(layers):
        for upper in layers[:position]:
            layer.conn.execute("ATTACH DATABASE ? AS upper", (f"{upper.index_path.resolve().as_uri()}?mode=ro",))
            rows = layer.conn.execute("SELECT rowid FROM memories WHERE id IN (SELECT id FROM upper.memories)")
            layer.shadowed |= {rowid for (rowid,) in rows}
            layer.conn.execute("DETACH DATABASE upper")


def open_prebuilt(path: Path, scope: str) -> Layer:
    """A shared index file: read-only, validated; raises IndexFileError with one line."""
    conn = open_index(path)
    meta = read_meta(conn)
    return Layer(scope, conn, path, _recorded_sources(path, meta), True)


def _recorded_sources(index_path: Path, meta: dict[str, str]) -> Path | None:
    """The sources of a prebuilt index: relative to the index file's folder, else absolute."""
    candidates = [index_path.resolve().parent / meta.get("source_root_rel", "."), Path(meta.get("source_root", ""))]
    for candidate in candidates:
        if str(candidate) and any((candidate / f).is_dir() for f in ("rules", "skills", "knowledge")):
            return candidate
    return None


def _root_layer(root: Root, config: Config, messages: list[str]) -> Layer | None:
    if not root.path.is_dir():
        return None
    conn = open_current(root)
    behind = needs_refresh(root, conn, ignore_patterns(root, config))
    if behind and _refresh(root, config, messages):
        behind = False
        if conn is not None:
            conn.close()
        conn = open_current(root)
    if conn is None:
        return None
    return Layer(root.scope, conn, root.index_path, root.path, behind)


def _refresh(root: Root, config: Config, messages: list[str]) -> bool:
    from .compile import compile_root  # the compiler (yaml, pathspec) loads only when needed

    try:
        compile_root(root, config)
    except (OSError, TimeoutError) as exc:
        messages.append(f"cannot refresh {root.index_path} ({exc}); using it as is")
        return False
    return True


__all__ = ["Layer", "open_layers", "open_prebuilt", "IndexFileError"]

"""Read flow, step 1: open the workspace index and the optional global index.

A workspace or global root index that is stale is refreshed first (the
compiler is imported only then). A prebuilt index (``--index FILE`` or
``global_index``) is opened read-only and used as is; its memories whose
sources are present and changed count as stale. Stdlib only.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import time

from . import exported, gate
from .errors import debug
from .freshness import (
    built_by_another_version,
    built_here,
    file_stamp,
    ignore_patterns,
    needs_refresh,
    open_current,
    read_source,
    stat_unchanged,
    stored_file,
    watcher_vouches,
)
from .index import LOCAL_REBUILD, SHARED_REBUILD, AnotherVersion, IndexFileError, open_index, read_meta
from .paths import sqlite_uri
from .reads import reads_for
from .sources import MEMORY_FOLDERS, Root, source_file
from .trust import Pin, check_pinned
from .workspace import Workspace

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Callable

REFRESH_BUDGET_S = 0.8  # of an inline refresh: hooks must answer well within the host's timeout


class Layer:
    """One index the read path routes over."""

    def __init__(
        self,
        scope: str,
        conn: sqlite3.Connection,
        index_path: str,
        source_root: str | None,
        check_sources: bool,
        stamp: str | None = None,
        exported_tables: bool = False,
    ) -> None:
        self.scope = scope
        self.conn = conn
        # ``stamp``: the index file is one a watcher vouched for; ``exported_tables``: an exported one's (`exported`)
        self.reads = reads_for(conn, index_path, stamp, exported_tables)
        self.index_path = index_path
        self.source_root = source_root  # where its sources are, when present
        self.check_sources = check_sources  # True when the index may be behind its sources
        self.rebuild = LOCAL_REBUILD  # what mends a memory stored wrong here (SHARED_REBUILD: a shared file)
        self.shadowed: set[int] = set()  # rowids whose id a layer above holds: hidden here
        self.stack: list[Layer] = [self]  # every layer read with it, the workspace first: where an id resolves
        self._stale: dict[str, bool] = {}

    def is_stale(self, rel: str, source_sha: str) -> bool:
        """Whether the memory's source changed since the index was built."""
        if not self.check_sources or self.source_root is None or not gate.is_memory_path(rel):
            return False  # a path that is not a memory's is never opened
        if rel not in self._stale:
            self._stale[rel] = self._source_differs(os.path.join(self.source_root, rel), rel, source_sha)
        return self._stale[rel]

    def _source_differs(self, path: str, rel: str, recorded_sha: str) -> bool:
        """Read and hashed, unless the file has the size, mtime and ctime the index recorded: the
        freshness check's rule (docs/speed.md), so a shared index beside the sources it was built
        from reads none of them. A file gone is stale; one that cannot be read is served as built."""
        source = source_file(rel, path)
        if stat_unchanged(stored_file(self.conn, rel), source):
            return False
        sha = read_source(source)[1]
        return not os.path.exists(path) if sha is None else sha != recorded_sha


def open_layers(
    ws: Workspace,
    index_file: str | None,
    messages: list[str],
    state: sqlite3.Connection | None = None,
    with_shared: bool = True,
) -> list[Layer]:
    """The layers to route over; ``state`` remembers which shared index signatures were checked.
    Warnings go to ``messages``: the config's problems (settings that fell back to their defaults)
    and why a global layer configured is not used. ``with_shared``: False leaves `global_index` out (it
    could not be read)."""
    messages += ws.config.problems
    if index_file is not None:
        return [open_prebuilt(index_file, "workspace")]
    messages += ws.global_notes()
    layers = []
    root_layer = _root_layer(ws, ws.root, messages)
    if root_layer:
        layers.append(root_layer)
    if ws.global_index_path:  # the global layer, even when it is left out
        global_layer = _shared_layer(ws, root_layer, messages, state) if with_shared else None
    else:
        global_layer = _root_layer(ws, ws.global_root, messages) if ws.global_root else None
    if global_layer:
        layers.append(global_layer)
    _shadow(layers)
    return layers


def _shared_layer(
    ws: Workspace, root_layer: Layer | None, messages: list[str], state: sqlite3.Connection | None
) -> Layer | None:
    """The shared index `global_index` names, None where it is not used (with a line in ``messages``)."""
    assert ws.global_index_path is not None
    pin = Pin(ws.config.get("global_index_key"), ws.config.get("global_index_sha256"))
    try:
        shared = open_prebuilt(ws.global_index_path, "global", pin, state)
    except IndexFileError as exc:  # the project's own memories still load
        messages.append(f"global index not used: {exc}")
        return None
    if root_layer and _same_folder(shared.source_root, ws.root.path):
        shared.conn.close()  # built from this project: its live sources are read already, and a memory
        # retired or renamed since the file was built must not come back from it
        return None
    return shared


def invalid_note(layers: list[Layer], memory_id: str) -> str:
    """`` (rules/x.md is not valid: ...)`` when the memory file named for ``memory_id`` (its stem:
    the id of a file that did not parse is unknown) is left out of an index as not valid; else ""."""
    for layer in layers:
        with contextlib.suppress(sqlite3.Error):  # a shared index holds no file table
            for (rel,) in layer.conn.execute("SELECT rel FROM files WHERE status = 'invalid'"):
                if isinstance(rel, str) and rel.rsplit("/", 1)[-1].lower() == f"{memory_id}.md":
                    return f" ({gate.path(rel)} is not valid: `engram check` says why)"
    return ""


def _same_folder(path: str | None, other: str) -> bool:
    return path is not None and os.path.realpath(path) == os.path.realpath(other)


def _shadow(layers: list[Layer]) -> None:
    """The workspace copy of an id wins: a lower layer's memories with an id held above are hidden."""
    for position, layer in enumerate(layers):
        layer.stack = layers
        for upper in layers[:position]:
            layer.conn.execute("ATTACH DATABASE ? AS upper", (sqlite_uri(upper.index_path),))
            rows = layer.conn.execute("SELECT rowid FROM memories WHERE id IN (SELECT id FROM upper.memories)")
            layer.shadowed |= {rowid for (rowid,) in rows}
            layer.conn.execute("DETACH DATABASE upper")


def open_prebuilt(
    path: str | os.PathLike[str], scope: str, pin: Pin | None = None, state: sqlite3.Connection | None = None
) -> Layer:
    """A shared index file: read-only, validated, matching its pin if config has one; raises
    IndexFileError with one line. Unpinned, it is used as it is: every field it prints passes the
    output gate like any other."""
    path = os.fspath(path)
    if pin:
        check_pinned(path, pin, state)
    try:
        conn = open_index(path)
    except AnotherVersion as exc:
        raise IndexFileError(f"{exc}; {SHARED_REBUILD}") from None
    meta = read_meta(conn)
    mismatch = built_by_another_version(meta)
    if mismatch:
        conn.close()
        raise IndexFileError(f"{path}: {mismatch}; {SHARED_REBUILD}")
    layer = Layer(scope, conn, path, recorded_sources(path, meta), True, exported_tables=exported.present(conn))
    layer.rebuild = SHARED_REBUILD
    return layer


def recorded_sources(index_path: str, meta: dict[str, str]) -> str | None:
    """The sources of a prebuilt index: relative to the index file's folder, else absolute."""
    beside = os.path.join(os.path.dirname(os.path.realpath(index_path)), meta.get("source_root_rel", "."))
    for candidate in (os.path.normpath(beside), meta.get("source_root", "")):
        if candidate and any(os.path.isdir(os.path.join(candidate, f)) for f in MEMORY_FOLDERS):
            return candidate
    return None


def _root_layer(ws: Workspace, root: Root, messages: list[str]) -> Layer | None:
    if not os.path.isdir(root.path):
        return None
    vouched = watcher_vouches(root) if root.scope == "workspace" else None  # before the index is opened
    conn = open_current(root)
    # An index engram did not build here is rebuilt even when it looks current: a clone's committed
    # index of no memory file matched an empty folder's digest and served memories no file holds.
    foreign = conn is not None and not built_here(root)
    behind = needs_refresh(root, conn, ignore_patterns(root, ws.config), vouched) or (foreign and vouched is None)
    # The file a watcher vouched for: its answers are kept across the watcher's calls (`reads`).
    kept_as = vouched if not behind and vouched is not None and vouched == file_stamp(root.index_path) else None
    if behind and _refresh(ws, root, messages, first=conn is None):
        behind = False
        if conn is not None:
            conn.close()
        conn = open_current(root)
    elif behind and conn is not None and foreign:
        # An index engram did not build here (a clone's committed one: its sources' stats differ) is
        # served only once rebuilt from the sources, which `compile_root` does (a big one in the background).
        conn.close()
        messages.append(f"{root.index_path}: {NOT_BUILT_HERE}")
        return None
    if conn is None:
        return None
    return Layer(root.scope, conn, root.index_path, root.path, behind, kept_as)


def _refresh(ws: Workspace, root: Root, messages: list[str], first: bool = False) -> bool:
    """Bring the index up to date inline, within REFRESH_BUDGET_S and without waiting for the
    build lock; else serve the index as it is (changed memories are marked stale). ``first``:
    there is no index yet, so while another engram builds it (parallel tool calls in a fresh
    clone) its build is waited for, within the same budget: there is nothing else to serve."""
    from .compile import BuildBusy, BuildTooSlow, compile_root  # the compiler (yaml, pathspec) loads only when needed

    deadline = time.monotonic() + REFRESH_BUDGET_S
    try:
        result = compile_root(root, ws.config, deadline=deadline)
    except BuildBusy:
        if first and not _meanwhile(deadline, lambda: os.path.exists(root.index_path)):
            # said, not only logged: "loaded 0" or "not found" would otherwise be taken for the truth
            messages.append(f"{root.path}: {FIRST_BUILD_PENDING}")
            return False
        # a build that has just replaced the index records it as built here a moment later
        if not first and not built_here(root) and _meanwhile(deadline, lambda: built_here(root)):
            return True
        debug(f"another engram is indexing {root.path}; serving the current index")
        return first
    except BuildTooSlow:
        _index_in_background(ws)
        # said, not only logged: a first load of a big folder would otherwise answer "loaded 0" unexplained
        messages.append(f"{root.path}: {FIRST_BUILD_STARTED if first else BUILD_STARTED}")
        return False
    except OSError as exc:
        there = os.path.isfile(root.index_path)  # a read-only checkout may have none to use
        messages.append(
            f"cannot {'refresh' if there else 'build'} {root.index_path} ({exc}); "
            + ("using it as is" if there else "nothing to serve from it")
        )
        return False
    messages += result.repaired
    if result.memories_changed:
        from . import native_rules  # only after a build: the compiler's imports are loaded already

        native_rules.after_refresh(root, ws.config)
    # An edit that made a memory unusable is said by the load that sees it, not only by `engram check`.
    messages += [str(p) for p in result.problems if p.where in result.compiled and p.kind in ("invalid", "flagged")]
    return True


NOT_BUILT_HERE = "not built here, and not rebuilt yet; nothing is served from it until `engram index` rebuilds it"
BUILD_POLL_S = 0.02
NOTHING_YET = "nothing to serve yet, retry"
FIRST_BUILD_PENDING = f"another engram is building its first index; {NOTHING_YET}"
FIRST_BUILD_STARTED = f"too many memories to index inline; building the first index in the background; {NOTHING_YET}"
BUILD_STARTED = "too many changes to index inline; indexing in the background, serving what there is"
# What leaves a root with nothing to serve: an MCP client is told so rather than answered "loaded 0".
NOTHING_SERVED = (NOTHING_YET, NOT_BUILT_HERE)


def _meanwhile(deadline: float, done: Callable[[], bool]) -> bool:
    """Whether another engram's build is ``done`` before ``deadline``: its index appears (a build
    writes it whole, under its final name, when it is done), or is recorded as built here."""
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(BUILD_POLL_S)
    return done()


def _index_in_background(ws: Workspace) -> None:
    """`engram index` in a process of its own, so the next call finds the index current."""
    import subprocess

    with contextlib.suppress(OSError):
        subprocess.Popen(
            [sys.executable, "-m", "engram", "index"],
            cwd=ws.root.project,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )


__all__ = ["Layer", "open_layers", "open_prebuilt", "IndexFileError"]

"""The dependency graph: `depends_on` references, edges, layers and cycles (stdlib only)."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterator

from . import gate


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


def references(conn: sqlite3.Connection) -> Iterator[tuple[str, str, str, str | None]]:
    """(id, rel, reference, resolved id or None) of every `depends_on` reference.

    Only the ids and file stems of all memories are held; rows are read as they come.
    """
    ids, stems = set(), {}
    for memory_id, rel in conn.execute("SELECT id, rel FROM memories ORDER BY id"):
        ids.add(memory_id)
        stems[rel.rsplit("/", 1)[-1][:-3]] = memory_id
    # most memories depend on nothing; a covering index answers this
    for memory_id, rel, raw in conn.execute(
        "SELECT id, rel, depends_on FROM memories WHERE depends_on != '[]' ORDER BY id"
    ):
        for ref in json.loads(raw):
            yield memory_id, rel, ref, resolve_reference(ref, ids, stems)


RELATED_PER_MEMORY = 4
MIN_RELATED_WEIGHT = 0.5  # tag overlap (Jaccard) for a related edge
COMMON_TAG_SHARE = 0.2  # a tag on more than this share of memories relates nothing
MAX_TAG_HOLDERS = 50  # ... nor does one on more than this many


def rebuild_edges(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM edges")
    conn.executemany(
        "INSERT OR IGNORE INTO edges (src, dst, kind) VALUES (?, ?, 'depends_on')",
        ((src, dst) for src, _, _, dst in references(conn) if dst and dst != src),
    )
    conn.executemany(
        "INSERT OR IGNORE INTO edges (src, dst, kind, weight) VALUES (?, ?, 'related', ?)", related_edges(conn)
    )


def related_edges(conn: sqlite3.Connection) -> Iterator[tuple[str, str, float]]:
    """Memories sharing tags, by Jaccard overlap; the strongest few per memory.

    They only rerank memories that already matched the query (route.py); they never admit one.
    A tag held by many memories says little about any pair of them, and skipping it keeps this
    linear in the corpus size rather than quadratic. Only the holders of the useful tags and
    each memory's tag count are held; the edges stream into the table.
    """
    holders: dict[str, list[str]] = {}
    sizes: dict[str, int] = {}
    for mid, raw in conn.execute("SELECT id, tags FROM memories"):
        own = set(json.loads(raw))
        sizes[mid] = len(own)
        for tag in own:
            holders.setdefault(tag, []).append(mid)
    limit = min(MAX_TAG_HOLDERS, max(8, COMMON_TAG_SHARE * len(sizes)))  # small folders: any shared tag relates
    holders = {tag: mids for tag, mids in holders.items() if len(mids) <= limit}
    for mid, raw in conn.execute("SELECT id, tags FROM memories"):
        own = set(json.loads(raw))
        shared = Counter(other for tag in own if tag in holders for other in holders[tag])
        shared.pop(mid, None)
        scored = sorted(((n / (len(own) + sizes[o] - n), o) for o, n in shared.items()), reverse=True)
        yield from ((mid, other, round(w, 3)) for w, other in scored[:RELATED_PER_MEMORY] if w >= MIN_RELATED_WEIGHT)


def findings(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """(rel, reason) of every `depends_on` reference to an unknown id, then of every cycle: warnings
    the build records (`compile`), so that a no-op `engram index` and `check` read them back."""
    unknown = [(rel, ref) for _, rel, ref, dst in references(conn) if dst is None]
    ids = [memory_id for (memory_id,) in conn.execute("SELECT id FROM memories")] if unknown else []
    said = [(rel, f"depends_on names unknown id '{gate.memory_id(ref)}'{_meant(ref, ids)}") for rel, ref in unknown]
    return said + _cycle_findings(conn)


def _meant(ref: str, ids: list[str]) -> str:
    """``: did you mean 'release-process'?`` for a reference one or two edits from an id (`near_miss`),
    looked for among the ids of about its length only: a folder may hold 100,000."""
    from .nearmiss import near_miss

    close = [memory_id for memory_id in ids if abs(len(memory_id) - len(ref)) <= 2]
    meant = near_miss(ref, close)
    return f": did you mean '{gate.memory_id(meant)}'?" if meant else ""


def dependency_map(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """Every memory id with its prerequisites, in id order."""
    graph: dict[str, list[str]] = {r[0]: [] for r in conn.execute("SELECT id FROM memories ORDER BY id")}
    graph.update(_prerequisites(conn))
    return graph


def _prerequisites(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """The memories that have prerequisites, with them, in id order."""
    graph: dict[str, list[str]] = {}
    for src, dst in conn.execute("SELECT src, dst FROM edges WHERE kind = 'depends_on' ORDER BY src, dst"):
        graph.setdefault(src, []).append(dst)
    return graph


def find_cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Each dependency cycle once, as the ids around it (iterative DFS: no recursion limit)."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    cycles: list[list[str]] = []
    for start, prerequisites in graph.items():
        if not prerequisites or state.get(start):
            continue  # a memory without prerequisites closes no cycle: most of them
        path: list[str] = []
        stack = [(start, iter(graph.get(start, [])))]
        state[start] = 1
        path.append(start)
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.pop()
                state[node] = 2
            elif state.get(child) == 1:
                cycles.append(path[path.index(child) :])
            elif not state.get(child):
                state[child] = 1
                path.append(child)
                stack.append((child, iter(graph.get(child, []))))
    return cycles


def depths(graph: dict[str, list[str]], levels: dict[str, int]) -> dict[str, int]:
    """Depth = max(declared level, 1 + depth of each prerequisite); edges closing a cycle are ignored.

    Iterative: a chain of prerequisites is as long as its authors make it.
    """
    result: dict[str, int] = {}
    for start in graph:
        if start in result:
            continue
        on_path = {start}
        stack: list[list] = [
            [start, iter(graph.get(start, [])), levels.get(start, 0)]
        ]  # node, its children, its depth so far
        while stack:
            frame = stack[-1]
            child = next(frame[1], None)
            if child is None:
                stack.pop()
                on_path.discard(frame[0])
                result[frame[0]] = frame[2]
                if stack:
                    stack[-1][2] = max(stack[-1][2], 1 + frame[2])
            elif child in result:
                frame[2] = max(frame[2], 1 + result[child])
            elif child not in on_path:
                on_path.add(child)
                stack.append([child, iter(graph.get(child, [])), levels.get(child, 0)])
    return result


def cycle_text(cycle: list[str]) -> str:
    return " -> ".join([*cycle, cycle[0]])


def _cycle_findings(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """Only memories with prerequisites can close a cycle."""
    cycles = find_cycles(_prerequisites(conn))
    rels = dict(
        conn.execute(
            "SELECT id, rel FROM memories WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps([cycle[0] for cycle in cycles]),),
        )
    )
    return [(rels[cycle[0]], f"dependency cycle: {cycle_text(cycle)}") for cycle in cycles]


def describe(conn: sqlite3.Connection, only: set[str] | None = None) -> list[str]:
    """`engram graph` output: the count line, each memory with its depth and prerequisites, cycles."""
    graph = dependency_map(conn)
    if only is not None:
        graph = {node: [d for d in deps if d in only] for node, deps in graph.items() if node in only}
    levels = dict(conn.execute("SELECT id, level FROM memories"))
    depth = depths(graph, levels)
    related = _related_count(conn, set(graph))
    edges = sum(len(v) for v in graph.values()) + related
    lines = [
        f"engram graph: {len(graph)} nodes, {edges} edges",
        f"{related} related edges (memories sharing half their tags or more; they only rerank)",
        "Dependency layers",
    ]
    for node in sorted(graph, key=lambda n: (depth[n], n)):
        needs = f" depends on {', '.join(map(gate.memory_id, graph[node]))}" if graph[node] else ""
        lines.append(f"  [{depth[node]}] {gate.memory_id(node)}{needs}")
    for cycle in find_cycles(graph):
        lines.append(f"cycle: {cycle_text([gate.memory_id(node) for node in cycle])}")
    return lines


def _related_count(conn: sqlite3.Connection, nodes: set[str]) -> int:
    rows = conn.execute("SELECT src, dst FROM edges WHERE kind = 'related'")
    return sum(1 for src, dst in rows if src in nodes and dst in nodes)

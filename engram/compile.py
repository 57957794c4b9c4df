"""Compile one memory root into its ``index.db``: incremental, atomic, streaming.

Unchanged files (same size and mtime) are neither read nor parsed. When
anything changed, the current index is copied to a temp file, updated in
one transaction, and renamed over ``index.db``; a crash leaves the old
index in place and readers never see a half-built one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import terms
from .config import Config
from .freshness import (
    Problem,
    display_path,
    ignore_digest,
    ignore_patterns,
    needs_refresh,
    recorded_problems,
    open_current,
    stat_unchanged,
    stored_file,
)
from .graph import rebuild_edges
from .index import COMPILER_VERSION, apply_migrations, fingerprint, printed_digest
from .parse import Memory, ParseError, parse_memory
from .safety import scan
from .sources import Root, SourceFile, source_file, walk_memory_files

LOCK_TIMEOUT_S = 60.0
PROGRESS_THRESHOLD = 200


@dataclass
class CompileResult:
    root: Root
    total: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    invalid: int = 0
    wrote: bool = False
    problems: list[Problem] = field(default_factory=list)


class IgnoreMatcher:
    """Gitignore-style matching of root-relative paths (``knowledge/x.md``)."""

    def __init__(self, patterns: list[str]) -> None:
        import pathspec  # only the compiler needs it

        self._spec = pathspec.GitIgnoreSpec.from_lines(patterns) if any(p.strip() for p in patterns) else None

    def __call__(self, rel: str) -> bool:
        return bool(self._spec and self._spec.match_file(rel))


# --- building -------------------------------------------------------------------------------


def fts_values(memory: Memory) -> tuple[str, ...]:
    """The term streams of the FTS columns, in FTS_COLUMNS order."""
    return (
        terms.index_terms(memory.id),
        terms.index_terms(" ".join(memory.tags)),
        terms.index_terms(memory.directive),
        terms.index_terms(memory.summary),
        terms.index_terms(" ".join(memory.triggers)),
        terms.index_terms(memory.body),
        terms.index_terms(" ".join(memory.applies_to)),
    )


def strong_terms(values: tuple[str, ...]) -> str:
    """Terms of the strong fields (id, tags, directive, applies_to) for the anchor rule."""
    return " ".join(sorted(set(" ".join((values[0], values[1], values[2], values[6])).split())))


def memory_from_row(row) -> Memory:
    """Rebuild the parsed memory from its stored row (used to delete its FTS terms)."""
    return Memory(
        id=row["id"], type=row["type"], title=row["title"], body=row["body"],
        tags=json.loads(row["tags"]), directive=row["directive"], summary=row["summary"],
        triggers=json.loads(row["triggers"]), applies_to=json.loads(row["applies_to"]),
        depends_on=json.loads(row["depends_on"]), level=row["level"], confidence=row["confidence"],
        authority=row["authority"], lifecycle=row["lifecycle"], valid_until=row["valid_until"],
        roles=json.loads(row["roles"]), updated=row["updated"],
    )


class Builder:
    """Applies source changes to a working copy of the index, inside one transaction."""

    def __init__(self, conn: sqlite3.Connection, root: Root, ignored: IgnoreMatcher) -> None:
        self.conn = conn
        self.root = root
        self.ignored = ignored

    def delete_memory(self, rel: str) -> None:
        row = self.conn.execute("SELECT * FROM memories WHERE rel = ?", (rel,)).fetchone()
        if row is None:
            return
        values = fts_values(memory_from_row(row))
        self.conn.execute(
            "INSERT INTO memories_fts(memories_fts, rowid, id, tags, directive, summary, triggers, body, paths)"
            " VALUES ('delete', ?, ?, ?, ?, ?, ?, ?, ?)",
            (row["rowid"], *values),
        )
        self.conn.execute("DELETE FROM memories WHERE rowid = ?", (row["rowid"],))

    def insert_memory(self, rel: str, memory: Memory, source_sha: str) -> int:
        values = fts_values(memory)
        flagged = scan("\n".join((memory.title, memory.directive, memory.summary, memory.body)))
        cursor = self.conn.execute(
            "INSERT INTO memories (id, rel, type, authority, confidence, lifecycle, level, valid_until, roles,"
            " tags, directive, summary, title, triggers, applies_to, depends_on, updated, body, text_sha256,"
            " source_sha256, tokens, strong, ignored, safety)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                memory.id, rel, memory.type, memory.authority, memory.confidence, memory.lifecycle,
                memory.level, memory.valid_until, json.dumps(memory.roles), json.dumps(memory.tags),
                memory.directive, memory.summary, memory.title, json.dumps(memory.triggers),
                json.dumps(memory.applies_to), json.dumps(memory.depends_on), memory.updated, memory.body,
                printed_digest(memory.title, memory.directive, memory.summary, memory.body), source_sha, terms.estimate_tokens(memory.body),
                strong_terms(values), int(self.ignored(rel)), flagged,
            ),
        )
        rowid = cursor.lastrowid
        self.conn.execute(
            "INSERT INTO memories_fts(rowid, id, tags, directive, summary, triggers, body, paths)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (rowid, *values),
        )
        return rowid

    def record_file(self, source: SourceFile, sha: str | None, error: Problem | None, memory: int | None) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO files (rel, size, mtime_ns, sha256, status, error, memory)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                source.rel, source.size, source.mtime_ns, sha, "invalid" if error else "ok",
                json.dumps([error.reason, error.line]) if error else None, memory,
            ),
        )

    def compile_file(self, source: SourceFile, data: bytes | None, sha: str | None) -> Problem | None:
        """Parse and store one file; returns the problem that made it invalid, if any."""
        self.delete_memory(source.rel)
        problem = source_problem(self.root, source, data)
        memory_row = None
        if problem is None:
            try:
                memory = parse_memory(data.decode("utf-8"), source.rel)
            except ParseError as exc:
                problem = Problem(display_path(self.root, source.rel), exc.reason, exc.line)
            else:
                owner = self.conn.execute("SELECT rel FROM memories WHERE id = ?", (memory.id,)).fetchone()
                if owner is not None:
                    where = display_path(self.root, owner[0])
                    problem = Problem(display_path(self.root, source.rel), f"duplicate id '{memory.id}' (also in {where})")
                else:
                    memory_row = self.insert_memory(source.rel, memory, sha)
        self.record_file(source, sha, problem, memory_row)
        return problem


def source_problem(root: Root, source: SourceFile, data: bytes | None) -> Problem | None:
    where = display_path(root, source.rel)
    if source.problem:
        return Problem(where, source.problem)
    if data is None:
        return Problem(where, "cannot read file")
    if b"\x00" in data:
        return Problem(where, "binary file, not markdown text")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return Problem(where, "not UTF-8 text", line)
    return None


def read_source(source: SourceFile) -> tuple[bytes | None, str | None, str | None]:
    """(bytes, sha256, problem) for one source file."""
    if source.problem:
        return None, None, source.problem
    try:
        data = source.path.read_bytes()
    except OSError as exc:
        return None, None, f"cannot read: {exc.strerror or exc}"
    return data, hashlib.sha256(data).hexdigest(), None


@contextlib.contextmanager
def root_lock(root: Root):
    """Serialise compilers of one root across processes (two `engram index` at once)."""
    lock_path = root.path / ".index.lock"
    handle = open(lock_path, "a+")  # noqa: SIM115 - held for the duration of the block
    try:
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{root.path}: another engram is still indexing") from None
                time.sleep(0.05)
        yield
    finally:
        handle.close()


def compile_root(root: Root, config: Config, progress: bool = False) -> CompileResult:
    """Bring ``root/index.db`` up to date with the root's sources."""
    result = CompileResult(root)
    if not root.path.is_dir():
        return result
    patterns = ignore_patterns(root, config)
    with root_lock(root):
        _remove_leftovers(root)
        current = open_current(root, thorough=True)
        try:
            if not needs_refresh(root, current, patterns):
                _summarise(current, result)
                return result
            _rebuild_into_temp(root, current, patterns, result, progress)
        finally:
            if current is not None:
                current.close()
    return result


def _summarise(conn: sqlite3.Connection, result: CompileResult) -> None:
    result.total = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    result.problems = recorded_problems(conn, result.root)
    result.invalid = sum(1 for p in result.problems if p.kind == "invalid")


def _remove_leftovers(root: Root) -> None:
    """Temp files of a build that was killed; safe because the lock is held."""
    for leftover in root.path.glob(".index.db.tmp-*"):
        leftover.unlink(missing_ok=True)


def _temp_path(root: Root) -> Path:
    return root.path / f".index.db.tmp-{os.getpid()}"


def _rebuild_into_temp(
    root: Root, current: sqlite3.Connection | None, patterns: list[str], result: CompileResult, progress: bool
) -> None:
    temp = _temp_path(root)
    temp.unlink(missing_ok=True)
    if current is not None:
        shutil.copyfile(root.index_path, temp)
    conn = sqlite3.connect(temp, isolation_level=None)
    conn.row_factory = sqlite3.Row
    try:
        if current is None:
            apply_migrations(conn, "index")
        _apply_changes(conn, root, patterns, result, progress)
        conn.close()
        os.replace(temp, root.index_path)
        result.wrote = True
    except BaseException:
        conn.close()
        temp.unlink(missing_ok=True)
        raise


def _apply_changes(conn: sqlite3.Connection, root: Root, patterns: list[str], result: CompileResult, progress: bool) -> None:
    ignored = IgnoreMatcher(patterns)
    builder = Builder(conn, root, ignored)
    conn.execute("BEGIN")
    conn.execute("CREATE TEMP TABLE seen (rel TEXT PRIMARY KEY)")
    with _progress(root, progress) as tick:
        _walk_and_compile(conn, root, builder, result, tick)
    _remove_missing(conn, builder, result)
    _retry_duplicates(conn, builder)
    _refresh_ignored(conn, ignored)
    rebuild_edges(conn)
    _write_meta(conn, root, patterns)
    conn.execute("COMMIT")
    _summarise(conn, result)


def _walk_and_compile(conn: sqlite3.Connection, root: Root, builder: Builder, result: CompileResult, tick) -> None:
    for source in walk_memory_files(root):
        conn.execute("INSERT OR IGNORE INTO seen VALUES (?)", (source.rel,))
        stored = stored_file(conn, source.rel)
        if stat_unchanged(stored, source):
            continue
        data, sha, _ = read_source(source)
        if stored is not None and sha is not None and stored[2] == sha and stored[3] == "ok":
            builder.record_file(source, sha, None, _memory_of(conn, source.rel))  # touched, same content
            continue
        tick()
        builder.compile_file(source, data, sha)
        if stored is None:
            result.added += 1
        else:
            result.changed += 1


def _memory_of(conn: sqlite3.Connection, rel: str) -> int | None:
    row = conn.execute("SELECT rowid FROM memories WHERE rel = ?", (rel,)).fetchone()
    return row[0] if row else None


def _remove_missing(conn: sqlite3.Connection, builder: Builder, result: CompileResult) -> None:
    gone = [r[0] for r in conn.execute("SELECT rel FROM files WHERE rel NOT IN (SELECT rel FROM temp.seen)")]
    for rel in gone:
        builder.delete_memory(rel)
        conn.execute("DELETE FROM files WHERE rel = ?", (rel,))
    result.removed += len(gone)


def _retry_duplicates(conn: sqlite3.Connection, builder: Builder) -> None:
    """A file that lost a duplicate-id clash may be valid now that the other one changed."""
    rows = conn.execute("SELECT rel FROM files WHERE status = 'invalid' AND error LIKE '[\"duplicate id%'").fetchall()
    for (rel,) in rows:
        path = builder.root.path / rel
        if not path.is_file():
            continue
        source = source_file(rel, path)
        data, sha, _ = read_source(source)
        builder.compile_file(source, data, sha)


def _refresh_ignored(conn: sqlite3.Connection, ignored: IgnoreMatcher) -> None:
    updates = [(int(ignored(rel)), rowid) for rowid, rel in conn.execute("SELECT rowid, rel FROM memories")]
    conn.executemany("UPDATE memories SET ignored = ? WHERE rowid = ? AND ignored != ?", [(*u, u[0]) for u in updates])


def _write_meta(conn: sqlite3.Connection, root: Root, patterns: list[str]) -> None:
    hashes = conn.execute("SELECT rel, sha256 FROM files").fetchall()
    meta = {
        "schema_version": str(conn.execute("PRAGMA user_version").fetchone()[0]),
        "tokenizer": terms.TOKENIZER_VERSION,
        "compiler": COMPILER_VERSION,
        "fts_tokenize": "unicode61 remove_diacritics 0 over engram terms (bigrams, folding, light stemming)",
        "fingerprint": fingerprint(hashes),
        "ignore_digest": ignore_digest(patterns),
        "scope": root.scope,
        "source_root": str(root.path.resolve()),
        "source_root_rel": ".",
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", meta.items())


@contextlib.contextmanager
def _progress(root: Root, enabled: bool):
    """A rich progress bar on a terminal, only for builds big enough to notice; yields a tick."""
    total = sum(1 for _ in walk_memory_files(root)) if enabled and sys.stderr.isatty() else 0
    if total < PROGRESS_THRESHOLD:
        yield lambda: None
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task("indexing", total=total)
        yield lambda: bar.advance(task)


def export_index(root: Root, config: Config, output: Path) -> CompileResult:
    """Compile ``root`` and write a self-contained copy to ``output`` for sharing."""
    result = compile_root(root, config)
    output = output.resolve()
    output.parent.mkdir(parents=True, exist_ok=True)
    temp = output.with_name(f".{output.name}.tmp-{os.getpid()}")
    try:
        shutil.copyfile(root.index_path, temp)
        conn = sqlite3.connect(temp, isolation_level=None)
        rel = os.path.relpath(root.path.resolve(), output.parent)
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('source_root_rel', ?)", (Path(rel).as_posix(),))
        conn.execute("VACUUM")
        conn.close()
        os.replace(temp, output)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return result

"""Compile one memory root into its ``index.db``: incremental, atomic, streaming.

Unchanged files (same size and mtime) are neither read nor parsed. When
anything changed, the current index is copied to a temp file, updated in
one transaction, and renamed over ``index.db``; a crash leaves the old
index in place and readers never see a half-built one.

Reading, parsing, tokenizing and screening a file needs no database: when
hundreds of files changed, worker processes do it while this process writes
the rows, in walk order, so the index is the same either way.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import os
import re
import sqlite3
import sys
import time
from collections import deque, namedtuple
from collections.abc import Generator, Iterator

from . import exported, pointers, terms
from .config import Config
from .errors import EngramError, Problem
from .freshness import (
    built_here,
    file_stamp,
    flagged_problems,
    ignore_digest,
    ignore_patterns,
    ignore_rules,
    needs_refresh,
    open_current,
    pointed_changed,
    read_source,
    recorded_problems,
    stat_digest,
    stat_unchanged,
    stored_file,
    unseen_problems,
)
from .gate import invalid_field, screened_text
from .graph import findings, rebuild_edges
from .index import (
    COMPILER_VERSION,
    FTS_COLUMNS,
    STORED_TEXT_SQL,
    create_index,
    digest_matches,
    fingerprint,
    has_engram_header,
    index_damage,
    printed_digest,
)
from .parse import Memory, ParseError, parse_memory
from .paths import remove_if_present, replacing, write_atomic
from .safety import scan, scan_secrets
from .sources import (
    BUILD_LOCK_FILE,
    BUILD_TEMP_PREFIX,
    CHECKED_FILE,
    Root,
    SourceFile,
    display_path,
    has_memory_folders,
    set_aside,
    source_file,
    stat_line,
    walk_memory_files,
)

LOCK_TIMEOUT_S = 60.0  # `engram index` waits this long for another build; the read path never waits
PROGRESS_THRESHOLD = 200
PARALLEL_MIN_FILES = 400  # fewer files to parse: starting worker processes would cost more than it saves
PARALLEL_CHUNK = 32  # files per task sent to a worker
MAX_WORKERS = 4  # this process writes every row; more workers would wait on it


class BuildBusy(EngramError, TimeoutError):
    """Another process is building this root; the read path serves the current index instead."""


class BuildTooSlow(EngramError, TimeoutError):
    """An inline refresh ran past the read path's time budget; the old index is left as it was."""


class CompileResult:
    def __init__(self, root: Root, report: Config | None = None) -> None:
        self.root = root
        self.report = report  # `engram index`'s config: it also says what no agent sees (`unseen_problems`)
        self.repaired: list[str] = []  # what was set aside: "<index>: <damage>; kept as <file>"
        self.total = 0
        self.files = 0
        self.added = 0
        self.changed = 0
        self.removed = 0
        self.invalid = 0
        self.wrote = False
        self.problems: list[Problem] = []
        self.compiled: set[str] = set()  # where (`display_path`) each file compiled by this build is

    @property
    def memories_changed(self) -> bool:
        """Whether the build added, changed or removed a memory file."""
        return bool(self.added or self.changed or self.removed)


class IgnoreMatcher:
    """Gitignore-style matching of root-relative paths (``knowledge/x.md``)."""

    def __init__(self, patterns: list[str]) -> None:
        import pathspec  # only the compiler needs it

        try:
            self._spec = pathspec.GitIgnoreSpec.from_lines(patterns) if any(p.strip() for p in patterns) else None
        except (ValueError, re.error):  # a line `ignore_rules` did not catch: the others still hold
            self._spec = pathspec.GitIgnoreSpec.from_lines([p for p in patterns if _compiles(pathspec, p)])

    def __call__(self, rel: str) -> bool:
        return bool(self._spec and self._spec.match_file(rel))


def _compiles(pathspec, pattern: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([pattern])
    except (ValueError, re.error):
        return False
    return True


# --- building -------------------------------------------------------------------------------


def fts_values(memory: Memory, pointed: str = "") -> tuple[str, ...]:
    """The term streams of the FTS columns, in `index.FTS_COLUMNS` order; ``pointed``: the terms
    of the documents a pointer memory links to (`pointers`), routed on as its body is."""
    return (
        terms.name_terms([memory.id]),
        terms.name_terms(memory.tags),
        terms.index_terms(memory.directive),
        terms.index_terms(memory.summary),
        terms.index_terms(" ".join(memory.triggers)),
        " ".join(filter(None, (terms.index_terms(memory.body), pointed))),
        terms.index_terms(" ".join(memory.applies_to)),
    )


def memory_from_row(row) -> Memory:
    """Rebuild the parsed memory from its stored row (used to delete its FTS terms)."""
    return Memory(
        id=row["id"],
        type=row["type"],
        title=row["title"],
        body=row["body"],
        tags=json.loads(row["tags"]),
        directive=row["directive"],
        summary=row["summary"],
        triggers=json.loads(row["triggers"]),
        applies_to=json.loads(row["applies_to"]),
        depends_on=json.loads(row["depends_on"]),
        level=row["level"],
        confidence=row["confidence"],
        authority=row["authority"],
        lifecycle=row["lifecycle"],
        valid_until=row["valid_until"],
        roles=json.loads(row["roles"]),
        updated=row["updated"],
    )


# The `memories` columns a prepared file fills, in order; the builder adds rel and ignored.
STORED_COLUMNS = (
    "id",
    "type",
    "authority",
    "confidence",
    "lifecycle",
    "level",
    "valid_until",
    "roles",
    "tags",
    "directive",
    "summary",
    "title",
    "triggers",
    "applies_to",
    "depends_on",
    "updated",
    "body",
    "text_sha256",
    "source_sha256",
    "tokens",
    "safety",
    "name_terms",
    "pointed",
)
INSERT_MEMORY = "INSERT INTO memories (rel, ignored, {}) VALUES ({})".format(
    ", ".join(STORED_COLUMNS), ", ".join("?" * (len(STORED_COLUMNS) + 2))
)
# The contentless FTS table takes a row's terms and, to delete them, the same terms again.
_TERMS = ", ".join("?" * len(FTS_COLUMNS))
INSERT_TERMS = f"INSERT INTO memories_fts(rowid, {', '.join(FTS_COLUMNS)}) VALUES (?, {_TERMS})"
DELETE_TERMS = f"INSERT INTO memories_fts(memories_fts, rowid, {', '.join(FTS_COLUMNS)}) VALUES ('delete', ?, {_TERMS})"


class Prepared(namedtuple("Prepared", "sha same_content problems row fts documents", defaults=(False, (), (), (), ()))):
    """One source file read, hashed, parsed, tokenized and screened: the work that needs no
    database, a pure function of the file, so big builds do it in worker processes.

    ``sha``: its SHA-256; ``same_content``: that hash is the one already indexed, so nothing was
    parsed; ``problems``: (reason, line) pairs, why the file cannot be a memory (no ``row``) or, with
    a ``row``, warnings about it; ``row``: the values of STORED_COLUMNS; ``fts``: the term streams
    of the FTS columns; ``documents``: those a pointer memory links to (`pointers.Document`).
    """

    __slots__ = ()


def prepare(source: SourceFile, root: Root, indexed_sha: str | None = None) -> Prepared:
    """Read one source file of ``root`` and compute all it stores, unless its content is ``indexed_sha``."""
    data, sha = read_source(source)
    if data is None or sha is None:
        return Prepared(sha, problems=((source.problem or "cannot read file", None),))
    if sha == indexed_sha:
        return Prepared(sha, same_content=True)
    text, problem = decode_source(data)
    if problem is not None:
        return Prepared(sha, problems=(problem,))
    try:
        memory = parse_memory(text, source.rel)
    except ParseError as exc:
        return Prepared(sha, problems=tuple((error.reason, error.line) for error in exc.problems))
    links = pointers.pointed_documents(memory.body, source.fspath, root.project, root.path)
    pointed, warnings = _pointed_terms(root, links)
    fts = fts_values(memory, pointed)
    # the stored name terms are the id's and the tags' term streams together, as `name_terms([id, *tags])` joins them
    name_terms = " ".join(filter(None, fts[:2]))
    row = memory_row(memory, sha, name_terms, pointed)
    return Prepared(
        sha, problems=memory.warnings + warnings, row=row, fts=fts, documents=tuple(pointers.documents_of(links))
    )


def _pointed_terms(root: Root, links: list[pointers.Link]) -> tuple[str, tuple]:
    """The terms of the documents a pointer memory links to, and a warning when there are none
    to index: every link leads nowhere (a rule moved without its links mended holds nothing to
    route on), or one looks like it holds a secret (an index shared with `--output` holds its
    terms, not only the people who can read the repository)."""
    if not any(link.document.size for link in links) and (broken := [link for link in links if link.explicit]):
        return "", (
            (f"it links to {broken[-1].document.rel}, which is missing or empty: nothing of it to route on", None),
        )
    text = pointers.read_documents(root.project, links) if links else ""
    if label := text and scan_secrets(text):
        return "", ((f"a document it links to looks like it holds a secret ({label}): not routed on", None),)
    return terms.index_terms(text), ()


def memory_row(memory: Memory, source_sha: str, name_terms: str, pointed: str) -> tuple:
    """The values of STORED_COLUMNS for a parsed memory; ``name_terms``: `terms.name_terms` of its
    id and tags; ``pointed``: the terms of the documents it links to, if a pointer (`pointers`)."""
    printed = {
        "id": memory.id,
        "type": memory.type,
        "authority": memory.authority,
        "tags": json.dumps(memory.tags),
        "applies_to": json.dumps(memory.applies_to),
        "title": memory.title,
        "directive": memory.directive,
        "summary": memory.summary,
        "body": memory.body,
    }
    return (
        memory.id,
        memory.type,
        memory.authority,
        memory.confidence,
        memory.lifecycle,
        memory.level,
        memory.valid_until,
        json.dumps(memory.roles),
        printed["tags"],
        memory.directive,
        memory.summary,
        memory.title,
        json.dumps(memory.triggers),
        printed["applies_to"],
        json.dumps(memory.depends_on),
        memory.updated,
        memory.body,
        printed_digest(printed),
        source_sha,
        terms.estimate_tokens(memory.body),
        scan(screened_text(printed)) or scan_secrets(memory.unseen),
        name_terms,
        pointed,
    )


def decode_source(data: bytes) -> tuple[str, tuple[str, int | None] | None]:
    """(text, None), or ("", (reason, line)) when the file cannot be a memory."""
    if b"\x00" in data:
        return "", ("binary file, not markdown text", None)
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return "", ("not UTF-8 text", data[: exc.start].count(b"\n") + 1)


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
        self.conn.execute(DELETE_TERMS, (row["rowid"], *fts_values(memory_from_row(row), row["pointed"])))
        self.conn.execute("DELETE FROM memories WHERE rowid = ?", (row["rowid"],))
        self.conn.execute("DELETE FROM pointed_documents WHERE memory = ?", (rel,))

    def insert_memory(self, rel: str, prepared: Prepared) -> int | None:
        rowid = self.conn.execute(INSERT_MEMORY, (rel, int(self.ignored(rel)), *prepared.row)).lastrowid
        self.conn.execute(INSERT_TERMS, (rowid, *prepared.fts))
        self.conn.executemany(
            "INSERT INTO pointed_documents (memory, rel, size, mtime_ns, ctime_ns) VALUES (?, ?, ?, ?, ?)",
            ((rel, *document) for document in prepared.documents),
        )
        return rowid

    def record_file(self, source: SourceFile, sha: str | None, problems: tuple, memory: int | None) -> None:
        """``problems``: (reason, line) pairs, why the file is invalid (no ``memory``) or warnings."""
        self.conn.execute(
            "INSERT OR REPLACE INTO files (rel, size, mtime_ns, ctime_ns, sha256, status, error, memory)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                source.rel,
                source.size,
                source.mtime_ns,
                source.ctime_ns,
                sha,
                "ok" if memory is not None else "invalid",
                json.dumps([list(p) for p in problems]) if problems else None,
                memory,
            ),
        )

    def touch_file(self, source: SourceFile) -> None:
        """A file whose stat changed but whose content did not: only its stat is new."""
        self.conn.execute(
            "UPDATE files SET size = ?, mtime_ns = ?, ctime_ns = ? WHERE rel = ?",
            (source.size, source.mtime_ns, source.ctime_ns, source.rel),
        )

    def compile_file(self, source: SourceFile, prepared: Prepared) -> None:
        """Store one prepared file: its memory, or why it cannot be one. Of two files with one id
        the one `_keeps_id` prefers holds it, whichever was indexed first: the index is the same
        built from scratch or step by step."""
        self.delete_memory(source.rel)
        problems, memory_row = prepared.problems, None
        if prepared.row:
            memory_id = prepared.row[0]
            owner = self.conn.execute("SELECT rel FROM memories WHERE id = ?", (memory_id,)).fetchone()
            if owner is not None and _keeps_id(source.rel, owner[0], memory_id):
                self.delete_memory(owner[0])
                self.conn.execute(
                    "UPDATE files SET status = 'invalid', error = ?, memory = NULL WHERE rel = ?",
                    (json.dumps([[self._duplicate(memory_id, source.rel), None]]), owner[0]),
                )
                owner = None
            if owner is not None:
                problems = ((self._duplicate(memory_id, owner[0]), None),)
            else:
                memory_row = self.insert_memory(source.rel, prepared)
        self.record_file(source, prepared.sha, problems, memory_row)

    def _duplicate(self, memory_id: str, holder: str) -> str:
        return f"duplicate id '{memory_id}' (also in {display_path(self.root, holder)})"


def _keeps_id(rel: str, other: str, memory_id: str) -> bool:
    """Whether the file at ``rel`` rather than ``other`` holds an id both declare: the one named
    for it (`rules/deploy.md` for `deploy`, not a copy saved as `deploy-old.md`), else the first
    path."""

    def key(path: str) -> tuple[bool, str]:
        return (os.path.splitext(os.path.basename(path))[0] != memory_id, path)

    return key(rel) < key(other)


def _lock_file(path: str):
    """The lock file, opened without following a link: a committed `.index.lock` link would have the
    file it names created. A link found there is replaced by a file of engram's own."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags, 0o666)
    except OSError:
        if not os.path.islink(path):
            raise
        os.remove(path)
        descriptor = os.open(path, flags, 0o666)
    return os.fdopen(descriptor, "a+")


@contextlib.contextmanager
def root_lock(root: Root, wait: bool = True):
    """Serialise compilers of one root across processes (two `engram index` at once).

    Without ``wait`` (the read path), a lock held by another process raises BuildBusy at once.
    """
    if root.data != root.path:
        os.makedirs(root.data, exist_ok=True)
    handle = _lock_file(os.path.join(root.data, BUILD_LOCK_FILE))
    try:
        deadline = time.monotonic() + (LOCK_TIMEOUT_S if wait else 0)
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait:
                    raise BuildBusy(f"{root.path}: another engram is indexing") from None
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{root.path}: another engram is still indexing") from None
                time.sleep(0.05)
        yield
    finally:
        handle.close()


def compile_root(
    root: Root, config: Config, progress: bool = False, deadline: float | None = None, report: bool = False
) -> CompileResult:
    """Bring ``root/index.db`` up to date with the root's sources; a damaged index is set aside
    (index.db.corrupt-<time>) and rebuilt.

    ``deadline`` (a `time.monotonic` value, for the read path): neither wait for the lock nor
    build past it (BuildBusy, BuildTooSlow). ``report``: add the warnings `engram index` says about
    memories no agent sees as written (the read path has no use for them).
    """
    result = CompileResult(root, config if report else None)
    if not os.path.isdir(root.path) or (root.scope == "global" and not has_memory_folders(root.path)):
        return result  # a global folder that holds no memories (ENGRAM_GLOBAL_DIR=/) gets no index
    patterns, ignore_problems = ignore_rules(root, config)
    result.problems += ignore_problems
    with root_lock(root, wait=deadline is None):
        _remove_leftovers(root)
        _roll_back_journal(root.index_path)
        if os.path.isdir(root.index_path):  # no build could ever replace it: every load packed nothing
            kept = set_aside(root.index_path)
            result.repaired.append(
                f"{root.index_path}: a folder, not an index; rebuilt, the folder kept as {os.path.basename(kept)}"
            )
        # every page and the full-text structure are read only when the file changed since engram
        # last built it (a copy, a tampered or damaged file has another stamp), to say what is damaged
        # before it is rebuilt; `verify` always reads them
        ours = built_here(root)
        current = open_current(root, thorough=not ours)
        damage = None
        if current is not None and not ours:
            # An index engram did not build here (a clone's committed file, a copy, one
            # edited in place) is never built on: a build copies the rows of unchanged files, and its
            # rows could hold text in no memory file, hashed to match, or a flag cleared.
            damage = _damage(current, root.index_path)
            current.close()
            current = None
        if current is None and os.path.isfile(root.index_path):
            _set_aside_if_damaged(root, result, damage)
        try:
            if current is not None and not needs_refresh(root, current, patterns):
                _summarise(current, result)
                return result
            _rebuild_into_temp(root, current, patterns, result, progress, deadline)
            _record_checked(root)  # built here: sound by construction
        finally:
            if current is not None:
                current.close()
    return result


def _record_checked(root: Root) -> None:
    """Only builds read and write it, under the build lock; a torn write only costs one more check."""
    stamp = file_stamp(root.index_path)
    if stamp is not None:
        with contextlib.suppress(OSError):  # replaced, not written through: a committed symlink stays a link's name
            write_atomic(os.path.join(root.data, CHECKED_FILE), stamp + "\n", durable=False)


def compile_to(root: Root, config: Config, target: str, current: sqlite3.Connection | None) -> CompileResult:
    """Build the root's index at ``target`` (from ``current``, the root's usable index, when given)
    and write nothing into the root: `engram check` on a clone that has no index."""
    result = CompileResult(root)
    build_into(target, root, current, ignore_patterns(root, config), result)
    return result


def _damage(conn: sqlite3.Connection, index_path: str) -> str | None:
    """What is damaged in an index engram did not build here, said when it is set aside; None if nothing."""
    if not _full_text_sound(index_path):
        return "the full-text index is damaged"
    if not _stored_text_sound(conn):  # load would skip the memory: written by something other than engram
        return "a memory's stored text does not match its hash"
    return None


def _stored_text_sound(conn: sqlite3.Connection) -> bool:
    """Every memory's printed columns valid and hashing to their stored digest (`verify` says which not)."""
    return all(not invalid_field(row) and digest_matches(row) for row in conn.execute(STORED_TEXT_SQL))


def _full_text_sound(path: str) -> bool:
    """FTS5's own structure check (quick_check does not read its shadow tables). It needs a
    writable handle; the build lock is held, and nothing is written."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN")
        conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')")
        return True
    except (sqlite3.DatabaseError, MemoryError):  # a garbage length in a page reads as out of memory
        return False
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        conn.close()


def _set_aside_if_damaged(root: Root, result: CompileResult, known: str | None) -> None:
    """A damaged index (not one that is merely outdated) is kept as index.db.corrupt-<time>."""
    damage = known or index_damage(root.index_path)
    if damage:
        kept = set_aside(root.index_path)
        kept_as = os.path.basename(kept)
        result.repaired.append(f"{root.index_path}: {damage}; rebuilt, the damaged file kept as {kept_as}")


def _summarise(conn: sqlite3.Connection, result: CompileResult) -> None:
    result.total = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    result.files, result.invalid = conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE status = 'invalid') FROM files"
    ).fetchone()
    result.problems += recorded_problems(conn, result.root) + flagged_problems(conn, result.root)
    if result.report is not None:
        result.problems += unseen_problems(conn, result.root, result.report)


def _roll_back_journal(index_path: str) -> None:
    """A writer killed inside a transaction on the index (a `sqlite-utils` command, say) leaves a hot
    journal that read-only handles cannot roll back: every read would fail as if the file were damaged.
    A read-write handle's first read rolls it back, restoring the index as it was (SQLite's recovery)."""
    if not os.path.exists(index_path + "-journal"):
        return
    with contextlib.suppress(sqlite3.Error), contextlib.closing(sqlite3.connect(index_path)) as conn:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()


def _remove_leftovers(root: Root) -> None:
    """Temp files of a build that was killed; safe because the lock is held."""
    for name in os.listdir(root.path):
        if name.startswith(BUILD_TEMP_PREFIX):
            remove_if_present(os.path.join(root.path, name))


def _copy_file(source: str, target: str) -> None:
    import shutil  # only when something changed: a no-op `engram index` does without it

    shutil.copyfile(source, target)


def _rebuild_into_temp(
    root: Root,
    current: sqlite3.Connection | None,
    patterns: list[str],
    result: CompileResult,
    progress: bool,
    deadline: float | None,
) -> None:
    with replacing(root.index_path) as temp:  # BUILD_TEMP_PREFIX...: what a killed build leaves, the next one removes
        build_into(temp, root, current, patterns, result, progress, deadline)
    result.wrote = True


def build_into(
    target: str,
    root: Root,
    current: sqlite3.Connection | None,
    patterns: list[str],
    result: CompileResult,
    progress: bool = False,
    deadline: float | None = None,
) -> None:
    """Build the root's index at ``target``: a copy of ``current``'s file brought up to date, or a new one."""
    remove_if_present(target)
    if current is not None:
        _copy_file(root.index_path, target)
    conn = sqlite3.connect(target, isolation_level=None)
    conn.row_factory = sqlite3.Row
    try:
        if current is None:
            create_index(conn)
        _apply_changes(conn, root, patterns, result, progress, deadline)
        conn.close()
    except BaseException:
        conn.close()
        remove_if_present(target)
        raise


def _apply_changes(
    conn: sqlite3.Connection,
    root: Root,
    patterns: list[str],
    result: CompileResult,
    progress: bool,
    deadline: float | None,
) -> None:
    ignored = IgnoreMatcher(patterns)
    builder = Builder(conn, root, ignored)
    conn.execute("BEGIN")
    conn.execute("CREATE TEMP TABLE seen (rel TEXT PRIMARY KEY)")
    with _progress(root, progress) as tick:
        _walk_and_compile(conn, root, builder, result, tick, deadline)
    _remove_missing(conn, builder, result)
    _retry_duplicates(conn, builder)
    _refresh_ignored(conn, ignored)
    rebuild_edges(conn)
    _write_meta(conn, root, patterns)
    conn.execute("COMMIT")
    _summarise(conn, result)


def _walk_and_compile(
    conn: sqlite3.Connection, root: Root, builder: Builder, result: CompileResult, tick, deadline: float | None
) -> None:
    # the read path (a deadline) prepares in this process: starting workers alone costs its budget
    with contextlib.closing(_prepared(_changed_sources(conn, root), parallel=deadline is None)) as prepared:
        for job, item in prepared:
            if deadline is not None and time.monotonic() > deadline:
                raise BuildTooSlow(f"{root.path}: too many changed files to index within the read path's budget")
            if item.same_content:
                builder.touch_file(job.source)
                continue
            tick()
            builder.compile_file(job.source, item)
            result.compiled.add(display_path(root, job.source.rel))
            if job.is_new:
                result.added += 1
            else:
                result.changed += 1


class _Job(namedtuple("_Job", "source root is_new indexed_sha")):
    """A source file of ``root`` whose size or mtime differs from the index, or a pointer memory
    whose documents changed; ``indexed_sha``: the hash of its valid indexed content, if any (None
    for such a pointer memory: read again though its own content is the same)."""

    __slots__ = ()


def _changed_sources(conn: sqlite3.Connection, root: Root) -> Iterator[_Job]:
    repointed = pointed_changed(conn, root)
    for source in walk_memory_files(root):
        conn.execute("INSERT OR IGNORE INTO seen VALUES (?)", (source.rel,))
        stored = stored_file(conn, source.rel)
        if not stat_unchanged(stored, source):
            indexed_sha = stored[3] if stored is not None and stored[4] == "ok" else None
            yield _Job(source, root, stored is None, indexed_sha)
        elif source.rel in repointed:
            yield _Job(source, root, False, None)


def _prepared(jobs: Iterator[_Job], parallel: bool) -> Generator[tuple[_Job, Prepared], None, None]:
    """Each job with its prepared file, in walk order; big builds prepare in worker processes."""
    head = list(itertools.islice(jobs, PARALLEL_MIN_FILES))
    jobs = itertools.chain(head, jobs)
    workers = _worker_count()
    if not parallel or len(head) < PARALLEL_MIN_FILES or workers < 2:
        yield from ((job, _prepare_job(job)) for job in jobs)
    else:
        yield from _prepared_in_workers(jobs, workers)


def _prepare_job(job: _Job) -> Prepared:
    return prepare(job.source, job.root, job.indexed_sha)


def _prepared_in_workers(jobs: Iterator[_Job], workers: int) -> Iterator[tuple[_Job, Prepared]]:
    """Chunks of jobs go to worker processes; only a few are in flight, so memory stays flat."""
    import multiprocessing  # only big builds need these
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # spawn, not fork: this process holds the database, the root lock and maybe a progress thread
    pool = ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("spawn"), initializer=_die_with_parent, initargs=(os.getpid(),)
    )
    in_flight: deque = deque()  # (chunk, future of its results), oldest first
    unsent: list[_Job] = []
    try:
        for chunk in _chunks(jobs, PARALLEL_CHUNK):
            unsent = chunk
            in_flight.append((chunk, pool.submit(_prepare_chunk, chunk)))
            unsent = []
            if len(in_flight) > 2 * workers:
                yield from _oldest_results(in_flight)
        while in_flight:
            yield from _oldest_results(in_flight)
    except (OSError, BrokenProcessPool):
        # No worker processes here (a sandbox, a calling script without a __main__ guard):
        # what is not yielded yet is prepared in this process instead.
        left = itertools.chain(*(chunk for chunk, _ in in_flight), unsent, jobs)
        yield from ((job, _prepare_job(job)) for job in left)
    finally:
        pool.shutdown(cancel_futures=True)


def _die_with_parent(parent: int) -> None:
    """A worker whose `engram index` was killed (kill -9 leaves no time to stop it) exits too."""
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _oldest_results(in_flight: deque) -> Iterator[tuple[_Job, Prepared]]:
    """The oldest chunk's jobs with their prepared files; the chunk leaves the queue once they are in."""
    chunk, future = in_flight[0]
    results = future.result()
    in_flight.popleft()
    return zip(chunk, results)


def _prepare_chunk(jobs: list[_Job]) -> list[Prepared]:
    return [_prepare_job(job) for job in jobs]


def _chunks(items: Iterator[_Job], size: int) -> Iterator[list[_Job]]:
    while chunk := list(itertools.islice(items, size)):
        yield chunk


def _worker_count() -> int:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(usable, MAX_WORKERS)


def _remove_missing(conn: sqlite3.Connection, builder: Builder, result: CompileResult) -> None:
    gone = [r[0] for r in conn.execute("SELECT rel FROM files WHERE rel NOT IN (SELECT rel FROM temp.seen)")]
    for rel in gone:
        builder.delete_memory(rel)
        conn.execute("DELETE FROM files WHERE rel = ?", (rel,))
    result.removed += len(gone)


def _retry_duplicates(conn: sqlite3.Connection, builder: Builder) -> None:
    """A file that lost a duplicate-id clash may be valid now that the other one changed."""
    rows = conn.execute("SELECT rel FROM files WHERE status = 'invalid' AND error LIKE '[[\"duplicate id%'").fetchall()
    for (rel,) in rows:
        path = os.path.join(builder.root.path, rel)
        if not os.path.isfile(path):
            continue
        source = source_file(rel, path)
        builder.compile_file(source, prepare(source, builder.root))


def _refresh_ignored(conn: sqlite3.Connection, ignored: IgnoreMatcher) -> None:
    # One statement, the matcher called by SQLite once per row: no list of every memory. The flag
    # is 0 or 1, so a row whose flag differs from the matcher's takes the other value.
    conn.create_function("engram_ignored", 1, lambda rel: int(ignored(rel)), deterministic=True)
    conn.execute("UPDATE memories SET ignored = 1 - ignored WHERE ignored != engram_ignored(rel)")


def _write_meta(conn: sqlite3.Connection, root: Root, patterns: list[str]) -> None:
    meta = {
        "schema_version": str(conn.execute("PRAGMA user_version").fetchone()[0]),
        "tokenizer": terms.TOKENIZER_VERSION,
        "compiler": COMPILER_VERSION,
        "fts_tokenize": "unicode61 remove_diacritics 0 over engram terms (bigrams, folding, light stemming)",
        "fingerprint": fingerprint(conn.execute("SELECT rel, sha256 FROM files ORDER BY rel")),
        "ignore_digest": ignore_digest(patterns),
        "stat_digest": stat_digest(
            stat_line(*row) for row in conn.execute("SELECT rel, size, mtime_ns, ctime_ns FROM files ORDER BY rel")
        ),
        "graph_findings": json.dumps(findings(conn)),
        "scope": root.scope,
        "source_root": os.path.realpath(root.path),
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


def _may_write_export(root: Root, output: str) -> None:
    """Refuse an `--output` that would replace the root's own index, a file in the root, or a file
    that is not an engram index (a typo must not turn someone's notes into SQLite)."""
    inside = os.path.commonpath([output, os.path.realpath(root.path)]) == os.path.realpath(root.path)
    if inside:
        raise EngramError(f"--output {output}: a file inside {root.path} is not written; choose a path outside it", 2)
    if os.path.lexists(output) and not has_engram_header(output):
        raise EngramError(f"--output {output}: the file exists and is not an engram index; not replaced", 2)


def export_index(root: Root, config: Config, output: str | os.PathLike[str]) -> tuple[CompileResult, bool]:
    """Compile ``root`` and write a self-contained copy to ``output`` for sharing. Not written (False) while
    a memory is flagged: the file is handed to a team, and the text it holds goes with it."""
    output = os.path.realpath(output)
    _may_write_export(root, output)
    result = compile_root(root, config)
    if any(problem.kind == "flagged" for problem in result.problems):
        return result, False
    folder = os.path.dirname(output)
    os.makedirs(folder, exist_ok=True)
    with replacing(output) as temp:
        _copy_file(root.index_path, temp)
        conn = sqlite3.connect(temp, isolation_level=None)
        rel = os.path.relpath(os.path.realpath(root.path), folder)
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('source_root_rel', ?)", (rel.replace(os.sep, "/"),)
        )
        exported.write(conn)
        conn.execute("VACUUM")
        conn.close()
    return result, True

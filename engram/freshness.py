"""Is an index up to date with its sources? Stdlib only: `load` asks this on every call.

A file whose size, mtime and ctime match the index is taken as unchanged; one
whose stat differs is hashed, so touching a file is not a change. Where an
`engram watch` of the root runs, it is asked first (`watcher_vouches`): its
answer spares the walk over every file.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator

from . import gate, pointers, terms
from .config import Config
from .errors import Problem, debug
from .graph import findings
from .index import COMPILER_VERSION, IndexFileError, check_schema, newer_or_older, read_meta, sha256_text
from .lazyre import LazyPattern
from .paths import read_bytes, read_head, read_text, shown_path, sqlite_uri
from .sources import (
    CHECKED_FILE,
    INDEX_FILE,
    MAX_FILE_BYTES,
    WATCH_SOCKET,
    Root,
    SourceFile,
    display_path,
    stat_lines,
    walk_memory_files,
)

UPDATE = "`engram index` updates it"  # the hint for a local index behind its sources


def ignore_patterns(root: Root, config: Config) -> list[str]:
    return ignore_rules(root, config)[0]


def ignore_rules(root: Root, config: Config) -> tuple[list[str], list[Problem]]:
    """The ignore patterns, and the problems of an `.engramignore` that is there but cannot be read
    (what it lists would load, so `index` says so and `check` fails until it is fixed) and of
    patterns left out (`_costly`)."""
    lines, reason = _ignore_lines(root)
    where = shown_path(root.ignore_path, root.project)
    problems = [Problem(where, f"cannot be read ({reason}); nothing it lists is ignored")] if reason is not None else []
    patterns = []
    for source, listed in ((where, lines), ("config ignore.also", config.get("ignore.also"))):
        for number, pattern in enumerate(listed, start=1):
            wrong = _not_a_pattern(pattern) or (_costly(pattern) and f"more than {MAX_STARS} `*` in one name")
            if not wrong:
                patterns.append(pattern)
                continue
            line = number if listed is lines else None  # config's list has no lines to name
            problems.append(Problem(source, f"{wrong}; this pattern is left out", line))
    return patterns, problems


def _not_a_pattern(pattern: str) -> str:
    """What makes a line no gitignore pattern, which would stop every build ("" when it is one): a
    lone `\\` at its end escapes nothing, a range `[z-a]` runs backwards. Checked here, where the
    read path passes, without the matcher (`compile.IgnoreMatcher`), which it never loads."""
    if (len(pattern) - len(pattern.rstrip("\\"))) % 2:
        return "it ends in a lone `\\`, which escapes nothing"
    for bracket in _BRACKET.finditer(pattern):
        chars = bracket.group(1)
        if any(chars[i + 1] == "-" and chars[i] > chars[i + 2] for i in range(len(chars) - 2)):
            return "a range in `[...]` runs backwards"
    return ""


_BRACKET = LazyPattern(r"\[[!^]?(\]?[^\][]*)\]")  # no `[` inside: from each `[`, a search stops at the next one


# Matching `*a*a*a*a*b` against a long file name backtracks through every placing of the `a`s:
# four `*` in one name cost 11 s on a 250-letter name, three 3 ms.
MAX_STARS = 3


def _costly(pattern: str) -> bool:
    """Whether a name of the pattern holds more than MAX_STARS `*` (`**` alone is a folder wildcard)."""
    return any(part != "**" and part.count("*") > MAX_STARS for part in pattern.split("/"))


def _ignore_lines(root: Root) -> tuple[list[str], str | None]:
    """The ignore file's lines, and why it cannot be read when it is there and cannot be."""
    try:
        return read_text(root.ignore_path, MAX_IGNORE_BYTES).splitlines(), None
    except FileNotFoundError:
        return [], None
    except UnicodeDecodeError:
        return [], "not UTF-8 text"
    except OSError as exc:
        return [], exc.strerror or str(exc)


MAX_IGNORE_BYTES = 1024 * 1024


def ignore_digest(patterns: list[str]) -> str:
    return sha256_text("\n".join(patterns))


def open_current(root: Root, thorough: bool = False) -> sqlite3.Connection | None:
    """The root's index if this version of engram can use it as is, else None (rebuild)."""
    return open_usable(root.index_path, thorough)


def open_usable(path: str, thorough: bool = False) -> sqlite3.Connection | None:
    """The index at ``path`` if this version of engram can use it as is, else None.

    ``thorough`` also reads every page (``PRAGMA quick_check``): too slow for each `load`,
    right for `index` and `check`, which must notice a damaged file behind a valid header.
    """
    if not os.path.isfile(path):
        return None
    try:
        conn = sqlite3.connect(sqlite_uri(path), uri=True)
        conn.row_factory = sqlite3.Row
        check_schema(conn, path)
        unusable = built_by_another_version(read_meta(conn))
        if unusable or (thorough and conn.execute("PRAGMA quick_check").fetchone()[0] != "ok"):
            conn.close()
            return None
        return conn
    except (sqlite3.DatabaseError, IndexFileError):
        return None


def built_by_another_version(meta: dict[str, str]) -> str | None:
    """What of an index's tokenizer and compiler differs from this engram's, as a phrase; None when
    both match. Its terms then differ from the queries' (other stems, other stopwords)."""
    built, ours = (meta.get("tokenizer"), meta.get("compiler")), (terms.TOKENIZER_VERSION, COMPILER_VERSION)
    if built == ours:
        return None
    at = 1 if built[1] != ours[1] else 0  # the compilers' versions, or the tokenizers' where those agree
    which = newer_or_older(_trailing_number(built[at]), _trailing_number(ours[at]))
    tokenizer, compiler = (gate.name(value) for value in built)  # the file's own words: screened like a memory's
    return f"built by {which} engram (tokenizer {tokenizer}, compiler {compiler}; this one reads {ours[0]}, {ours[1]})"


def _trailing_number(version: str | None) -> int | None:
    """The number a version ends with (`engram-terms-9`: 9, `10`: 10)."""
    tail = (version or "").rpartition("-")[2]
    return int(tail) if tail.isascii() and tail.isdigit() and len(tail) < 10 else None


def stored_file(conn: sqlite3.Connection | None, rel: str):
    if conn is None:
        return None
    return conn.execute(
        "SELECT size, mtime_ns, ctime_ns, sha256, status, error FROM files WHERE rel = ?", (rel,)
    ).fetchone()


def stat_unchanged(stored, source: SourceFile) -> bool:
    return stored is not None and tuple(stored[:3]) == (source.size, source.mtime_ns, source.ctime_ns)


def needs_refresh(root: Root, conn: sqlite3.Connection | None, patterns: list[str], vouched: str | None = None) -> bool:
    """True when any source differs from the index by stat, or the ignore rules changed. ``vouched``:
    the index stamp an `engram watch` of the root vouched for before ``conn`` was opened
    (`watcher_vouches`); while the index file still has it, no memory file needs a look."""
    if conn is None:
        return os.path.isdir(root.path)
    meta = read_meta(conn)
    if meta.get("ignore_digest") != ignore_digest(patterns):
        return True
    if pointed_changed(conn, root):  # outside the memory folders: no watcher vouches for them
        return True
    if vouched is not None and vouched == file_stamp(root.index_path):
        debug("freshness: vouched for by engram watch, no walk")
        return False
    lines = stat_lines(root)
    WALKED[root.path] = len(lines)
    return meta.get("stat_digest") != stat_digest(sorted(lines))


def pointed_changed(conn: sqlite3.Connection, root: Root) -> set[str]:
    """The pointer memories (their files' rel) one of whose documents (`pointers`) was edited,
    added or removed since indexing: a stat each, for the few memories that point."""
    rows = conn.execute("SELECT memory, rel, size, mtime_ns, ctime_ns FROM pointed_documents").fetchall()
    return {memory for memory, *document in rows if pointers.stat_of(root.project, document[0]) != tuple(document)}


# The memory files each root's walk stat'ed in this process: where a walk is costly, `autowatch`
# starts a watcher so that the next call needs none.
WALKED: dict[str, int] = {}


def built_here(root: Root) -> bool:
    """Whether the index file is the one engram last built here: a clone's committed file, a copy's,
    or one written by something else has another stamp (size, times, inode)."""
    return file_stamp(root.index_path) == _built_stamp(root)


def _built_stamp(root: Root) -> str | None:
    path = os.path.join(root.data, CHECKED_FILE)
    try:
        if os.path.islink(path):  # a committed link is no stamp of ours
            return None
        return read_head(path, 200).decode("ascii").strip() or None  # a FIFO is refused, not waited on
    except (OSError, ValueError):
        return None


def file_stamp(path: str) -> str | None:
    """What changes whenever a file is written, replaced or touched: size, mtime, ctime, inode."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino}"


# Inside `engram watch`, running a reader's command: the stamp it vouches for, per root path.
VOUCHED_HERE: dict[str, str] = {}
WATCH_TIMEOUT_S = 0.8  # a watcher indexing an edit answers when done: as long as an inline refresh may take
WATCH_ANSWER_BYTES = 200


def watcher_vouches(root: Root) -> str | None:
    """The stamp of the index an `engram watch` of this root says is current: every change to a
    memory file made before this call is in it. None when there is no watcher or it cannot say.
    Ask before opening the index: the watcher may replace it while it answers."""
    if root.path in VOUCHED_HERE:
        return VOUCHED_HERE[root.path]
    answer = watcher_answers(root)
    if answer is None or not answer.startswith(b"clean "):
        return None
    return answer[len(b"clean ") :].rstrip(b"\n").decode("ascii", "replace")


def watcher_answers(root: Root) -> bytes | None:
    """The answer of the root's watcher, None when none answers (no socket, or one left by a watcher that died)."""
    if not os.path.exists(os.path.join(root.path, WATCH_SOCKET)):
        return None
    from .remote import FRESH, connect

    with watch_address(root) as address:
        client = connect(address, WATCH_TIMEOUT_S)
    if client is None:
        return None
    try:
        client.sendall(FRESH)
        return client.recv(WATCH_ANSWER_BYTES)
    except OSError:
        return None
    finally:
        client.close()


@contextlib.contextmanager
def watch_address(root: Root) -> Iterator[str]:
    """The watcher's socket path; past the length a socket address may have, the same file through a
    descriptor of the root (Linux's /proc/self/fd), which every deep checkout can use."""
    path = os.path.join(root.path, WATCH_SOCKET)
    if len(os.fsencode(path)) < 100:
        yield path
        return
    folder = os.open(root.path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{folder}/{WATCH_SOCKET}"
    finally:
        os.close(folder)


DIGEST_CHUNK = 4096


def stat_digest(lines: Iterable[str]) -> str:
    """One digest of every file's `stat_line`, given in path order (a load sorts the walk's
    lines; the compiler reads its files table ``ORDER BY rel``, the same order).

    The compiler stores it, so a load compares one value instead of reading a row per file.
    Lines are hashed a chunk at a time: no list of the whole corpus.
    """
    digest, lines, separator = hashlib.sha256(), iter(lines), ""
    while chunk := list(itertools.islice(lines, DIGEST_CHUNK)):
        digest.update((separator + "\n".join(chunk)).encode("utf-8", "surrogateescape"))
        separator = "\n"
    return digest.hexdigest()


def recorded_problems(conn: sqlite3.Connection, root: Root) -> list[Problem]:
    """What the last build found: invalid files and warnings about files (every problem of each,
    with its line), then unknown `depends_on` ids and cycles (warnings, `graph.findings`, in the
    meta table since the build: reading every reference again costs a no-op `index` 30 ms at 10,000)."""
    problems = [
        Problem(display_path(root, rel), reason, line, "invalid" if status == "invalid" else "warning")
        for rel, status, error in conn.execute(
            "SELECT rel, status, error FROM files WHERE error IS NOT NULL ORDER BY rel"
        )
        for reason, line in json.loads(error)
    ]
    return problems + [
        Problem(display_path(root, rel), reason, kind="warning") for rel, reason in _graph_findings(conn)
    ]


def flagged_problems(conn: sqlite3.Connection, root: Root) -> list[Problem]:
    """The memories the safety screen flagged: indexed, never packed (`load` says SKIPPED). Each
    line of the file the screen flags alone is named, so that every secret is found in one pass;
    a memory flagged only as a whole (a key split over lines) is named once, without a line."""
    out = []
    for rel, label in conn.execute("SELECT rel, safety FROM memories WHERE safety IS NOT NULL ORDER BY rel"):
        where = display_path(root, rel)
        found = flagged_lines(os.path.join(root.path, rel), label)
        out += [Problem(where, f"{line_label}; remove it from the file", line, "flagged") for line, line_label in found]
        if not found:
            out.append(Problem(where, f"{label}; remove it from the file", kind="flagged"))
    return out


def flagged_lines(path: str, label: str) -> list[tuple[int, str]]:
    """The lines of a flagged file that the screen flags alone for the same kind (secret,
    injection) as the whole memory, with their labels; none when the file cannot be read."""
    from .safety import scan  # index and check only, and only for a flagged memory

    kind = label.partition(":")[0]
    try:
        lines = read_text(path, MAX_FILE_BYTES).splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    found = ((number, scan(line)) for number, line in enumerate(lines, 1) if line.strip())
    return [(number, line_label) for number, line_label in found if line_label and line_label.startswith(kind)]


# What a body adds to a pack beside its own text: the count line, its heading and directive.
PACK_OVERHEAD_TOKENS = 50


def unseen_problems(conn: sqlite3.Connection, root: Root, config: Config) -> list[Problem]:
    """Warnings about memories no agent sees as written: past their `valid_until` today (no pack
    holds them), or with a body too long for the config's pack budget (a pack only ever shows
    their card)."""
    import datetime  # `index` and `check` only

    today = datetime.date.today()
    soon = (today + datetime.timedelta(days=EXPIRY_NOTICE_DAYS)).isoformat()
    dated = conn.execute(
        "SELECT rel, valid_until, applies_to != '[]' FROM memories"
        " WHERE valid_until IS NOT NULL AND valid_until < ? ORDER BY rel",
        (soon,),
    )
    problems = [
        Problem(display_path(root, rel), _expiry(day, today.isoformat(), by_path), kind="warning")
        for rel, day, by_path in dated
    ]
    budget = config.pack_budget()
    if budget is not None:
        over = budget - PACK_OVERHEAD_TOKENS
        count = conn.execute("SELECT count(*) FROM memories WHERE tokens > ?", (over,)).fetchone()[0]
        longest = conn.execute(
            "SELECT rel, tokens FROM memories WHERE tokens > ? ORDER BY tokens DESC, rel LIMIT ?", (over, LONG_LISTED)
        ).fetchall()
        problems += _too_long(root, count, longest, budget)
    return problems


LONG_LISTED = 3  # memories too long for the budget named one by one; more are said in one line
EXPIRY_NOTICE_DAYS = 14  # a memory expiring within this many days is said ahead


def _expiry(day: str, today: str, by_path: bool) -> str:
    """A memory past its `valid_until`, or about to be: packs leave it out from that day and, where
    it has `applies_to`, so do the hosts' generated rule files, so `engram check` of an unchanged
    commit fails that day until `engram index` runs and is committed (a rollout audit's CI turned
    red overnight)."""
    if day < today:
        return f"expired {day} (valid_until): no pack holds it; move the date or archive it"
    if not by_path:
        return f"expires {day} (valid_until): from that day no pack holds it; move the date or archive it"
    return (
        f"expires {day} (valid_until): from that day no pack holds it and `engram check` wants its generated "
        "rule files gone; move the date, or run `engram index` that day and commit the result"
    )


def _too_long(root: Root, count: int, longest: list[tuple[str, int]], budget: int) -> list[Problem]:
    """A warning for each of the ``count`` memories too long for the budget, or one for them all when
    they are many (a quarter of real teams' rules may be: one line each would bury the rest),
    naming the ``longest``."""
    if count <= LONG_LISTED:
        return [
            Problem(
                display_path(root, rel),
                f"its body is about {tokens:,} tokens, too long to show whole within load.budget_tokens ({budget:,}): "
                "a pack shows only its card (`engram load --id` prints it); split it or raise the budget",
                kind="warning",
            )
            for rel, tokens in longest
        ]
    named = ", ".join(rel for rel, _ in longest)
    return [
        Problem(
            display_path(root, ""),
            f"{count} memories are too long to show whole within load.budget_tokens ({budget:,}), the longest "
            f"{named} and {count - LONG_LISTED} more: a pack shows only their cards (`engram load --id` prints "
            "one); split them or raise the budget",
            kind="warning",
        )
    ]


def _graph_findings(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """The build's record of `graph.findings`; found again in an index whose record is gone or
    garbled (edited by hand), so that a no-op `engram index` still says them."""
    try:
        return [(rel, reason) for rel, reason in json.loads(read_meta(conn)["graph_findings"])]
    except (KeyError, ValueError, TypeError):
        return findings(conn)


def read_source(source: SourceFile) -> tuple[bytes | None, str | None]:
    """(bytes, sha256) of one source file; (None, None) when it cannot be read."""
    if source.problem:
        return None, None
    try:
        data = read_bytes(source.fspath, MAX_FILE_BYTES)
    except OSError:
        return None, None
    return data, hashlib.sha256(data).hexdigest()


def compare_sources(conn: sqlite3.Connection, root: Root, config: Config) -> list[Problem]:
    """How a root's sources differ from its index: changed, added and removed files, ignore rules."""
    problems = []
    if read_meta(conn).get("ignore_digest") != ignore_digest(ignore_patterns(root, config)):
        problems.append(
            Problem(display_path(root, INDEX_FILE), f"ignore rules changed since indexing; {UPDATE}", kind="stale")
        )
    seen: set[str] = set()
    for source in walk_memory_files(root):
        seen.add(source.rel)
        stored = stored_file(conn, source.rel)
        if stat_unchanged(stored, source):
            continue
        where = display_path(root, source.rel)
        if stored is None:
            problems.append(Problem(where, f"new file, not in the local index; {UPDATE}", kind="added"))
        elif source.problem or read_source(source)[1] != stored[3]:
            problems.append(Problem(where, f"changed since indexing; {UPDATE}", kind="stale"))
    for (rel,) in conn.execute("SELECT rel FROM files ORDER BY rel"):
        if rel not in seen:
            problems.append(
                Problem(display_path(root, rel), f"in the local index but the file is gone; {UPDATE}", kind="missing")
            )
    for rel in sorted(pointed_changed(conn, root)):
        where = display_path(root, rel)
        problems.append(Problem(where, f"a document it points to changed since indexing; {UPDATE}", kind="stale"))
    return problems

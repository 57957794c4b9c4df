"""Mutable runtime state in ``state.db``: fetch counts, hook sessions (their delivered sets) and the
safety verdicts of texts already screened (stdlib only).

Hosts run hooks in parallel, so the file is in WAL mode with a busy
timeout, and every read-modify-write happens in one IMMEDIATE transaction.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time

from . import gate
from .errors import EngramError
from .index import STATE_SCHEMA_VERSION, migrate_state
from .pack import Screen, screen_text
from .paths import remove_if_present
from .safety import scan, screen_fingerprint
from .sources import set_aside
from .userkey import keyed

BUSY_TIMEOUT_MS = 5000


class ForeignState(EngramError, sqlite3.DatabaseError):
    """A SQLite file at the state path holding tables that are not engram's."""


def open_state(path: str) -> sqlite3.Connection:
    """state.db, created when missing; a damaged or foreign one is set aside
    (state.db.corrupt-<time>) and started afresh: losing the delivered sets beats never
    delivering again."""
    try:
        return _open_state(path)
    except sqlite3.OperationalError:
        raise  # busy, locked, read-only: nothing wrong with the file itself
    except sqlite3.DatabaseError:
        for suffix in ("-wal", "-shm"):
            remove_if_present(path + suffix)
        with contextlib.suppress(FileNotFoundError):  # a concurrent hook set it aside first
            set_aside(path)
    return _open_state(path)


def state_or_none(path: str) -> sqlite3.Connection | None:
    """state.db (fetch counts, screened texts), created where its folder exists; None where it cannot be."""
    if not os.path.isdir(os.path.dirname(path)):
        return None
    try:
        return open_state(path)
    except (sqlite3.Error, OSError):
        return None  # a read-only folder: engram works without the boost and the screen cache


def screen_with(state: sqlite3.Connection | None) -> Screen:
    """The screen that keeps its verdicts in ``state`` (`ScreenCache`), the plain one without it."""
    return ScreenCache(state) if state is not None else screen_text


def batched(state: sqlite3.Connection | None):
    """One commit for the verdicts a screen keeps in ``state``."""
    return write_transaction(state, "DEFERRED") if state is not None else contextlib.nullcontext()


def transient_state() -> sqlite3.Connection:
    """A state.db for one call, in memory: where the project's cannot be opened (a read-only
    checkout), a hook still delivers, without remembering what it delivered."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    _prepare_state(conn)
    return conn


def _open_state(path: str) -> sqlite3.Connection:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    if os.path.islink(path):  # engram's own file, never written through: a clone's `state.db -> ~/x` created ~/x
        os.unlink(path)
    if not os.path.exists(path):
        _create_state(path)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        _prepare_state(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _create_state(path: str) -> None:
    """A new state.db, whole before any hook can open it: built under a name of its own, then
    linked into place. Hooks run in parallel; one that opened a file another was still creating
    took it for a damaged one and set it aside, with the delivered marks written to it."""
    temp = f"{path}-new-{os.getpid()}"
    conn = sqlite3.connect(temp, isolation_level=None)
    try:
        _prepare_state(conn)
    finally:
        conn.close()
    try:
        os.link(temp, path)  # fails when a concurrent hook created it first: that one is used
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links
        if not os.path.exists(path):
            os.replace(temp, path)
    finally:
        for name in (temp, temp + "-wal", temp + "-shm"):
            remove_if_present(name)


def _prepare_state(conn: sqlite3.Connection) -> None:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    # one statement, one snapshot: read apart, a concurrent first migration could commit in between
    # and its new tables look like a foreign file's
    version, tables = conn.execute(
        "SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master)"
    ).fetchone()
    if version == 0 and tables:
        raise ForeignState("not an engram state file")  # before WAL mode would write to it
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        conn.execute("PRAGMA journal_mode = WAL")
    if version < STATE_SCHEMA_VERSION:
        with contextlib.suppress(sqlite3.OperationalError):  # another process migrated first
            migrate_state(conn)


@contextlib.contextmanager
def write_transaction(conn: sqlite3.Connection, mode: str = "IMMEDIATE"):
    """One transaction: IMMEDIATE for a read-modify-write; DEFERRED to batch writes that may not
    happen (no lock is taken until the first one)."""
    conn.execute(f"BEGIN {mode}")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def fetch_counts(conn: sqlite3.Connection) -> dict[tuple[str, str], int]:
    return {(scope, mid): count for scope, mid, count in conn.execute("SELECT scope, id, count FROM fetches")}


def record_fetches(conn: sqlite3.Connection, keys: list[tuple[str, str]]) -> None:
    with write_transaction(conn):
        conn.executemany(
            "INSERT INTO fetches (scope, id, count) VALUES (?, ?, 1)"
            " ON CONFLICT (scope, id) DO UPDATE SET count = count + 1",
            keys,
        )


class HookSession:
    """One hook session in state.db: the memories delivered to it and its last prompt.

    Keyed by host, session id and subagent id ("" for the main agent). Callers
    wrap a read-modify-write in `write_transaction`, so concurrent hooks of one
    session never deliver a memory twice.
    """

    def __init__(self, conn: sqlite3.Connection, host: str, session: str, agent: str = "") -> None:
        self.conn = conn
        self.host = host
        self.session = session
        self.agent = agent

    def delivered(self) -> set[str]:
        return set(self._digests())

    def _digests(self) -> dict[str, str]:
        rows = self.conn.execute(
            "SELECT memory, digest FROM delivered WHERE host = ? AND session = ? AND agent = ?",
            (self.host, self.session, self.agent),
        )
        return dict(rows.fetchall())

    def mark_delivered(self, marks: list[tuple[str, str]]) -> None:
        """Each (memory key, digest of its source as sent); "" for a text engram did not send itself."""
        self.conn.executemany(
            "INSERT INTO delivered (host, session, agent, memory, digest) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (host, session, agent, memory) DO UPDATE SET digest = excluded.digest",
            [(self.host, self.session, self.agent, key, digest) for key, digest in marks],
        )
        self.touch()

    def forget_edited(self, current: list[tuple[str, str]]) -> set[str]:
        """Forget the delivered memories whose source changed since they were sent (`current`: key and
        digest now): the agent holds the old text, so they go again. Returns what stays delivered."""
        sent = self._digests()
        edited = [key for key, digest in current if sent.get(key, "") not in ("", digest)]
        if edited:
            self.forget_delivered(edited)
        return set(sent).difference(edited)

    def forget_delivered(self, keys: list[str] | None = None) -> None:
        """Forget these memories (all of them when None): they are no longer in the agent's context."""
        where = "host = ? AND session = ? AND agent = ?"
        if keys is None:
            self.conn.execute(f"DELETE FROM delivered WHERE {where}", (self.host, self.session, self.agent))
        else:
            self.conn.executemany(
                f"DELETE FROM delivered WHERE {where} AND memory = ?",
                [(self.host, self.session, self.agent, k) for k in keys],
            )
        self.touch()

    def touch(self, prompt: str | None = None) -> None:
        """Keep the session row fresh; a prompt also becomes its last prompt (for subagents)."""
        self.conn.execute(
            "INSERT INTO sessions (host, session, last_prompt, updated) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (host, session) DO UPDATE SET updated = excluded.updated,"
            " last_prompt = coalesce(excluded.last_prompt, last_prompt)",
            (self.host, self.session, prompt, time.time()),
        )

    def last_prompt(self) -> str | None:
        row = self.conn.execute(
            "SELECT last_prompt FROM sessions WHERE host = ? AND session = ?", (self.host, self.session)
        ).fetchone()
        return row[0] if row else None


def prune_idle_sessions(conn: sqlite3.Connection, idle_seconds: float) -> None:
    """Drop the sessions (and their delivered sets) idle for longer than `idle_seconds`."""
    cutoff = time.time() - idle_seconds
    conn.execute(
        "DELETE FROM delivered WHERE (host, session) IN (SELECT host, session FROM sessions WHERE updated < ?)",
        (cutoff,),
    )
    conn.execute("DELETE FROM sessions WHERE updated < ?", (cutoff,))


class ScreenCache:
    """The safety screen with its verdicts kept in state.db by the digest of the screened text.

    Compiling the screen's patterns is most of a small project's pack time, and the same
    memories are printed call after call. A cached verdict is only reused for text with the
    same digest, computed from the text about to be printed, so text changed in the index
    (tampered or rebuilt) is always screened; verdicts of other screen versions are dropped.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        # the user's own key in it: a state.db committed to a repository (`git add -f`) holds
        # verdicts made under another key, which never match here (a red-team audit's clean verdict
        # for a flagged memory turned the screen off in a fresh clone)
        self.screen = keyed(screen_fingerprint() + gate.SCREENED_FORM)
        self.pruned = False

    def __call__(self, digest: str, text: str) -> str | None:
        # A state.db that is read-only, busy or not migrated costs a scan, never the load.
        with contextlib.suppress(sqlite3.Error):
            row = self.conn.execute(
                "SELECT label FROM screened WHERE digest = ? AND screen = ?", (digest, self.screen)
            ).fetchone()
            if row is not None:
                return row[0]
        label = scan(text)
        with contextlib.suppress(sqlite3.Error):
            self._prune()
            self.conn.execute("INSERT OR REPLACE INTO screened VALUES (?, ?, ?)", (digest, self.screen, label))
        return label

    def _prune(self) -> None:
        if not self.pruned:
            self.conn.execute("DELETE FROM screened WHERE screen != ?", (self.screen,))
            self.pruned = True

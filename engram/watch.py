"""`engram watch`: keep a workspace's index current from file events, and run reads on it.

Linux only (inotify, through ctypes). Every folder of the root's memory folders is watched; on a
change under them the index is refreshed in a thread (`compile_root`, as `engram index` does).
Readers reach the watcher through its socket in the root: the console script sends `load` and
`hook` calls to be run here (`remote`), and a reader running in its own process asks whether the
index is current (`freshness.watcher_vouches`). Either way the watcher first reads every event the
kernel has queued, so an edit finished before the call is counted, and answers (``clean <stamp>``,
or runs the call) only once the index covers it. When it cannot (a refresh failed), it declines
and the reader walks, as it does without a watcher. Stdlib only, as the read path is.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import io
import os
import select
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator

from . import native_rules
from .compile import compile_root
from .entry import run_read
from .errors import EngramError, debug, out, say
from .freshness import VOUCHED_HERE, file_stamp, watch_address, watcher_answers
from .remote import FRESH, GO, READY, RUN, code_stamp, decode, encode
from .sources import MEMORY_FOLDERS, ROOT_DIR, WATCH_SOCKET, Root, folder_key, shallow
from .workspace import Workspace, open_workspace

# inotify(7)
IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_Q_OVERFLOW, IN_ISDIR = 0x400, 0x800, 0x4000, 0x40000000
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000
# Every change to a file's stat (what the walk compares), and to a folder's entries.
FOLDER_EVENTS = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
FOLDER_EVENTS |= IN_DELETE_SELF | IN_MOVE_SELF
ROOT_EVENTS = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO  # a memory folder appears or goes
# The root's own removal raises no event while the watcher holds it open (its lock): it looks.
ROOT_CHECK_S = 5.0
HEADER = struct.Struct("iIII")  # wd, mask, cookie, length of the name that follows
SETTLE_S = 0.05  # a burst of events (a git checkout) is indexed once it settles
REQUEST_TIMEOUT_S = 1.0  # a reader sends its request at once
MAX_REQUEST_BYTES = 16 * 1024 * 1024  # a hook's stdin (8 MB at most) and the environment
RUN_FIELDS = ("code", "argv", "cwd", "env", "stdin")


class CodeChanged(EngramError):
    """A reader runs other engram code than this watcher loaded: the watcher stops."""

    def __init__(self) -> None:
        super().__init__("engram changed since this watcher started (an upgrade?): stopped; start engram watch again")


class RootGone(EngramError):
    """The watched root was removed or moved: nothing is left to watch, and readers find no socket there."""

    def __init__(self, root: Root) -> None:
        super().__init__(f"{root.path} was removed or moved: stopped")


class Inotify:
    """An inotify instance read without blocking, and the folder each watch is for."""

    def __init__(self) -> None:
        if not hasattr(os, "sched_getaffinity"):  # Linux only
            raise EngramError("engram watch needs Linux (inotify); elsewhere load and hooks check every file")
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise EngramError(f"cannot watch files: {os.strerror(ctypes.get_errno())}")
        self.folders: dict[int, str] = {}

    def add(self, folder: str, mask: int) -> None:
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(folder), mask)
        if wd >= 0:
            self.folders[wd] = folder
        elif ctypes.get_errno() == errno.ENOSPC:
            raise EngramError("the system's inotify watch limit is reached (sysctl fs.inotify.max_user_watches)")

    def events(self) -> list[tuple[str, int, str]]:
        """(folder, mask, name) of every event queued now; an overflow as ("", IN_Q_OVERFLOW, "")."""
        found: list[tuple[str, int, str]] = []
        while True:
            try:
                data = os.read(self.fd, 64 * 1024)
            except BlockingIOError:
                return found
            offset = 0
            while offset + HEADER.size <= len(data):
                wd, mask, _cookie, length = HEADER.unpack_from(data, offset)
                name = data[offset + HEADER.size : offset + HEADER.size + length].rstrip(b"\0")
                found.append((self.folders.get(wd, ""), mask, os.fsdecode(name)))
                offset += HEADER.size + length

    def close(self) -> None:
        os.close(self.fd)


class Watcher:
    """The watches, the changes seen, and the stamp of the index a refresh last made current."""

    def __init__(self, root: Root) -> None:
        self.root = root
        self.inotify = Inotify()
        self.changes = 0  # changes seen
        self.indexed = -1  # `changes` when the last refresh that succeeded started
        self.tried = -1  # ... when the last refresh, failed or not, started
        self.stamp: str | None = None  # the index's stamp after it
        self.worker: threading.Thread | None = None
        self.done_r, self.done_w = os.pipe()  # the worker's "finished": wakes the loop at once
        # readers, the changes their answer must cover, and the command to run for them (None: a question)
        self.waiting: list[tuple[socket.socket, int, list[bytes] | None]] = []
        # the code this process runs (`remote.code_stamp`): where it is installed, and its modules
        self.package, _, self.modules = code_stamp().encode().partition(b"\n")
        self.root_key = folder_key(root.path)

    def root_gone(self) -> bool:
        """Whether the root folder was removed or moved (a deleted checkout or worktree): stop."""
        return folder_key(self.root.path) != self.root_key

    def watch_all(self) -> None:
        self.inotify.add(self.root.path, ROOT_EVENTS)
        for folder in MEMORY_FOLDERS:
            top = os.path.join(self.root.path, folder)
            seen: set[tuple[int, int]] = set()  # links may loop
            for path, dirs, _files in shallow(os.walk(top, followlinks=True), self.root.path):
                try:
                    st = os.stat(path)
                except OSError:  # gone since it was listed: its parent's event says so
                    continue
                if (st.st_dev, st.st_ino) in seen:
                    dirs[:] = []
                    continue
                seen.add((st.st_dev, st.st_ino))
                self.inotify.add(path, FOLDER_EVENTS)  # a folder watched already keeps its watch

    def read_events(self) -> None:
        """Count what changed; a new folder, or events lost to an overflow, mean watching everything again."""
        rewatch = False
        for folder, mask, name in self.inotify.events():
            if folder == self.root.path and name not in MEMORY_FOLDERS:
                continue  # the index, its lock and state files: engram's own
            if not (mask & (IN_ISDIR | IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF) or name.endswith(".md")):
                continue  # an editor's swap file: no memory
            rewatch = rewatch or bool(mask & (IN_ISDIR | IN_Q_OVERFLOW))
            self.changes += 1
        if rewatch:
            self.watch_all()

    @property
    def busy(self) -> bool:
        return self.worker is not None and self.worker.is_alive()

    def current(self, needed: int) -> bool:
        """Whether the index covers the first ``needed`` changes and is still the one refreshed."""
        return self.indexed >= needed and self.stamp is not None and self.stamp == file_stamp(self.root.index_path)

    def ask(self, client: socket.socket, run: list[bytes] | None) -> None:
        """Answer a reader once the index covers every change seen until now (at once when it does):
        an edit finished before the question is in the index it is told about, or runs on. ``run``:
        the fields of a command to run here (`remote`), else the question is whether it is current."""
        self.read_events()
        if not self.busy and self.indexed == self.changes and not self.current(self.changes):
            self.changes += 1  # rebuilt or removed by someone else: checked again before it is vouched for
        self.waiting.append((client, self.changes, run))
        self.answer_waiting()

    def answer_waiting(self) -> None:
        """Answer the readers whose changes the index now covers; decline for those a failed refresh left
        uncovered (they check for themselves); refresh for the others."""
        still = []
        for client, needed, run in self.waiting:
            current = self.current(needed)
            if current and run is None:
                _send(client, f"clean {self.stamp}\n".encode())
            elif current and not self.busy and run is not None:
                self.run(client, run)
            elif self.busy or self.tried < needed:
                still.append((client, needed, run))
            else:
                _send(client, b"dirty\n")
        self.waiting = still
        if not self.busy and any(self.tried < needed for _, needed, _ in still):
            self.start_refresh()

    def run(self, client: socket.socket, fields: list[bytes]) -> None:
        """Run a reader's command here once it says go (`remote`), with the index vouched for; a call
        from other engram code stops the watcher, one from a folder that is gone is declined."""
        with client:
            package, _, modules = fields[0].partition(b"\n")
            if package != self.package:
                return  # another install of engram: it runs the call itself
            if modules != self.modules:
                raise CodeChanged
            if not os.path.isdir(fields[2]):
                return
            try:
                client.sendall(READY)
                if client.recv(1) != GO:
                    return
            except OSError:
                return
            VOUCHED_HERE[self.root.path] = self.stamp or ""
            try:
                answer = run_here(fields[1:])
            finally:
                VOUCHED_HERE.clear()
            with contextlib.suppress(OSError):
                client.sendall(answer)
            command = os.fsdecode(fields[1].partition(b"\0")[0])
            debug(f"watch: ran engram {command} for a reader")  # with the watcher's own ENGRAM_DEBUG=1
        if STOPPING.is_set():  # the reader's command took the signal as its own ("interrupted"): stop all the same
            raise KeyboardInterrupt

    @property
    def settling(self) -> bool:
        """Changes no refresh has tried yet, and none running: indexed once they settle."""
        return self.tried < self.changes and not self.busy

    def start_refresh(self) -> None:
        self.worker = threading.Thread(target=self.refresh, args=(self.changes,), daemon=True)
        self.worker.start()

    def refresh(self, started: int) -> None:
        """Index what changed until `started` (a change during the refresh keeps one pending)."""
        try:
            config = open_workspace(self.root.project).config  # as edited since: the ignore rules are in it
            if compile_root(self.root, config).memories_changed:
                native_rules.after_refresh(self.root, config)
            self.stamp, self.indexed = file_stamp(self.root.index_path), started
        except (EngramError, OSError) as exc:
            say(f"cannot refresh the index: {exc}")
        finally:
            self.tried = started
            os.write(self.done_w, b".")


def serve(ws: Workspace, idle_exit: float | None = None) -> int:
    """Watch until interrupted (Ctrl-C, SIGTERM) or, with ``idle_exit``, that many seconds without
    a reader; a line when it starts and one per failed refresh."""
    if not os.path.isdir(ws.root.path):
        raise EngramError(f"no {ROOT_DIR} here or above; `engram init` creates one")
    lock = _root_lock(ws.root)
    if lock is None or watcher_answers(ws.root):
        raise EngramError(f"another engram watch is running for {ws.root.path}")
    watcher = Watcher(ws.root)
    listener = _listen(ws.root)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        watcher.watch_all()
        watcher.refresh(0)
        out(f"watching {len(watcher.inotify.folders) - 1} folders of {ws.root.path}; Ctrl-C stops")
        sys.stdout.flush()  # whoever started it in the background can tell it is ready
        _loop(watcher, listener, idle_exit)
    except KeyboardInterrupt:
        pass
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(ws.root.path, WATCH_SOCKET))
        watcher.inotify.close()
        os.close(lock)
    return 0


# SIGTERM arrived: a busy watcher ran a reader's command, which answered "interrupted" and went on.
STOPPING = threading.Event()


def _interrupt(_signum: int, _frame: object) -> None:
    STOPPING.set()
    raise KeyboardInterrupt


def _root_lock(root: Root) -> int | None:
    """The root folder's descriptor, locked for this watcher while it runs; None when another one
    holds it (two started at once, by two hooks, both before either listens: the second stops)."""
    import fcntl

    handle = os.open(root.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(handle)
        return None
    return handle


def _loop(watcher: Watcher, listener: socket.socket, idle_exit: float | None = None) -> None:
    """Readers first; changes are indexed once they settle (SETTLE_S without a new one). With
    ``idle_exit``, it returns once that many seconds pass without a reader and nothing to index."""
    sources = [listener, watcher.inotify.fd, watcher.done_r]
    last_reader = time.monotonic()
    while True:
        settling = watcher.settling
        idle_left = None if idle_exit is None else last_reader + idle_exit - time.monotonic()
        if idle_left is not None and idle_left <= 0 and not settling and not watcher.busy:
            return
        until_idle = ROOT_CHECK_S if idle_left is None or watcher.busy else min(idle_left, ROOT_CHECK_S)
        readable, _, _ = select.select(sources, [], [], SETTLE_S if settling else until_idle)
        if watcher.root_gone():
            raise RootGone(watcher.root)
        if watcher.done_r in readable:
            os.read(watcher.done_r, 64)
            if watcher.worker is not None:
                watcher.worker.join()  # it has only its return left: `busy` is False from here
        if watcher.inotify.fd in readable:
            watcher.read_events()
        if listener in readable:
            last_reader = time.monotonic()
            with contextlib.suppress(OSError, ValueError):
                client, _ = listener.accept()
                watcher.ask(client, _request(client))
        elif not readable and settling:
            watcher.start_refresh()
        watcher.answer_waiting()


def _request(client: socket.socket) -> list[bytes] | None:
    """A command's fields (`remote.encode`), or None for the question whether the index is current."""
    client.settimeout(REQUEST_TIMEOUT_S)
    data = b""
    while not data.startswith(RUN) or len(fields := _fields(data[len(RUN) :])) < len(RUN_FIELDS):
        if data == FRESH or len(data) > MAX_REQUEST_BYTES:
            return None
        chunk = client.recv(1 << 16)
        if not chunk:
            raise ValueError("the reader left")
        data += chunk
        if not RUN.startswith(data[: len(RUN)]) and not FRESH.startswith(data[: len(FRESH)]):
            raise ValueError("not a request")
    return fields


def _fields(data: bytes) -> list[bytes]:
    try:
        return decode(data)
    except ValueError:
        return []  # not all of it yet


def run_here(fields: list[bytes]) -> bytes:
    """Run `engram COMMAND ARGS` in this process as a process of its own would run it, with the
    reader's folder, environment and stdin; its exit code, stdout and stderr, encoded."""
    argv_field, cwd, env_field, stdin = fields
    argv = [os.fsdecode(a) for a in argv_field.split(b"\0")]
    env = dict(os.fsdecode(pair).split("=", 1) for pair in env_field.split(b"\0") if b"=" in pair)
    stdout, stderr = io.BytesIO(), io.BytesIO()
    streams = (
        io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8", errors="surrogateescape"),
        io.TextIOWrapper(stdout, encoding="utf-8", errors="surrogateescape", write_through=True),
        io.TextIOWrapper(stderr, encoding="utf-8", errors="backslashreplace", write_through=True),
    )
    with process_state(os.fsdecode(cwd), env, streams):
        try:
            code = run_read(argv[0], argv[1:])
        except Exception as exc:  # noqa: BLE001 - the reader gets the line a process would print
            say(f"error: {type(exc).__name__}: {exc}")
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
    return encode(code, stdout.getvalue(), stderr.getvalue())


@contextlib.contextmanager
def process_state(cwd: str, env: dict[str, str], streams: tuple) -> Iterator[None]:
    """This process as another one would be: its folder, environment, stdin, stdout and stderr."""
    saved = (sys.stdin, sys.stdout, sys.stderr, os.getcwd(), dict(os.environ))
    try:
        sys.stdin, sys.stdout, sys.stderr = streams
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr, cwd_before, env_before = saved
        os.chdir(cwd_before)
        os.environ.clear()
        os.environ.update(env_before)


def _send(client: socket.socket, answer: bytes) -> None:
    with contextlib.suppress(OSError), client:
        client.settimeout(0.5)
        client.sendall(answer)


def _listen(root: Root) -> socket.socket:
    """The socket readers ask through, for this user only; one left by a watcher that died is replaced."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(root.path, WATCH_SOCKET))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_mask = os.umask(0o177)
    try:
        with watch_address(root) as address:
            listener.bind(address)
    finally:
        os.umask(old_mask)
    listener.listen(16)
    return listener

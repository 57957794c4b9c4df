"""`load` and `hook` answered by a running `engram watch`: no imports, no walk, a warm index.

The console script sends the command, its working folder, environment and (for a hook) stdin
to the watcher of the nearest memory root (`watch.sock`), which runs the very same code
in-process with them and sends back the exit code, stdout and stderr. Where no watcher answers
at once (none runs, its socket is stale, another root is nearer) the command runs here, as it
always does. Two steps keep a command from running twice: the watcher says it is ready to run
it ("A"), the client says go ("G"); a client that gave up before that runs the command itself,
and one that said go waits for the answer. A watcher of another install of engram declines; one
running other code than the client's (engram was upgraded since it started) declines, and stops. Stdlib only, and only `_socket` beyond what the
entry point imports.
"""

from __future__ import annotations

import io
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from _socket import socket

ROOT_DIR = os.path.join(".agents", ".engram")  # sources.ROOT_DIR, without importing sources
SOCKET = "watch.sock"  # sources.WATCH_SOCKET
MAX_HOOK_STDIN = 8 * 1024 * 1024 + 1  # hook.MAX_PAYLOAD_BYTES + 1 (a test holds them equal): more is refused there
READY_TIMEOUT_S = 0.8  # the watcher answers once it has indexed every edit made before the question
RUN_TIMEOUT_S = 55.0  # a host's hook timeout is 60 s: past this the command is given up
RUN = b"run\n"  # a command to run; FRESH asks only whether the index is current (`freshness`)
FRESH = b"fresh?\n"
READY, GO = b"A", b"G"


def answered(command: str, argv: list[str]) -> int | None:
    """The exit code of `engram COMMAND ARGV` run by the watcher, its output printed; None when no
    watcher took it (stdin, for a hook, is then given back to this process unread)."""
    path = _nearest_socket(os.path.realpath(os.getcwd()))
    if path is None:
        return None
    if command == "hook":
        from .hookstdin import read_stdin

        stdin = read_stdin(MAX_HOOK_STDIN)
    else:
        stdin = b""
    request = RUN + encode(code_stamp(), [command, *argv], os.getcwd(), dict(os.environ), stdin)
    code = _ask(path, request, command == "hook")
    if code is None and command == "hook":
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8", errors="surrogateescape")
    return code


def code_stamp() -> str:
    """Where this engram is installed, then the size and mtime of each of its modules: a watcher of
    another install leaves the call to this one, and one started before an upgrade (or an edit of
    engram itself) runs other code and must not answer for this one."""
    package = os.path.dirname(os.path.abspath(__file__))
    parts = []
    for folder in (package, os.path.join(package, "hosts")):
        with os.scandir(folder) as entries:
            parts += [f"{e.name}:{e.stat().st_size}:{e.stat().st_mtime_ns}" for e in entries if e.name.endswith(".py")]
    return package + "\n" + ";".join(sorted(parts))


def _nearest_socket(start: str) -> str | None:
    """The watcher socket of the memory root `find_project` would pick first; None when that root has
    none, or lies deeper than a socket address can name (about 100 bytes: its calls run here, and
    still skip the walk through `freshness.watch_address`)."""
    folder = start
    while True:
        root = os.path.join(folder, ROOT_DIR)
        if os.path.isdir(root):
            path = os.path.join(root, SOCKET)
            return path if os.path.exists(path) and len(os.fsencode(path)) < 100 else None
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _ask(path: str, request: bytes, hook: bool) -> int | None:
    client = connect(path, READY_TIMEOUT_S)
    if client is None:
        return None
    try:
        try:
            client.sendall(request)
            if client.recv(1) != READY:
                return None
            client.sendall(GO)
        except OSError:
            return None
        return _print_answer(client, hook)
    finally:
        client.close()


def connect(address: str, timeout: float) -> socket | None:
    """A connection to the watcher at ``address``, None when none listens there or it runs as
    another user (`same_user`)."""
    import _socket  # the C module: `socket` costs 7 ms of imports (enum, selectors) on every call

    client = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        client.settimeout(timeout)
        client.connect(address)
        if same_user(client):
            return client
    except OSError:
        pass
    client.close()
    return None


def same_user(client: socket) -> bool:
    """Whether the process listening on the other end runs as this user (Linux's SO_PEERCRED: pid,
    uid, gid): a socket another user could plant in a shared folder gets neither our environment
    nor a say in what we print."""
    import _socket

    try:
        credentials = client.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    except (OSError, AttributeError):
        return False
    return int.from_bytes(credentials[4:8], sys.byteorder) == os.getuid()


def _print_answer(client: socket, hook: bool) -> int:
    """Print what the watcher's run printed and give its exit code. A watcher that stops mid-run
    may have run the command (running it again could repeat it): a hook answers `{}` as for any
    failure, `load` fails with one line."""
    client.settimeout(RUN_TIMEOUT_S)
    try:
        code, stdout, stderr = decode(_read_all(client))
        exit_code = int(code)
    except (OSError, ValueError):
        exit_code, stdout = (0, b"{}\n") if hook else (1, b"")
        stderr = b"" if hook else b"engram: error: engram watch stopped while answering; run the command again\n"
    try:
        for stream, data in ((sys.stdout, stdout), (sys.stderr, stderr)):
            stream.buffer.write(data)
            stream.flush()
    except (OSError, ValueError, AttributeError) as exc:  # a full disk, or the caller closed its end
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - so the flush at exit has nothing to fail on
        if not hook:  # `load` fails as it does when it runs here (a hook's host reads no stderr)
            _say_not_written(exc)
            return 1
    return exit_code


def _say_not_written(exc: BaseException) -> None:
    """That the answer could not be written, where stderr still takes it."""
    try:
        print(f"engram: error: cannot write the answer: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
    except (OSError, ValueError, AttributeError):
        return  # nowhere left to say it


def _read_all(client: socket) -> bytes:
    chunks = []
    while chunk := client.recv(1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def encode(*fields: object) -> bytes:
    """Netstrings (`<length>:<bytes>,`); a list is its items joined by NUL, a dict its k=v pairs."""
    out = []
    for field in fields:
        data = _bytes(field)
        out.append(b"%d:%s," % (len(data), data))
    return b"".join(out)


def _bytes(field: object) -> bytes:
    if isinstance(field, bytes):
        return field
    if isinstance(field, list):
        return b"\0".join(map(os.fsencode, field))
    if isinstance(field, dict):
        return b"\0".join(os.fsencode(f"{k}={v}") for k, v in field.items())
    return os.fsencode(str(field))


def decode(data: bytes) -> list[bytes]:
    """The fields of `encode`, as bytes; ValueError on anything else."""
    fields, offset = [], 0
    while offset < len(data):
        colon = data.index(b":", offset)
        length = int(data[offset:colon])
        end = colon + 1 + length
        if data[end : end + 1] != b",":
            raise ValueError("not a netstring")
        fields.append(data[colon + 1 : end])
        offset = end + 1
    return fields

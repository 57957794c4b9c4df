"""File paths as strings handled with ``os.path``, not pathlib, and the one atomic write (stdlib only)."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator

from .errors import EngramError

READ_CHUNK = 1 << 16
TEMP_MARK = ".tmp-"  # in the name of every temp file engram renames over another (`temp_name`)


class UnreadableFile(EngramError, OSError):
    """A path that is not a regular file (a FIFO, a device, a folder) or is over its size cap."""


def read_bytes(path: str, limit: int) -> bytes:
    """A regular file's bytes, at most ``limit`` of them; anything else raises UnreadableFile.

    Opened without blocking, so a FIFO is refused at once instead of waiting for a writer, and
    read in chunks, so a file that grows (or /dev/zero behind a link) never exhausts memory.
    """
    data = read_head(path, limit + 1)
    if len(data) > limit:
        raise UnreadableFile(f"{os.path.basename(path)} is larger than {limit} bytes")
    return data


def sha256_file(path: str) -> str:
    """The SHA-256 of a regular file of any size, read a chunk at a time."""
    import hashlib

    digest = hashlib.sha256()
    for chunk in _chunks(path):
        digest.update(chunk)
    return digest.hexdigest()


def _chunks(path: str):
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise UnreadableFile(f"{os.path.basename(path)} is not a regular file")
        while chunk := os.read(descriptor, READ_CHUNK):
            yield chunk
    finally:
        os.close(descriptor)


def read_head(path: str, limit: int) -> bytes:
    """A regular file's first ``limit`` bytes (a longer file is cut, not refused); anything else
    raises UnreadableFile."""
    chunks, size = [], 0
    with contextlib.closing(_chunks(path)) as reading:
        for chunk in reading:
            chunks.append(chunk)
            size += len(chunk)
            if size >= limit:
                break
    return b"".join(chunks)[:limit]


def read_text(path: str, limit: int) -> str:
    return read_bytes(path, limit).decode("utf-8")


def is_inside(path: str, base: str) -> bool:
    """Whether ``path`` (symlinks resolved) is ``base`` or below it; ``base`` is resolved."""
    try:
        return os.path.commonpath([os.path.realpath(path), base]) == base
    except (OSError, ValueError):  # ValueError: another drive
        return False


def relative_posix(path: str, base: str) -> str | None:
    """``path`` relative to ``base`` with forward slashes, or None when it is not below it."""
    try:
        relative = os.path.relpath(path, base)
    except ValueError:  # another drive
        return None
    if relative == os.pardir or relative.startswith(os.pardir + os.sep) or os.path.isabs(relative):
        return None
    return relative.replace(os.sep, "/")


def shown_path(path: str, base: str) -> str:
    """``path`` as a user reads it: relative to ``base`` (forward slashes) when below it, else whole."""
    return relative_posix(path, base) or path


def sqlite_uri(path: str, mode: str = "ro") -> str:
    """A ``file:`` URI for SQLite: the absolute path with ``%``, ``?`` and ``#`` escaped."""
    absolute = os.path.abspath(path).replace(os.sep, "/")
    escaped = "".join(f"%{ord(c):02X}" if c in "%?#" else c for c in absolute)
    return f"file://{'' if escaped.startswith('/') else '/'}{escaped}?mode={mode}"


def remove_if_present(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def temp_name(name: str) -> str:
    """A unique name for a temp file beside ``name``: hidden, and with no suffix a host reads (`.md`)."""
    return f".{name}{TEMP_MARK}{os.getpid()}-{os.urandom(4).hex()}"


@contextlib.contextmanager
def replacing(path: str) -> Iterator[str]:
    """A temp path beside ``path`` to write, renamed over ``path`` when the block ends and removed
    when it raises: readers see the old file or the new one, never half of one."""
    folder, name = os.path.split(path)
    temp = os.path.join(folder, temp_name(name))
    try:
        yield temp
        os.replace(temp, path)
    except BaseException:
        remove_if_present(temp)
        raise


def write_atomic(path: str, data: bytes | str, keep_mode: bool = False, durable: bool = True) -> None:
    """Replace the file at ``path`` with ``data`` (text as UTF-8) in one step (`replacing`).

    ``keep_mode``: the new file keeps the old one's permission bits. ``durable``: the data reaches
    the disk before the rename, so not even a power cut leaves an empty file in its place; a file
    `engram index` writes again anyway skips that.
    """
    content = data.encode("utf-8") if isinstance(data, str) else data
    with replacing(path) as temp:
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(content)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if keep_mode:
            with contextlib.suppress(FileNotFoundError):
                os.chmod(temp, stat.S_IMODE(os.stat(path).st_mode))

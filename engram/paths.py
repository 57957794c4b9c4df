"""File paths as strings for the read path (stdlib only, no pathlib).

`load` and hooks start on every agent turn, and importing pathlib costs about
8 ms of each start (it pulls in urllib.parse and ipaddress); roots, index
files and sources are plain strings handled with ``os.path``.
"""

from __future__ import annotations

import os
import stat

from .errors import EngramError

READ_CHUNK = 1 << 16


class UnreadableFile(EngramError, OSError):
    """A path that is not a regular file (a FIFO, a device, a folder) or is over its size cap."""


def read_bytes(path: str, limit: int) -> bytes:
    """A regular file's bytes, at most ``limit`` of them; anything else raises UnreadableFile.

    Opened without blocking, so a FIFO is refused at once instead of waiting for a writer, and
    read in chunks, so a file that grows (or /dev/zero behind a link) never exhausts memory.
    """
    chunks, size = [], 0
    for chunk in _chunks(path):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise UnreadableFile(f"{os.path.basename(path)} is larger than {limit} bytes")
    return b"".join(chunks)


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
    try:
        os.remove(path)
    except FileNotFoundError:
        pass

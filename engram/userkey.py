"""This user's key, which binds what a project's state.db remembers of a check (a screened text's
verdict, a shared index's signature) to the user who made the check: a state.db committed to a
repository remembers nothing for anyone else. Stdlib only."""

from __future__ import annotations

import contextlib
import hashlib
import os

from .config import user_config_dir
from .paths import read_head, replacing

KEY_FILE = "state-key"  # in the user's config folder


def keyed(value: str) -> str:
    """``value`` bound to this user's key (`user_key`): what state.db remembers of a check, so that
    only this user's own checks are remembered here."""
    return hashlib.sha256(f"{user_key()}\0{value}".encode()).hexdigest()[:32]


_USER_KEY: list[str] = []


def user_key() -> str:
    """A random key kept in the user's config folder (made on first use, readable by the user
    alone); where it cannot be kept, one for this process only, so nothing is remembered across
    processes."""
    if not _USER_KEY:
        _USER_KEY.append(_stored_key(os.path.join(user_config_dir(), KEY_FILE)) or os.urandom(16).hex())
    return _USER_KEY[0]


def _stored_key(path: str) -> str | None:
    with contextlib.suppress(OSError, UnicodeDecodeError):
        key = _read_key(path)  # a FIFO or a device in its place is refused, never waited on
        if len(key) == 32:
            return key
    with contextlib.suppress(OSError, UnicodeDecodeError):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with replacing(path) as temp:
            descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w", encoding="ascii") as handle:
                handle.write(os.urandom(16).hex() + "\n")
        key = _read_key(path)  # another process's, where it renamed last
        return key if len(key) == 32 else None
    return None


def _read_key(path: str) -> str:
    return read_head(path, 64).decode("ascii").strip()

"""One way to fail: `EngramError`, the one-line messages on stderr, and `Problem`, a finding in a user's files.

Every exception engram raises derives from `EngramError`; the entry point prints
its message as ``engram: error: <message>`` and exits with its code, and shows a
type name only for an exception engram did not expect. Stdlib only.
"""

from __future__ import annotations

import os
import sys
from collections import namedtuple


class EngramError(Exception):
    """A failure the user can act on: one line of ``message``, and the ``exit_code`` the command ends with."""

    exit_code = 1

    def __init__(self, message: str = "", exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if exit_code is not None:
            self.exit_code = exit_code


def say(message: str, prefix: str = "engram") -> None:
    """The one way engram writes to stderr: ``<prefix>: <message>``, one line through the output gate,
    a secret in it withheld (a message quotes what the user typed: an argument, a path, a setting)."""
    from . import gate  # a message can quote a file name holding anything

    print(f"{prefix}: {gate.message(gate.redacted(message))}", file=sys.stderr)


def out(message: str = "", end: str = "\n") -> None:
    """A command's own output on stdout, through the output gate, a secret in it withheld: paths and
    reports can hold anything."""
    from .gate import secrets_withheld, text

    print(text(secrets_withheld(message)), end=end)


def error(message: str) -> None:
    say(f"error: {message}")


def warning(message: str, prefix: str = "engram") -> None:
    say(f"warning: {message}", prefix)


def debug(message: str, prefix: str = "engram") -> None:
    """What engram did instead of failing or waiting, said with ENGRAM_DEBUG=1 only."""
    if os.environ.get("ENGRAM_DEBUG") == "1":
        say(message, prefix)


class Problem(namedtuple("Problem", "where reason line kind", defaults=(None, "invalid"))):
    """A finding in a user's files, one line they can act on: where, and what is wrong.

    ``kind``: invalid | warning | stale | added | missing | flagged.
    """

    __slots__ = ()

    def __str__(self) -> str:
        from . import gate

        where = gate.file_path(self.where)
        place = f"{where}:{self.line}" if self.line else where
        return f"{self.kind} {place}: {gate.message(self.reason)}"

    def as_json(self) -> dict:
        from . import gate

        return {
            "kind": self.kind,
            "path": gate.file_path(self.where),
            "line": self.line,
            "reason": gate.message(self.reason),
        }

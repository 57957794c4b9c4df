"""Regexes compiled on first use (stdlib only).

The hook and `load` paths import the tokenizer and the safety screen on every call, yet most
texts never reach most patterns (ASCII text skips the CJK ones; clean text skips most secret
detectors). Compiling them lazily keeps process start-up short.
"""

from __future__ import annotations

import re


class LazyPattern:
    """Stands in for a compiled pattern; compiles it the first time any attribute is used."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, *args) -> None:
        self._args = args
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str):
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return getattr(self._compiled, name)


"""Regexes compiled on first use: text that never reaches a pattern never pays for it (stdlib only)."""

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

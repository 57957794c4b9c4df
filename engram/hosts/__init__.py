"""The host family: one module per host (its events, payload fields, cap, config files), and this registry."""

from __future__ import annotations

from . import claude, codex, cursor, gemini
from .base import Host

HOSTS: dict[str, Host] = {module.HOST.name: module.HOST for module in (claude, codex, gemini, cursor)}
ALIASES = {alias: host.name for host in HOSTS.values() for alias in host.aliases}


def host_named(name: str) -> Host | None:
    """The host called `name` (or one of its aliases), None when engram has no such host."""
    return HOSTS.get(ALIASES.get(name, name))

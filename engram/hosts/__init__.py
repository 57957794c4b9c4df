"""The host family: one module per host (its events, payload fields, cap, config files), and this registry."""

from __future__ import annotations

import os

from . import claude, codex, cursor, gemini
from .base import Host

HOSTS: dict[str, Host] = {module.HOST.name: module.HOST for module in (claude, codex, gemini, cursor)}
ALIASES = {alias: host.name for host in HOSTS.values() for alias in host.aliases}


def host_named(name: str) -> Host | None:
    """The host called `name` (or one of its aliases), None when engram has no such host."""
    return HOSTS.get(ALIASES.get(name, name))


# Where agents' own instructions usually live, engram's own rule folders aside (`init` points a new
# team at docs/adopting.md when it finds them): files, and folders counted by the files they hold.
INSTRUCTION_PLACES = (
    "CLAUDE.md", "AGENTS.md", "GEMINI.md", ".cursorrules", ".github/copilot-instructions.md",
    ".claude/rules", ".cursor/rules", ".github/instructions", ".windsurf/rules", ".clinerules",
)  # fmt: skip


def other_tools_rules(project: str) -> list[str]:
    """The places of INSTRUCTION_PLACES that hold something in ``project``, as `CLAUDE.md` or
    `.cursor/rules (9 files)`; engram's own subfolders (`.cursor/rules/engram`) are not counted."""
    found = []
    for place in INSTRUCTION_PLACES:
        path = os.path.join(project, place)
        if os.path.isfile(path):
            found.append(place)
        elif os.path.isdir(path):
            count = sum(
                len(files) for folder, _, files in os.walk(path) if "engram" not in folder[len(path) :].split(os.sep)
            )
            if count:
                found.append(f"{place} ({count} file{'s' if count > 1 else ''})")
    return found

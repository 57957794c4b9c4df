"""Codex CLI: Claude Code's event names in `.codex/hooks.json`, edits through `apply_patch`, MCP in config.toml."""

from __future__ import annotations

import re

from .. import terms
from ..lazyre import LazyPattern
from .base import Event, HookFile, Host, McpFile, tool_input

# The path runs from its first to its last non-space (a lazy `.+?` before `\s*$` is quadratic on a
# line of spaces).
PATCH_HEADER = LazyPattern(
    r"^\*\*\* (?:Add File|Update File|Delete File|Move to): [^\S\n]*(\S(?:.*\S)?)[^\S\n]*$", re.MULTILINE
)
TRUST_MESSAGE = (
    "Codex runs new or changed hooks only after you trust them: open /hooks in Codex and trust the engram entries."
)


def file_paths(payload: dict) -> list[str]:
    """Codex edits through `apply_patch`; the paths are in the patch headers."""
    if payload.get("tool_name") != "apply_patch":
        return []
    command = tool_input(payload).get("command")
    if isinstance(command, list):  # the argv form: ["apply_patch", "<patch>"]
        command = "\n".join(part for part in command if isinstance(part, str))
    return PATCH_HEADER.findall(command) if isinstance(command, str) else []


HOST = Host(
    "codex",
    events=(
        Event("SessionStart", "session_start", "startup|resume|clear|compact"),
        Event("UserPromptSubmit", "prompt"),
        Event("PreToolUse", "file", "^apply_patch$"),
        Event("PreCompact", "reset"),
        Event("SubagentStart", "subagent"),
    ),
    cap=2400,  # Codex spills hook output over about 2,500 tokens into a file
    size=terms.estimate_tokens,
    file_paths=file_paths,
    hook_file=HookFile(".codex/hooks.json", timeout=10),
    mcp_file=McpFile(".codex/config.toml", ".codex/config.toml", format="toml"),
    trust_message=TRUST_MESSAGE,
)

"""Claude Code: settings.json hooks, `.claude/rules/` native rule files, `.mcp.json`."""

from __future__ import annotations

import json

from .base import Event, HookFile, Host, McpFile, RuleFormat, first_string, tool_input

# The file tools PreToolUse reports, and the argument holding the (absolute) path.
FILE_TOOLS = {"Read": "file_path", "Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path"}  # fmt: skip


def file_paths(payload: dict) -> list[str]:
    tool = payload.get("tool_name")
    key = FILE_TOOLS.get(tool) if isinstance(tool, str) else None
    return first_string(tool_input(payload), (key,)) if key else []


def rule_file(description: str, globs: list[str], head: str, body: str) -> str:
    """A `.claude/rules/` file: loaded when Claude reads a file matching `paths:`."""
    paths = "".join(f"  - {json.dumps(glob, ensure_ascii=False)}\n" for glob in globs)
    return f"---\npaths:\n{paths}---\n{head}\n{body}\n"


RULES = RuleFormat(".claude/rules/engram", ".md", rule_file)  # the hook reads them back (InstructionsLoaded)
HOST = Host(
    "claude",
    events=(
        Event("SessionStart", "session_start", "startup|resume|clear|compact"),
        Event("UserPromptSubmit", "prompt"),
        Event("PreToolUse", "file", "|".join(FILE_TOOLS)),
        Event("PreCompact", "reset"),
        Event("SubagentStart", "subagent"),
        Event("InstructionsLoaded", "instructions"),
    ),
    cap=9500,  # Claude Code caps hook output at 10,000 characters
    size=len,
    file_paths=file_paths,
    hook_file=HookFile(".claude/settings.json", timeout=10),
    mcp_file=McpFile(".mcp.json", ".claude.json", entry_head=(("type", "stdio"),)),
    aliases=("claude-code",),
    rules=RULES,
    cursor_guard=True,
)

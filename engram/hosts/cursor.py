"""Cursor: camelCase events with flat snake_case output, `.cursor/rules/*.mdc` rule files, `.cursor/mcp.json`.

Cursor hooks cannot add context to a prompt (`beforeSubmitPrompt` only allows or
blocks), so routed prompts reach Cursor through the MCP server.
"""

from __future__ import annotations

import json
import os

from ..paths import is_inside
from .base import Event, HookFile, Host, McpFile, RuleFormat, first_string, payload_cwd, tool_input


def file_paths(payload: dict) -> list[str]:
    """Cursor does not document its tools' argument names, so probe the likely ones."""
    return first_string(tool_input(payload), ("file_path", "path", "target_file"))


def project_dir(payload: dict) -> str | None:
    """The workspace root of the event: in a multi-root workspace the one holding the touched file
    (the innermost), else the first."""
    listed = payload.get("workspace_roots")
    roots = [root for root in listed if isinstance(root, str) and root] if isinstance(listed, list) else []
    if not roots:
        return os.environ.get("CURSOR_PROJECT_DIR") or payload_cwd(payload)
    for path in file_paths(payload):
        holding = [root for root in roots if os.path.isabs(path) and is_inside(path, os.path.realpath(root))]
        if holding:
            return max(holding, key=len)
    return roots[0]


def flat_output(event: str, text: str) -> dict:
    return {"additional_context": text}


def rule_file(description: str, globs: list[str], head: str, body: str) -> str:
    # Cursor documents `globs` as one unquoted comma-separated string, not a YAML list.
    return (
        f"---\ndescription: {json.dumps(description, ensure_ascii=False)}\nglobs: {', '.join(globs)}\n"
        f"alwaysApply: false\n---\n{head}\n{body}\n"
    )


HOST = Host(
    "cursor",
    events=(
        Event("sessionStart", "session_start"),
        Event("postToolUse", "file", "Read|Write"),
        Event("preCompact", "reset"),
    ),
    cap=9500,
    size=len,
    file_paths=file_paths,
    hook_file=HookFile(".cursor/hooks.json", timeout=10, nested=False, handler_head=(), file_head=(("version", 1),)),
    # ${workspaceFolder}: the folder holding .cursor/mcp.json (Cursor starts stdio servers elsewhere)
    mcp_file=McpFile(
        ".cursor/mcp.json",
        ".cursor/mcp.json",
        entry_head=(("type", "stdio"),),
        project_args=("--project", "${workspaceFolder}"),
    ),  # fmt: skip
    project_dir=project_dir,
    session_field="conversation_id",
    output=flat_output,
    rules=RuleFormat(".cursor/rules/engram", ".mdc", rule_file),
)

"""Gemini CLI: its own event names (BeforeAgent, AfterTool, PreCompress), timeouts in milliseconds."""

from __future__ import annotations

from .base import Event, HookFile, Host, McpFile, first_string, tool_input

FILE_TOOLS = ("read_file", "write_file", "replace")
TRUST_MESSAGE = (
    "Gemini CLI treats new or changed project hooks as untrusted and warns about them: "
    "check the engram entries in /hooks panel (/hooks enable engram)."
)


def file_paths(payload: dict) -> list[str]:
    if payload.get("tool_name") not in FILE_TOOLS:
        return []
    return first_string(tool_input(payload), ("file_path", "absolute_path"))  # absolute_path: builds before v0.15


HOST = Host(
    "gemini",
    events=(
        Event("SessionStart", "session_start", "*"),
        Event("BeforeAgent", "prompt", "*"),
        Event("AfterTool", "file", "|".join(FILE_TOOLS)),
        Event("PreCompress", "reset", "*"),  # the compressed history loses what was injected
    ),
    cap=9500,
    size=len,
    file_paths=file_paths,
    hook_file=HookFile(".gemini/settings.json", timeout=10_000, handler_head=(("name", "engram"), ("type", "command"))),
    mcp_file=McpFile(".gemini/settings.json", ".gemini/settings.json"),
    trust_message=TRUST_MESSAGE,
)

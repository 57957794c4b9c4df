"""What engram knows about a host, in one record per host (stdlib only).

The hook adapter, `link`, the native rule files and the MCP registration all
read these records; a host's facts are written once, in its own module.
"""

from __future__ import annotations

import contextlib
import json
from collections import namedtuple
from collections.abc import Callable

# action: what the hook does on the event (hook.ACTIONS); matcher: what link writes, None for none
Event = namedtuple("Event", "name action matcher", defaults=(None,))
# The hook config `link` merges into: path relative to the project (or the home folder with --global),
# `nested`: event -> matcher groups -> handlers (else event -> handlers), timeout in the host's own unit.
HookFile = namedtuple(
    "HookFile", "path timeout nested handler_head file_head", defaults=(True, (("type", "command"),), ())
)
# Where `link --mcp` registers `engram mcp`: the project's file and the user's (--global), "json" or "toml",
# keys the entry starts with, and arguments that point the server at the project (the host expands them).
McpFile = namedtuple("McpFile", "path global_path format entry_head project_args", defaults=("json", (), ()))
# Native rule files `engram index` writes: folder under the project, file suffix,
# render(description, globs, head, body) -> the file's text.
RuleFormat = namedtuple("RuleFormat", "folder suffix render")

Size = Callable[[str], int]


class Host:
    """One host: its events, payload shape, output shape, cap and config files."""

    def __init__(
        self,
        name: str,
        events: tuple[Event, ...],
        cap: int,
        size: Size,
        file_paths: Callable[[dict], list[str]],
        hook_file: HookFile,
        mcp_file: McpFile,
        *,
        aliases: tuple[str, ...] = (),
        project_dir: Callable[[dict], str | None] | None = None,
        session_field: str = "session_id",
        output: Callable[[str, str], dict] | None = None,
        rules: RuleFormat | None = None,
        trust_message: str | None = None,
        cursor_guard: bool = False,
        restored_text: Callable[[dict], str | None] | None = None,
    ) -> None:
        self.name = name
        self.events = events
        self.actions = {event.name: event.action for event in events}
        self.cap = cap  # on the whole additionalContext text, in the unit `size` measures
        self.size = size
        self.file_paths = file_paths  # the paths a file event touches, as the host sends them
        self.hook_file = hook_file
        self.mcp_file = mcp_file
        self.aliases = aliases
        self.project_dir = project_dir or payload_cwd
        self.session_field = session_field
        self.output = output or nested_output
        self.rules = rules  # the host loads native rule files: its file events wait for hooks.path_rules: hook
        self.trust_message = trust_message  # what `link` says about the host's trust step
        self.cursor_guard = cursor_guard  # Cursor also runs this host's hooks: stay silent there
        # On resume: the text of what the host puts back into the model's context; None when it restores the
        # whole transcript (hook output included) or when that cannot be told.
        self.restored_text = restored_text or (lambda payload: None)

    @property
    def rule_format(self) -> RuleFormat:
        """`rules` of a host that has them (the native rule code reads only those)."""
        if self.rules is None:
            raise LookupError(f"{self.name} reads no native rule files")
        return self.rules


# --- payload and output helpers the hosts share -------------------------------------------------


def tool_input(payload: dict) -> dict:
    """`tool_input` as a dict (Cursor may send it as a JSON string)."""
    value = payload.get("tool_input")
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    return value if isinstance(value, dict) else {}


def first_string(data: dict, keys: tuple[str, ...]) -> list[str]:
    for key in keys:
        if isinstance(data.get(key), str) and data[key].strip():
            return [data[key]]
    return []


def payload_cwd(payload: dict) -> str | None:
    return payload["cwd"] if isinstance(payload.get("cwd"), str) and payload["cwd"] else None


def nested_output(event: str, text: str) -> dict:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}

"""Gemini CLI: its own event names (BeforeAgent, AfterTool, PreCompress), timeouts in milliseconds."""

from __future__ import annotations

import json
import os

from ..paths import read_text
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


# A session's recording, per file; a larger one is not read, and a resume then forgets nothing.
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
# Only lines that can hold a message are parsed, found by the C string search: a recording of millions of other
# lines (a corrupt one) costs a scan of its text, not a json.loads a line. Past the cap the later lines are not
# read; what they held is then sent again, never wrongly withheld.
MESSAGE_KEYS = ('"content"', '"$set"')
MAX_MESSAGE_LINES = 200_000
# A resumed session's history leaves out the user messages that start like these (Gemini's
# convertSessionToClientHistory), and with them the hook context Gemini put into them.
DROPPED_ON_RESUME = ("/", "?", "<session_context>", "<hook_context>")


def restored_text(payload: dict) -> str | None:
    """The transcript's messages that a resumed session gets back, as text; None when it cannot be read."""
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path:
        return None
    try:
        texts = [read_text(file, MAX_TRANSCRIPT_BYTES) for file in session_files(path)]
    except (OSError, UnicodeDecodeError):  # UnreadableFile (a FIFO, too large) is an OSError
        return None
    # Every message the files record, by id. A resumed run starts by rewriting the list with only its own
    # first message (`$set`), possibly while the hook runs: the union is what Gemini loads.
    messages: dict[object, dict] = {}
    for line in [line for text in texts for line in message_lines(text)][:MAX_MESSAGE_LINES]:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        update = record.get("$set") if isinstance(record, dict) else None
        listed = update.get("messages") if isinstance(update, dict) else [record]
        for message in listed if isinstance(listed, list) else []:
            if isinstance(message, dict) and "type" in message and "content" in message:
                messages[message.get("id")] = message
    kept = [m.get("content") for m in messages.values() if not (m.get("type") == "user" and _dropped(m.get("content")))]
    return json.dumps(kept, ensure_ascii=False)


def message_lines(text: str) -> list[str]:
    """The lines of a recording that hold a message key, in the file's order (at most MAX_MESSAGE_LINES)."""
    ends: dict[int, int] = {}  # line start -> line end
    for key in MESSAGE_KEYS:
        at = text.find(key)
        while at != -1 and len(ends) < MAX_MESSAGE_LINES:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            ends[start] = len(text) if end == -1 else end
            at = -1 if end == -1 else text.find(key, end)
    return [text[start : ends[start]] for start in sorted(ends)]


def session_files(transcript: str) -> list[str]:
    """The transcript and the other files of its session. Gemini names a file `session-<minute>-<id prefix>`:
    a resume in a later minute records into a new file of that minute (the payload's path) and restores the
    history from the old one."""
    folder, name = os.path.split(transcript)
    session = name.rpartition("-")[2]
    try:
        names = sorted(os.listdir(folder or ".")) if session.endswith(".jsonl") else []
    except OSError:
        names = []
    others = [os.path.join(folder, n) for n in names if n.startswith("session-") and n.endswith("-" + session)]
    return [transcript] + [file for file in others if file != transcript]


def _dropped(content: object) -> bool:
    parts = content if isinstance(content, list) else [content]
    text = "".join(p if isinstance(p, str) else str(p.get("text", "")) for p in parts if isinstance(p, (str, dict)))
    return not text.strip() or text.strip().startswith(DROPPED_ON_RESUME)


HOST = Host(
    "gemini",
    events=(
        Event("SessionStart", "session_start", "*"),
        Event("BeforeAgent", "prompt", "*"),
        Event("AfterTool", "file", "|".join(FILE_TOOLS)),
        Event("PreCompress", "compress", "*"),  # a reset only for a manual /compress (hook.on_compress)
    ),
    cap=9500,
    size=len,
    file_paths=file_paths,
    hook_file=HookFile(".gemini/settings.json", timeout=10_000, handler_head=(("name", "engram"), ("type", "command"))),
    mcp_file=McpFile(".gemini/settings.json", ".gemini/settings.json"),
    trust_message=TRUST_MESSAGE,
    restored_text=restored_text,
)

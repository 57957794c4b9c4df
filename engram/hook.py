"""`engram hook --host claude|codex|gemini|cursor`: the host hook adapter (stdlib only).

Reads the host's JSON on stdin and always prints exactly one JSON object and
returns 0: a hook must never block or break the agent, so bad input, an
unknown host, a missing workspace and any internal error all print `{}`
(with a reason on stderr when ENGRAM_DEBUG=1). The content comes from the
same route + pack core as `engram load`; this module adds the per-session
delivered set in `state.db`, each host's payload shape and cap, and
`applies_to` matching for file events.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sqlite3
import sys
import time
from collections.abc import Callable

from . import gate, terms
from .globs import literal_length, matches
from .layers import Layer, open_layers
from .pack import Pack, PackOptions, build_pack, with_prerequisites
from .paths import relative_posix
from .render import render_text
from .route import Candidate, Options, Routing, route, visible_candidates
from .state import ScreenCache, fetch_counts, open_state, write_transaction
from .workspace import Workspace, open_workspace

SESSION_TAGS = frozenset({"always", "session-start"})
FILE_EVENT_BODIES = 3
WITHIN_LIMITS = 0  # the budget that goes with Hook.overflow
UNLIMITED = 10**9  # session-start memories are bounded by the host cap alone
SESSION_TTL_SECONDS = 30 * 24 * 3600  # delivered sets of sessions idle this long are dropped
MAX_PAYLOAD_BYTES = 8 * 1024 * 1024  # a larger payload is not read: `{}`
MAX_PROMPT_CHARS = 20_000  # routed on; words past a long bug report's first pages never become anchors
NATIVE_RULE = re.compile(r"\.claude/rules/engram/([^/]+)\.md")
PATCH_HEADER = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$", re.MULTILINE)
TYPE_ORDER = {"rule": 0, "skill": 1, "knowledge": 2}

Size = Callable[[str], int]


# --- the paths a file event touches, as each host sends them ------------------------------------


def _tool_input(payload: dict) -> dict:
    """`tool_input` as a dict (Cursor may send it as a JSON string)."""
    value = payload.get("tool_input")
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    return value if isinstance(value, dict) else {}


def _first_string(data: dict, keys: tuple[str, ...]) -> list[str]:
    for key in keys:
        if isinstance(data.get(key), str) and data[key].strip():
            return [data[key]]
    return []


CLAUDE_FILE_TOOLS = {"Read": "file_path", "Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
                     "NotebookEdit": "notebook_path"}  # fmt: skip


def claude_paths(payload: dict) -> list[str]:
    key = CLAUDE_FILE_TOOLS.get(payload.get("tool_name"))
    return _first_string(_tool_input(payload), (key,)) if key else []


def codex_paths(payload: dict) -> list[str]:
    """Codex edits through `apply_patch`; the paths are in the patch headers."""
    if payload.get("tool_name") != "apply_patch":
        return []
    command = _tool_input(payload).get("command")
    if isinstance(command, list):  # the argv form: ["apply_patch", "<patch>"]
        command = "\n".join(part for part in command if isinstance(part, str))
    return PATCH_HEADER.findall(command) if isinstance(command, str) else []


def gemini_paths(payload: dict) -> list[str]:
    if payload.get("tool_name") not in ("read_file", "write_file", "replace"):
        return []
    return _first_string(_tool_input(payload), ("file_path", "absolute_path"))  # absolute_path: builds before v0.15


def cursor_paths(payload: dict) -> list[str]:
    """Cursor does not document its tools' argument names, so probe the likely ones."""
    return _first_string(_tool_input(payload), ("file_path", "path", "target_file"))


def _payload_cwd(payload: dict) -> str | None:
    return payload["cwd"] if isinstance(payload.get("cwd"), str) and payload["cwd"] else None


def cursor_project(payload: dict) -> str | None:
    roots = payload.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str) and roots[0]:
        return roots[0]
    return os.environ.get("CURSOR_PROJECT_DIR") or _payload_cwd(payload)


# --- per-host differences -----------------------------------------------------------------------


class Host:
    def __init__(
        self,
        events: dict[str, str],
        cap: int,
        size: Size,
        file_paths: Callable[[dict], list[str]],
        project_dir: Callable[[dict], str | None] = _payload_cwd,
        native_path_rules: bool = False,
        session_field: str = "session_id",
        flat_output: bool = False,
        cursor_guard: bool = False,
    ) -> None:
        self.events = events  # the host's event name -> what engram does (see ACTIONS)
        self.cap = cap  # on the whole additionalContext text, in the unit `size` measures
        self.size = size
        self.file_paths = file_paths
        self.project_dir = project_dir
        self.native_path_rules = native_path_rules  # file events only with hooks.path_rules: hook
        self.session_field = session_field
        self.flat_output = flat_output  # {"additional_context": ...} instead of hookSpecificOutput
        self.cursor_guard = cursor_guard  # Cursor also runs Claude hooks: stay silent there


# Codex adopted Claude Code's event names; only Claude reports which rule files it loaded.
CLAUDE_CODEX_EVENTS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "prompt",
    "PreToolUse": "file",
    "PreCompact": "reset",
    "SubagentStart": "subagent",
}

HOSTS: dict[str, Host] = {
    "claude": Host(
        events={**CLAUDE_CODEX_EVENTS, "InstructionsLoaded": "instructions"},
        cap=9500,
        size=len,
        file_paths=claude_paths,
        native_path_rules=True,
        cursor_guard=True,
    ),
    "codex": Host(
        events=CLAUDE_CODEX_EVENTS,
        cap=2400,
        size=terms.estimate_tokens,
        file_paths=codex_paths,
    ),
    "gemini": Host(
        # PreCompress cannot add context, but the compressed history loses what was injected
        events={"SessionStart": "session_start", "BeforeAgent": "prompt", "AfterTool": "file", "PreCompress": "reset"},
        cap=9500,
        size=len,
        file_paths=gemini_paths,
    ),
    "cursor": Host(
        events={"sessionStart": "session_start", "postToolUse": "file", "preCompact": "reset"},
        cap=9500,
        size=len,
        file_paths=cursor_paths,
        project_dir=cursor_project,
        native_path_rules=True,
        session_field="conversation_id",
        flat_output=True,
    ),
}
HOST_ALIASES = {"claude-code": "claude"}


# --- one hook call ------------------------------------------------------------------------------


class Hook:
    def __init__(
        self,
        host_name: str,
        host: Host,
        event: str,
        payload: dict,
        ws: Workspace,
        state: sqlite3.Connection,
        session: str,
        agent: str,
    ) -> None:
        self.host_name = host_name
        self.host = host
        self.event = event
        self.payload = payload
        self.ws = ws
        self.state = state
        self.session = session
        self.agent = agent  # a subagent's agent_id; "" for the main agent

    @property
    def base_dir(self) -> str:
        """What relative tool paths are relative to."""
        return _payload_cwd(self.payload) or self.ws.root.project

    def layers(self) -> list[Layer]:
        messages: list[str] = []
        layers = open_layers(self.ws, None, messages, self.state)
        for message in messages:
            debug(message)
        return layers

    def options(self) -> Options:
        config = self.ws.config
        return Options(limit=config.get("load.limit"), roles=tuple(config.get("roles")), fetch_counts=fetch_counts(self.state))

    def screen(self) -> ScreenCache:
        """The safety screen, remembering verdicts in this project's state.db."""
        return ScreenCache(self.state)

    def overflow(self, already: list[str], token_budget: int | None = None) -> Callable[[Pack], int]:
        """build_pack's measure against the host cap (and load's token budget when given).

        fit_budget demotes bodies, then drops cards, until measure <= budget;
        this measure is 0 while the text is within every limit and 1 once it
        is over one, so it goes with ``budget=WITHIN_LIMITS``.
        """
        limits = [(self.host.size, self.host.cap)]
        if token_budget is not None:
            limits.append((terms.estimate_tokens, token_budget))

        def measure(pack: Pack) -> int:
            text = hook_text(pack, already)
            return int(any(size(text) > cap for size, cap in limits))

        return measure


def context_text(pack: Pack, already: list[str]) -> str | None:
    """The additionalContext text, or None when there is nothing to add."""
    if not (pack.entries or pack.skipped or already):
        return None
    return hook_text(pack, already)


def hook_text(pack: Pack, already: list[str]) -> str:
    text = render_text(pack)
    if already:
        text += f"already loaded: {', '.join(already)}\n"
    return text.rstrip("\n")


def bodies(pack: Pack) -> list[str]:
    return [entry.cand.key for entry in pack.entries if entry.shown == "body"]


# --- the delivered set in state.db --------------------------------------------------------------


def delivered_keys(hook: Hook) -> set[str]:
    rows = hook.state.execute(
        "SELECT memory FROM delivered WHERE host = ? AND session = ? AND agent = ?",
        (hook.host_name, hook.session, hook.agent),
    )
    return {row[0] for row in rows}


def mark_delivered(hook: Hook, keys: list[str]) -> None:
    hook.state.executemany(
        "INSERT OR IGNORE INTO delivered (host, session, agent, memory) VALUES (?, ?, ?, ?)",
        [(hook.host_name, hook.session, hook.agent, key) for key in keys],
    )
    touch_session(hook)


def forget_delivered(hook: Hook) -> None:
    hook.state.execute(
        "DELETE FROM delivered WHERE host = ? AND session = ? AND agent = ?", (hook.host_name, hook.session, hook.agent)
    )
    touch_session(hook)


def touch_session(hook: Hook, prompt: str | None = None) -> None:
    """Keep the session row fresh; a prompt also becomes its last prompt (for subagents)."""
    hook.state.execute(
        "INSERT INTO sessions (host, session, last_prompt, updated) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (host, session) DO UPDATE SET updated = excluded.updated,"
        " last_prompt = coalesce(excluded.last_prompt, last_prompt)",
        (hook.host_name, hook.session, prompt, time.time()),
    )


def last_prompt(hook: Hook) -> str | None:
    row = hook.state.execute(
        "SELECT last_prompt FROM sessions WHERE host = ? AND session = ?", (hook.host_name, hook.session)
    ).fetchone()
    return row[0] if row else None


def prune_idle_sessions(hook: Hook) -> None:
    cutoff = time.time() - SESSION_TTL_SECONDS
    hook.state.execute(
        "DELETE FROM delivered WHERE (host, session) IN (SELECT host, session FROM sessions WHERE updated < ?)",
        (cutoff,),
    )
    hook.state.execute("DELETE FROM sessions WHERE updated < ?", (cutoff,))


# --- events -------------------------------------------------------------------------------------


def on_session_start(hook: Hook) -> str | None:
    """A fresh delivered set, and the memories tagged `always` or `session-start` as bodies."""
    options = hook.options()
    chosen = tagged_memories(hook.layers(), options)
    with write_transaction(hook.state):
        prune_idle_sessions(hook)
        forget_delivered(hook)
        if not chosen:
            return None
        routing = Routing([], chosen, chosen)
        pack_options = PackOptions(limit=UNLIMITED, layered=False, budget=WITHIN_LIMITS, screen=hook.screen())
        pack = build_pack(routing, options, pack_options, hook.overflow([]))
        mark_delivered(hook, bodies(pack))
    return context_text(pack, [])


def on_prompt(hook: Hook) -> str | None:
    prompt = hook.payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    prompt = prompt[:MAX_PROMPT_CHARS]
    options = hook.options()
    routing = route(hook.layers(), prompt, options)
    with write_transaction(hook.state):
        touch_session(hook, prompt)
        return deliver_routed(hook, routing, options)


def on_subagent(hook: Hook) -> str | None:
    """A subagent starts with its own delivered set and a pack routed on the session's last prompt."""
    if not hook.agent:
        return None
    prompt = last_prompt(hook)
    if not prompt:
        return None
    options = hook.options()
    routing = route(hook.layers(), prompt, options)
    with write_transaction(hook.state):
        forget_delivered(hook)
        return deliver_routed(hook, routing, options)


def deliver_routed(hook: Hook, routing: Routing, options: Options) -> str | None:
    """The `engram load` pack minus what was delivered; those are folded into one line.

    Runs inside the caller's write transaction, so concurrent hooks of one
    session never deliver the same memory twice.
    """
    if not routing.admitted:
        return None
    delivered = delivered_keys(hook)
    already = gate.names([c.id for c in with_prerequisites(routing.pack, options, options.limit) if c.key in delivered])
    config = hook.ws.config
    layered = config.get("load.disclosure") != "full"
    pack_options = PackOptions(
        limit=options.limit,
        expand_top=config.get("load.expand_top"),
        layered=layered,
        budget=WITHIN_LIMITS,
        exclude=frozenset(delivered),
        screen=hook.screen(),
    )
    measure = hook.overflow(already, config.get("load.budget_tokens") if layered else None)
    pack = build_pack(routing, options, pack_options, measure)
    mark_delivered(hook, bodies(pack))
    return context_text(pack, already)


def on_file(hook: Hook) -> str | None:
    """Memories whose `applies_to` matches the touched files, at most three new bodies."""
    if hook.host.native_path_rules and hook.ws.config.get("hooks.path_rules") != "hook":
        return None  # the generated .claude/.cursor rule files carry them
    paths = [rel for raw in hook.host.file_paths(hook.payload) if (rel := project_path(raw, hook))]
    if not paths:
        return None
    options = hook.options()
    matched = path_memories(hook.layers(), paths, options)
    if not matched:
        return None
    with write_transaction(hook.state):
        delivered = delivered_keys(hook)
        new = [c for c in matched if c.key not in delivered]
        if not new:
            return None
        routing = Routing([], matched, new)
        pack_options = PackOptions(
            limit=options.limit,
            expand_top=FILE_EVENT_BODIES,
            budget=WITHIN_LIMITS,
            exclude=frozenset(delivered),
            screen=hook.screen(),
        )
        pack = build_pack(routing, options, pack_options, hook.overflow([]))
        delivered_now = bodies(pack)
        mark_delivered(hook, delivered_now)
    # Without a new body, a file event would only repeat cards or SKIPPED lines on every touch.
    return context_text(pack, []) if delivered_now else None


def on_reset(hook: Hook) -> None:
    with write_transaction(hook.state):
        forget_delivered(hook)


def on_instructions_loaded(hook: Hook) -> None:
    """Claude loaded a generated native rule file: its memory is in context now."""
    raw = hook.payload.get("file_path")
    rel = project_path(raw, hook) if isinstance(raw, str) else None
    found = NATIVE_RULE.fullmatch(rel or "")
    if found:
        with write_transaction(hook.state):
            mark_delivered(hook, [f"workspace:{found.group(1)}"])


ACTIONS: dict[str, Callable[[Hook], str | None]] = {
    "session_start": on_session_start,
    "prompt": on_prompt,
    "file": on_file,
    "reset": on_reset,
    "subagent": on_subagent,
    "instructions": on_instructions_loaded,
}


# --- selecting memories without a query ---------------------------------------------------------


def tagged_memories(layers: list[Layer], options: Options) -> list[Candidate]:
    found = [c for c in visible_candidates(layers, "tags != '[]'", options) if SESSION_TAGS & set(c.tags)]
    return sorted(found, key=lambda c: (c.scope != "workspace", TYPE_ORDER.get(c.row["type"], 9), c.id))


def path_memories(layers: list[Layer], paths: list[str], options: Options) -> list[Candidate]:
    """Memories with an `applies_to` glob matching one of the paths, most specific glob first."""
    ranked = []
    for layer in layers:
        # Globs first, from their own index; whole rows only for the memories that match.
        globs = layer.conn.execute("SELECT rowid, applies_to FROM memories WHERE applies_to != '[]'").fetchall()
        specificity = {rowid: _specificity(json.loads(raw), paths) for rowid, raw in globs}
        matched = [rowid for rowid, best in specificity.items() if best is not None]
        where = "m.rowid IN (SELECT value FROM json_each(:rowids))"
        for cand in visible_candidates([layer], where, options, {"rowids": json.dumps(matched)}):
            ranked.append((-specificity[cand.row["rowid"]], cand.scope != "workspace", cand.id, cand))
    return [entry[-1] for entry in sorted(ranked, key=lambda e: e[:3])]


def _specificity(globs: list[str], paths: list[str]) -> int | None:
    """The longest literal part of a glob matching one of the paths, None when none does."""
    hits = [literal_length(g) for g in globs if any(matches(g, p) for p in paths)]
    return max(hits) if hits else None


def project_path(raw: str, hook: Hook) -> str | None:
    """A tool's path as a posix path relative to the project root, or None when outside it."""
    path = os.path.join(hook.base_dir, os.path.expanduser(raw))  # an absolute path stays as it is
    for candidate in (os.path.normpath(path), os.path.realpath(path)):
        rel = relative_posix(candidate, hook.ws.root.project)
        if rel is not None:
            return rel if rel != "." else None
    return None


# --- entry point --------------------------------------------------------------------------------


class Silent(Exception):
    """Nothing to do for this call; the message is the debug reason."""


def main(argv: list[str]) -> int:
    stray = io.StringIO()
    try:
        with contextlib.redirect_stdout(stray):  # stdout carries exactly one JSON object
            output = run(argv, _read_payload())
    except Silent as reason:
        debug(str(reason))
        output = {}
    except Exception as exc:  # noqa: BLE001 - a hook never fails its host
        debug(f"error: {type(exc).__name__}: {exc}")
        output = {}
    if stray.getvalue():
        debug(f"discarded stray output: {stray.getvalue()[:200]!r}")
    try:
        sys.stdout.write(json.dumps(output) + "\n")
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError):  # stdout closed or gone: nobody reads the answer
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - so the flush at exit has nothing to fail on
    return 0


def _read_payload() -> bytes:
    raw = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise Silent(f"stdin holds more than {MAX_PAYLOAD_BYTES} bytes; not read")
    return raw


def run(argv: list[str], raw: bytes) -> dict:
    host_name = _host_argument(argv)
    host = HOSTS.get(host_name)
    if host is None:
        raise Silent(f"unknown host {host_name!r}; expected one of {', '.join(HOSTS)}")
    payload = _payload(raw)
    event = payload.get("hook_event_name")
    if not isinstance(event, str) or event not in host.events:
        raise Silent(f"event {event!r} not handled for {host_name}")
    if host.cursor_guard and ("cursor_version" in payload or os.environ.get("CURSOR_VERSION")):
        raise Silent("running under Cursor, which has its own engram hooks")
    ws = open_workspace(host.project_dir(payload) or os.getcwd())
    if not os.path.isdir(ws.root.path):
        raise Silent(f"no engram root at {ws.root.path}")
    state = open_state(ws.root.state_path)
    try:
        hook = Hook(host_name, host, event, payload, ws, state, _session(payload, host), _agent(payload))
        text = ACTIONS[host.events[event]](hook)
    finally:
        state.close()
    return envelope(host, event, text) if text else {}


def envelope(host: Host, event: str, text: str) -> dict:
    text = gate.text(text)
    if host.flat_output:
        return {"additional_context": text}
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def _host_argument(argv: list[str]) -> str:
    """`--host X` or `--host=X`, parsed by hand: a hook never exits 2 on bad flags."""
    for index, arg in enumerate(argv):
        if arg == "--host" and index + 1 < len(argv):
            return HOST_ALIASES.get(argv[index + 1], argv[index + 1])
        if arg.startswith("--host="):
            value = arg.split("=", 1)[1]
            return HOST_ALIASES.get(value, value)
    return ""


def _payload(raw: bytes) -> dict:
    try:
        payload = json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        raise Silent("stdin is not JSON") from None
    if not isinstance(payload, dict):
        raise Silent("stdin is not a JSON object")
    return payload


def _session(payload: dict, host: Host) -> str:
    value = payload.get(host.session_field) or payload.get("session_id")
    return str(value) if isinstance(value, (str, int)) and value != "" else "default"


def _agent(payload: dict) -> str:
    value = payload.get("agent_id")
    return value if isinstance(value, str) else ""


def debug(message: str) -> None:
    if os.environ.get("ENGRAM_DEBUG") == "1":
        print(f"engram hook: {message}", file=sys.stderr)

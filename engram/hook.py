"""`engram hook --host claude|codex|gemini|cursor`: the host hook adapter (stdlib only).

Reads the host's JSON on stdin and always prints exactly one JSON object and
returns 0: a hook must never block or break the agent, so bad input, an
unknown host, a missing workspace and any internal error all print `{}`
(with a reason on stderr when ENGRAM_DEBUG=1; an unknown host, most likely a
typo in a host config, is named on stderr always). The content comes from the
same route + pack core as `engram load`; each host's events, payload shape,
output shape and cap come from `engram.hosts`, the per-session delivered set
from `state.HookSession`, the memories chosen by tag or path from `route`;
this module adds what each event does.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sqlite3
import sys
from collections.abc import Callable, Iterable

from . import errors, gate, terms
from .autowatch import start_watcher
from .errors import EngramError, say
from .hookstdin import read_stdin
from .hosts import HOSTS, claude, host_named
from .hosts.base import Host, payload_cwd
from .layers import Layer, open_layers
from .lazyre import LazyPattern
from .pack import Fits, Pack, with_prerequisites
from .paths import relative_posix
from .render import off_topic_text, render_text
from .route import MAX_TASK_CHARS, Candidate, Options, Routing, first_by_id, path_memories, route, tagged_memories
from .select import options_from_config, pack_options_from_config, pack_routing
from .state import (
    HookSession,
    ScreenCache,
    fetch_counts,
    open_state,
    prune_idle_sessions,
    transient_state,
    write_transaction,
)
from .workspace import Workspace, open_workspace

PREFIX = "engram hook"  # of what a hook says on stderr
SESSION_TAGS = frozenset({"always", "session-start"})
FILE_EVENT_BODIES = 3
SESSION_TTL_SECONDS = 30 * 24 * 3600  # delivered sets of sessions idle this long are dropped
MAX_PAYLOAD_BYTES = 8 * 1024 * 1024  # a larger payload is not read: `{}`
# A generated Claude rule file, as InstructionsLoaded reports it: its memory is in context.
NATIVE_RULE = LazyPattern(re.escape(claude.RULES.folder) + r"/([^/]+)" + re.escape(claude.RULES.suffix))
# Where hosts put hook output that then comes back in a prompt (Gemini prepends SessionStart's context
# to the first prompt as <hook_context>); the user's words are outside them.
HOST_BLOCK_OPEN = LazyPattern(r"<(hook_context|system-reminder)>")
COUNT_LINE = LazyPattern(r"^loaded \d+ memory files / \d+ total related memories$", re.MULTILINE)
# The lines of an engram pack around its bodies (render.py), stripped only where a count line shows one.
PACK_LINES = LazyPattern(
    r"^(?:loaded \d+ memory files / \d+ total related memories|already loaded: .*|fetch: engram load --id .*"
    r"|requires: .*|SKIPPED .*|### [a-z0-9][a-z0-9._-]* \[[a-z]+, [a-z]+\]|- [a-z0-9][a-z0-9._-]* \[[a-z]+\] .*)$",
    re.MULTILINE,
)
PACK_HEADING = LazyPattern(r"^### ([a-z0-9][a-z0-9._-]*) \[", re.MULTILINE)


# --- one hook call ------------------------------------------------------------------------------


class Hook:
    def __init__(self, host: Host, event: str, payload: dict, ws: Workspace, state: sqlite3.Connection) -> None:
        self.host = host
        self.event = event
        self.payload = payload
        self.ws = ws
        self.state = state
        # keyed by the host's session field and a subagent's agent_id ("" for the main agent)
        self.session = HookSession(state, host.name, _session(payload, host), _agent(payload))

    @property
    def base_dir(self) -> str:
        """What relative tool paths are relative to."""
        return payload_cwd(self.payload) or self.ws.root.project

    def layers(self) -> list[Layer]:
        messages: list[str] = []
        layers = open_layers(self.ws, None, messages, self.state)
        for message in messages:
            debug(message)
        return layers

    def options(self) -> Options:
        return options_from_config(self.ws.config, fetch_counts=fetch_counts(self.state))

    def screen(self) -> ScreenCache:
        """The safety screen, remembering verdicts in this project's state.db."""
        return ScreenCache(self.state)

    def fits(self, already: list[str], token_budget: int | None = None) -> Fits:
        """Whether a pack's hook text is within the host's cap (and load's token budget when given)."""
        limits = [(self.host.size, self.host.cap)]
        if token_budget is not None:
            limits.append((terms.estimate_tokens, token_budget))

        def fits(pack: Pack) -> bool:
            text = hook_text(pack, already)
            return all(size(text) <= cap for size, cap in limits)

        return fits


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


def body_marks(pack: Pack) -> list[tuple[str, str]]:
    """The memories the pack shows as bodies, each with the digest of its source: what a hook marks delivered."""
    return [marked(entry.cand) for entry in pack.entries if entry.shown == "body"]


def marked(cand: Candidate) -> tuple[str, str]:
    return cand.key, cand.row["source_sha256"] or ""


def still_delivered(hook: Hook, cands: Iterable[Candidate]) -> set[str]:
    """The session's delivered memories, less those of ``cands`` edited since it got them
    (`HookSession.forget_edited`)."""
    return hook.session.forget_edited([marked(cand) for cand in cands])


# --- events -------------------------------------------------------------------------------------


def on_session_start(hook: Hook) -> str | None:
    """A fresh delivered set, and the memories tagged `always` or `session-start` as bodies.

    A resumed session keeps what the restored transcript still holds (`Host.restored_text`).
    """
    options = hook.options()
    tagged = tagged_memories(hook.layers(), SESSION_TAGS, options)
    with write_transaction(hook.state):
        prune_idle_sessions(hook.state, SESSION_TTL_SECONDS)
        if hook.payload.get("source") == "resume":
            forget_unrestored(hook)
        else:
            hook.session.forget_delivered()
        delivered = still_delivered(hook, tagged)
        chosen = [c for c in tagged if c.key not in delivered]
        if not chosen:
            return None
        routing = Routing([], chosen, chosen)
        # every tagged memory as a body, bounded by the host cap alone
        pack_options = pack_options_from_config(hook.ws.config, everything=True, screen=hook.screen())
        pack = pack_routing(routing, options, pack_options, hook.fits([]))
        hook.session.mark_delivered(body_marks(pack))
    return context_text(pack, [])


def forget_unrestored(hook: Hook) -> None:
    """Forget the delivered memories whose block the host left out of the resumed history."""
    restored = hook.host.restored_text(hook.payload)
    if restored is not None:
        lost = [key for key in hook.session.delivered() if f"### {key.split(':', 1)[1]} [" not in restored]
        hook.session.forget_delivered(lost)


def on_prompt(hook: Hook) -> str | None:
    raw = hook.payload.get("prompt")
    if not isinstance(raw, str):
        return None
    layers = hook.layers()
    prompt = own_words(raw, layers)
    if not prompt.strip():
        debug("nothing to add: the prompt holds only what hosts and engram put into it")
        return None
    prompt = prompt[:MAX_TASK_CHARS]  # what routing reads, and all the session keeps for subagents
    options = hook.options()
    routing = route(layers, prompt, options)
    with write_transaction(hook.state):
        hook.session.touch(prompt)
        return deliver_routed(hook, routing, options)


def own_words(prompt: str, layers: list[Layer]) -> str:
    """The prompt without what hosts and engram put into it: routing those would route engram's own output."""
    text = without_host_blocks(prompt)
    if not COUNT_LINE.search(text):
        return text
    for memory_id in set(PACK_HEADING.findall(text)):  # a pack pasted in: its bodies are stored texts
        for layer in layers:
            for stored in layer.conn.execute("SELECT body, directive FROM memories WHERE id = ?", (memory_id,)):
                for part in filter(None, stored):
                    text = text.replace(part, "\n")
    return PACK_LINES.sub("", text)


def without_host_blocks(prompt: str) -> str:
    """The prompt with each host block (`<system-reminder>...</system-reminder>`) replaced by a line
    break; in one pass, as a regex's lazy `.*?` would rescan the rest of the prompt for each unclosed tag."""
    out, position, unclosed = [], 0, set()
    while match := HOST_BLOCK_OPEN.search(prompt, position):
        closing = f"</{match.group(1)}>"
        end = -1 if closing in unclosed else prompt.find(closing, match.end())
        if end == -1:
            unclosed.add(closing)
            out.append(prompt[position : match.end()])
        else:
            out += [prompt[position : match.start()], "\n"]
            end += len(closing)
        position = match.end() if end == -1 else end
    return "".join(out) + prompt[position:]


def on_subagent(hook: Hook) -> str | None:
    """A subagent starts with its own delivered set and a pack routed on the session's last prompt."""
    if not hook.session.agent:
        return None
    prompt = hook.session.last_prompt()
    if not prompt:
        return None
    options = hook.options()
    routing = route(hook.layers(), prompt, options)
    with write_transaction(hook.state):
        hook.session.forget_delivered()
        return deliver_routed(hook, routing, options)


def deliver_routed(hook: Hook, routing: Routing, options: Options) -> str | None:
    """The `engram load` pack minus what was delivered; those are folded into one line.

    Runs inside the caller's write transaction, so concurrent hooks of one
    session never deliver the same memory twice.
    """
    if not routing.admitted:
        debug("nothing to add: no memory holds a word of the task")
        return None
    if routing.off_topic:
        debug(f"nothing to add: {off_topic_text(routing)}")
    in_play = with_prerequisites(routing, options, options.limit)
    delivered = still_delivered(hook, [*in_play, *routing.admitted])
    already = gate.names([c.id for c in in_play if c.key in delivered])
    pack_options = pack_options_from_config(hook.ws.config, exclude=frozenset(delivered), screen=hook.screen())
    pack = pack_routing(routing, options, pack_options, hook.fits(already, pack_options.budget))
    hook.session.mark_delivered(body_marks(pack))
    return context_text(pack, already)


def has_rule_files(hook: Hook) -> bool:
    """Whether engram writes this host's native rule files in the project (linked there, or named in
    `hooks.native`). With a user-level link only there are none, and the hook delivers by path itself."""
    return hook.host.rules is not None and os.path.isdir(os.path.join(hook.ws.root.project, hook.host.rules.folder))


def on_file(hook: Hook) -> str | None:
    """Memories whose `applies_to` matches the touched files, at most three new bodies. Where the
    generated .claude/.cursor rule files carry the project's own, only the global layer's: no rule
    file in the project holds those (a CI clone has no global folder to check them against)."""
    rule_files = hook.ws.config.get("hooks.path_rules") != "hook" and has_rule_files(hook)
    rules = hook.host.rules if rule_files else None
    native = f"the project's applies_to memories are in {rules.folder}, which the host loads itself" if rules else ""
    if rule_files and hook.ws.global_root is None and hook.ws.global_index_path is None:
        debug(f"nothing to add: {native}, and no global folder is set")
        return None
    paths = [rel for raw in hook.host.file_paths(hook.payload) if (rel := project_path(raw, hook))]
    if not paths:
        debug("nothing to add: the event names no file inside the project")
        return None
    options = hook.options()
    layers = [layer for layer in hook.layers() if not rule_files or layer.scope != "workspace"]
    matched = path_memories(layers, paths, options)
    if not matched:
        debug(
            "nothing to add: no memory's applies_to matches "
            + ", ".join(map(gate.file_path, paths[:3]))
            + (f" ({native})" if native else "")
        )
        return None
    with write_transaction(hook.state):
        delivered = still_delivered(hook, matched)
        new = [c for c in matched if c.key not in delivered]
        if not new:
            debug("nothing to add: the session holds every memory for these files already")
            return None
        routing = Routing([], matched, new)
        # layered whatever load.disclosure says, within the host cap alone
        pack_options = pack_options_from_config(
            hook.ws.config,
            disclosure="auto",
            expand_top=FILE_EVENT_BODIES,
            exclude=frozenset(delivered),
            screen=hook.screen(),
        )
        pack = pack_routing(routing, options, pack_options, hook.fits([]))
        delivered_now = body_marks(pack)
        hook.session.mark_delivered(delivered_now)
    # Without a new body, a file event would only repeat cards or SKIPPED lines on every touch.
    if not delivered_now:
        debug("nothing to add: no new memory body fits or passes its checks for these files")
        return None
    return context_text(pack, [])


def on_reset(hook: Hook) -> None:
    with write_transaction(hook.state):
        hook.session.forget_delivered()


def on_compress(hook: Hook) -> None:
    """Gemini's PreCompress fires before every model call, compression or not, and nothing in its payload or
    transcript tells them apart; only a /compress the user asked for (trigger manual) is sure to compress."""
    if hook.payload.get("trigger") == "manual":
        on_reset(hook)


def on_instructions_loaded(hook: Hook) -> None:
    """Claude loaded a generated native rule file: its memory is in context now, as its source is
    (a later edit sends it again), if the file was what engram writes for it now. One left behind
    by an edit (before a refresh rewrote it) marks nothing: the next prompt sends the memory."""
    from . import native_rules  # Claude runs this event asynchronously: no prompt waits on it

    raw = hook.payload.get("file_path")
    rel = project_path(raw, hook) if isinstance(raw, str) else None
    found = NATIVE_RULE.fullmatch(rel or "")
    if not found:
        return
    rule_file = os.path.join(hook.ws.root.project, found.group(0))
    loaded = native_rules.read_rule_file(rule_file)  # as Claude read it: before the refresh below rewrites it
    cand = first_by_id(hook.layers()[:1], found.group(1), hook.options())  # workspace memories only have files
    if cand is None or cand.scope != "workspace" or cand.omission is not None:
        return
    if loaded is not None and loaded == native_rules.wanted_file(hook.ws.root, hook.ws.config, claude.HOST, cand.id):
        with write_transaction(hook.state):
            hook.session.mark_delivered([marked(cand)])


ACTIONS: dict[str, Callable[[Hook], str | None]] = {
    "session_start": on_session_start,
    "prompt": on_prompt,
    "file": on_file,
    "reset": on_reset,
    "compress": on_compress,
    "subagent": on_subagent,
    "instructions": on_instructions_loaded,
}


def project_path(raw: str, hook: Hook) -> str | None:
    """A tool's path as a posix path relative to the project root, or None when outside it."""
    path = os.path.join(hook.base_dir, os.path.expanduser(raw))  # an absolute path stays as it is
    for candidate in (os.path.normpath(path), os.path.realpath(path)):
        rel = relative_posix(candidate, hook.ws.root.project)
        if rel is not None:
            return rel if rel != "." else None
    return None


# --- entry point --------------------------------------------------------------------------------


class Silent(EngramError):
    """Nothing to do for this call; the message is the debug reason."""


USAGE = """usage: engram hook --host claude|codex|gemini|cursor

The command `engram link <host>` writes into the host's hook config; the host runs it on its
events. It reads the event as JSON on stdin (the event's name is inside it, as the host sends
it) and prints exactly one JSON object: the memories for that prompt or file in the host's
reply shape, or {} when there is nothing to add. It always exits 0, so a hook never blocks or
breaks the agent: bad input, an unknown host and any error print {} (ENGRAM_DEBUG=1 says why on
stderr). docs/hosts.md lists each host's events.

Try one by hand, in a project with memories:
  echo '{"hook_event_name": "UserPromptSubmit", "prompt": "fix the login test"}' | engram hook --host claude
"""


def main(argv: list[str]) -> int:
    if ("-h" in argv or "--help" in argv) and (_at_terminal() or not _host_argument(argv)):
        sys.stdout.write(USAGE)
        return 0  # a person asked; a host (its command always names --host) pipes JSON and gets JSON
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
    raw = read_stdin(MAX_PAYLOAD_BYTES + 1)
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise Silent(f"stdin holds more than {MAX_PAYLOAD_BYTES} bytes; not read")
    return raw


def run(argv: list[str], raw: bytes) -> dict:
    host_name = _host_argument(argv)
    host = host_named(host_name)
    if host is None:  # a typo in a host config: the one hook message shown without ENGRAM_DEBUG
        named = f"unknown host {host_name!r}" if host_name else "no --host given"
        say(f"{named} (one of {', '.join(HOSTS)})", PREFIX)
        raise Silent("unknown host")
    payload = _payload(raw)
    event = payload.get("hook_event_name")
    if not isinstance(event, str) or event not in host.actions:
        raise Silent(f"event {event!r} not handled for {host.name}")
    if host.cursor_guard and ("cursor_version" in payload or os.environ.get("CURSOR_VERSION")):
        raise Silent("running under Cursor, which has its own engram hooks")
    ws = open_workspace(host.project_dir(payload) or os.getcwd())
    if not os.path.isdir(ws.root.path):
        raise Silent(f"no engram root at {ws.root.path}")
    try:
        state = open_state(ws.root.state_path)
    except (sqlite3.Error, OSError) as exc:
        debug(f"{ws.root.state_path} cannot be opened ({exc}); this event is answered without it")
        state = transient_state()
    try:
        text = ACTIONS[host.actions[event]](Hook(host, event, payload, ws, state))
    finally:
        state.close()
        start_watcher(ws)  # hooks.start_watch: the next event is answered by a watcher
    return host.output(event, gate.text(text)) if text else {}


def _at_terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


def _host_argument(argv: list[str]) -> str:
    """`--host X` or `--host=X`, parsed by hand: a hook never exits 2 on bad flags."""
    for index, arg in enumerate(argv):
        if arg == "--host" and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--host="):
            return arg.split("=", 1)[1]
    return ""


def _payload(raw: bytes) -> dict:
    try:
        payload = json.loads(raw.decode("utf-8", "replace"), parse_int=_any_int)
    except (ValueError, RecursionError):  # RecursionError: `[` nested 100,000 deep
        raise Silent("stdin is not JSON") from None
    if not isinstance(payload, dict):
        raise Silent("stdin is not a JSON object")
    cleaned = _whole_characters(payload) if b"\\ud" in raw.lower() else payload
    return cleaned if isinstance(cleaned, dict) else payload


def _any_int(digits: str) -> int | float:
    """An integer of the payload; one too long for `int` (Python's 4,300 digits) in a field engram never
    reads cost the whole event (a red-team audit): it is a float, infinite if it must be."""
    return int(digits) if len(digits) < 4000 else float(digits)


def _whole_characters(value: object) -> object:
    """Strings without lone UTF-16 surrogates (`"\\ud83d"`: an emoji cut in half, as JSON.stringify
    escapes it), which no UTF-8 text can hold: each becomes U+FFFD, and the prompt is routed."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {key: _whole_characters(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole_characters(item) for item in value]
    return value


def _session(payload: dict, host: Host) -> str:
    value = payload.get(host.session_field) or payload.get("session_id")
    return str(value) if isinstance(value, (str, int)) and value != "" else "default"


def _agent(payload: dict) -> str:
    value = payload.get("agent_id")
    return value if isinstance(value, str) else ""


def debug(message: str) -> None:
    errors.debug(message, PREFIX)

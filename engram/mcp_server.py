"""`engram mcp`: a stdio MCP server over the same read path as `engram load`.

Three tools: `route` (the pack `load` prints for a task), `fetch` (the bodies
`load --id` prints; hidden memories stay hidden) and `cards` (one line per
visible memory). Every printed text goes through the hash and safety checks of
the pack, like `load`'s. The tool text is what `load` prints; the structured
content carries ids, tiers (body or card) and texts.

Needs the optional MCP SDK (engram's `mcp` extra, major version 2); the
hook and `load` paths never import this module. stdout is the protocol's wire:
nothing here prints to it.
"""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Mapping
from importlib.metadata import version
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent
from typing_extensions import TypedDict  # pydantic, under the SDK, needs this one on Python 3.11

from . import gate
from .config import BUDGET_RANGE
from .errors import warning
from .layers import NOTHING_SERVED, Layer
from .load import fetch as fetch_ids
from .load import load_pack, no_memory_folder, open_read
from .pack import Entry, Pack, checked_body
from .render import card_line, render_text, skipped_line, source_path, with_directive
from .route import visible_candidates
from .select import options_from_config
from .workspace import Workspace, open_workspace

FETCH_BY_TOOL = "call the `fetch` tool with ids"  # a client may have no shell to run `engram load --id`
MAX_FETCH = 32  # ids one `fetch` answers (the most a pack lists): a model asking for every id gets a megabyte
MAX_CARDS = 200  # lines one `cards` answers; the rest are counted
ROUTE_DESCRIPTION = (
    "The memories that apply to a task: the most relevant as full bodies, the rest as one-line cards. "
    "task: what the agent is about to do, in the user's words. budget_tokens: cap the whole pack "
    f"({BUDGET_RANGE[0]}-{BUDGET_RANGE[1]} tokens; default: the project's load.budget_tokens)."
)
INSTRUCTIONS = (
    "Project memory for this repository: call `route` with the task (or the user's request) to get the rules, "
    "skills and knowledge that apply; `fetch` gives the full body of a memory listed as a card."
)


class PackEntry(TypedDict):
    id: str
    scope: str
    type: str
    authority: str  # instruction (to follow) | reference (to know)
    shown: str  # body | card
    tier: str  # body | card (selected) | omitted (a candidate left out, listed as a card)
    relevance: float | None  # None: never judged against the task (a prerequisite)
    text: str  # the body, or the card's one line
    requires: list[str]
    stale: bool


class Skip(TypedDict):
    id: str
    path: str
    label: str


class RoutedPack(TypedDict):
    selected: int
    total_related: int
    entries: list[PackEntry]
    skipped: list[Skip]
    fetch: list[str]  # ids shown as cards: `fetch` gives their bodies


class FetchedMemory(TypedDict):
    id: str
    shown: str  # body | hidden | skipped | missing
    text: str


class Fetched(TypedDict):
    memories: list[FetchedMemory]


class Card(TypedDict):
    id: str
    scope: str
    type: str
    text: str


class Cards(TypedDict):
    cards: list[Card]
    skipped: list[Skip]
    more: int  # visible memories not listed (past the first 200): `route` finds them


def build_server(project: str | None = None) -> MCPServer:
    """The server; each call reads the project's memories afresh (edits are seen by the next call)."""

    def workspace() -> Workspace:
        if project is not None and not os.path.isdir(project):  # a typo, or a folder since removed
            raise ToolError(f"--project {gate.file_path(project)} is not a folder: give the project's path")
        return open_workspace(project)

    server = MCPServer(
        "engram", instructions=INSTRUCTIONS, version=version("engram"), log_level="WARNING",
        middleware=[_secrets_withheld],
    )  # fmt: skip

    @server.tool(description=ROUTE_DESCRIPTION)
    def route(task: str, budget_tokens: int | None = None) -> Annotated[CallToolResult, RoutedPack]:
        if budget_tokens is not None and not BUDGET_RANGE[0] <= budget_tokens <= BUDGET_RANGE[1]:
            raise ToolError(f"budget_tokens must be an integer from {BUDGET_RANGE[0]} to {BUDGET_RANGE[1]}")
        if not task.strip():  # "loaded 0" would read as nothing applying; `load` warns of it too
            raise ToolError("route needs a task: what the agent is about to do")
        ws = workspace()
        layers, state = _read(ws)
        _, pack = load_pack(layers, task, ws, state, budget=budget_tokens)  # routed on its first pages
        return _result(render_text(pack, fetch_with=FETCH_BY_TOOL), _routed(pack))

    @server.tool()
    def fetch(ids: list[str]) -> Annotated[CallToolResult, Fetched]:
        """Full bodies by id (as on cards, at most 32; a fetch ranks the memory higher later); hidden ones stay hidden."""
        asked = [i for item in ids for i in item.split(",") if i.strip()]  # ["a,b"] as the card line writes them
        if not asked:  # as `load --id ""` says: an empty answer would read as nothing found
            raise ToolError("fetch names no id")
        if len(asked) > MAX_FETCH:  # counted before any is screened: 50,000 ids took 11 s
            raise ToolError(f"at most {MAX_FETCH} ids at a time ({len(asked)} asked)")
        ws = workspace()
        layers, state = _read(ws)
        asked = list(dict.fromkeys(asked))
        screened = gate.asked_ids(asked)  # two keys pasted are both `(withheld)`: each still gets its answer
        found = dict(zip(dict.fromkeys(screened), fetch_ids(layers, screened, ws, state)))
        memories = [
            FetchedMemory(id=gate.memory_id(f.id), shown=f.shown, text=f.block or f"not found: {gate.memory_id(f.id)}")
            for f in map(found.__getitem__, screened)
        ]
        return _result("\n".join(m["text"] for m in memories), Fetched(memories=memories))

    @server.tool()
    def cards() -> Annotated[CallToolResult, Cards]:
        """One line per visible memory of the project: id, type and directive (the first 200; `route` finds the rest)."""
        ws = workspace()
        layers, _ = _read(ws)
        listed, skipped, lines = [], [], []
        visible = visible_candidates(layers, "1", options_from_config(ws.config))
        for cand in visible[:MAX_CARDS]:
            _, skip = checked_body(cand)  # a card prints the directive or summary: checked with the body
            if skip:
                skipped.append(Skip(id=gate.memory_id(cand.id), path=source_path(cand), label=skip.label))
                continue
            entry = Entry(cand)
            listed.append(Card(id=cand.id, scope=cand.scope, type=cand.row["type"], text=entry.card_text))
            lines.append(card_line(entry))
        lines += [skipped_line(s["path"], s["label"]) for s in skipped]
        more = max(0, len(visible) - MAX_CARDS)
        if more:
            lines.append(f"{more} more memories not listed: call `route` with the task")
        return _result("\n".join(lines), Cards(cards=listed, skipped=skipped, more=more))

    return server


def _read(ws: Workspace) -> tuple[list[Layer], sqlite3.Connection | None]:
    """The layers to answer from; a tool error when there is nothing to answer from yet (no memory
    folder, a first index another engram or this call started building, a clone's index not rebuilt
    yet): "loaded 0" or "not found" would be taken for the truth."""
    if reason := no_memory_folder(ws):
        raise ToolError(f"{reason} (the server reads {ws.root.project})")
    messages: list[str] = []
    layers, state = open_read(ws, None, messages)
    for message in messages:
        warning(message, "engram mcp")
        if message.startswith(ws.root.path) and any(marker in message for marker in NOTHING_SERVED):
            raise ToolError(gate.message(message))
    return layers, state


async def _secrets_withheld(ctx, call_next):
    """Whatever the server answers passes the secret check, errors the SDK writes included: they
    quote what the client sent (an argument that failed validation, an unknown tool's or prompt's
    name). An error the SDK raises as a plain exception (`prompts/get` of a name it does not know)
    is a protocol error too: it went out unchecked, with code 0 and a traceback in the host's log."""
    try:
        return _withheld(await call_next(ctx))
    except MCPError as exc:
        raise MCPError(exc.code, gate.secrets_withheld(exc.error.message)) from None
    except ValueError as exc:
        raise MCPError(INVALID_PARAMS, gate.secrets_withheld(gate.line(str(exc)))) from None


def _withheld(value: object) -> object:
    if isinstance(value, str):
        return gate.secrets_withheld(value)
    if isinstance(value, list):
        return [_withheld(item) for item in value]
    if isinstance(value, dict):
        return {key: _withheld(item) for key, item in value.items()}
    return value


def _routed(pack: Pack) -> RoutedPack:
    entries = [
        PackEntry(id=e.cand.id, scope=e.cand.scope, type=e.cand.row["type"], authority=e.cand.row["authority"],
                  shown=e.shown,
                  tier=e.shown if e.selected else "omitted", relevance=e.cand.judged_relevance,
                  text=with_directive(e.cand.row["directive"], e.body) if e.shown == "body" else e.card_text,
                  requires=e.requires, stale=e.cand.stale)
        for e in pack.entries
    ]  # fmt: skip
    skipped = [Skip(id=gate.memory_id(s.cand.id), path=source_path(s.cand), label=s.label) for s in pack.skipped]
    return RoutedPack(selected=len(pack.selected), total_related=pack.total_related, entries=entries, skipped=skipped,
                      fetch=pack.card_ids)  # fmt: skip


def _result(text: str, structured: Mapping[str, object]) -> CallToolResult:
    """A tool's answer, text and structured content alike through the output gate."""
    return CallToolResult(
        content=[TextContent(type="text", text=gate.text(text))], structured_content=gate.cleaned(dict(structured))
    )


def main(project: str | None = None) -> int:
    """Serve on stdin/stdout until the host closes them. A `--project` the host left unexpanded
    (`${workspaceFolder}`) falls back to the working directory, where the host starts the server;
    any other path that is no folder is each call's error, not another project's memories."""
    # Ctrl-C stops it: the SDK reads stdin in a worker thread, which an interrupt does not end, so the
    # server would stop answering and wait for its input to close. Nothing is left half-written: state.db
    # is written in transactions.
    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(128 + signum))
    if project and "${" in project and not os.path.isdir(project):
        warning(
            f"--project {gate.file_path(project)} was not expanded by the host; serving the working directory's project"
        )
        project = None
    build_server(project).run()
    return 0

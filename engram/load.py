"""`engram load`: the read path from the command line (stdlib only).

Dispatched before typer is imported: agents call it many times a session. The
flags are parsed here, not by argparse: argparse and what it pulls in (gettext,
locale lookups, shutil for the terminal width) cost more than the routing.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import time

from . import gate, terms
from .config import BUDGET_RANGE, user_config_dir
from .index import IndexFileError
from .layers import Layer, open_layers
from .pack import Entry, PackOptions, Screen, build_pack, checked_body, requires_of, screen_text
from .render import body_block, render_dry_run, render_json, render_text, skipped_line, source_path
from .route import Candidate, Options, candidate_by_id, route
from .sources import STATE_FILE
from .state import ScreenCache, fetch_counts, open_state, record_fetches, write_transaction
from .workspace import Workspace, open_workspace

HIDDEN_REASONS = {"ignored": "ignored by .engramignore", "role": "hidden by the role filter"}


class UsageError(Exception):
    """A bad flag value caught after parsing (a range check): exit 1."""


class FlagError(Exception):
    """A flag that cannot be parsed: exit 2, like any usage error."""


# (flag, value name or None for a switch, help); `--id` may repeat, `--disclosure` takes a choice.
FLAGS = (
    ("--dry-run", None, "show the routing and its reasons, no bodies"),
    ("--all", None, "every visible routed match, no compact cap"),
    ("--full", None, "full bodies of the whole pack"),
    ("--json", None, "one JSON object"),
    ("--id", "ID", "fetch these ids (comma-separated; repeatable)"),
    ("--budget-tokens", "N", "cap the whole output (200-16000 tokens)"),
    ("--disclosure", "auto|full", "layered (auto) or full bodies"),
    ("--index", "FILE", "use this prebuilt index file alone"),
)
DISCLOSURES = ("auto", "full")
USAGE = (
    "usage: engram load [--dry-run] [--all] [--full] [--json] [--id ID] [--budget-tokens N]\n"
    "                   [--disclosure auto|full] [--index FILE] [TASK ...]\n"
)


class LoadArgs:
    __slots__ = ("task", "dry_run", "all", "full", "json", "id", "budget_tokens", "disclosure", "index")

    def __init__(self) -> None:
        self.task: list[str] = []
        self.dry_run = self.all = self.full = self.json = False
        self.id: list[str] = []
        self.budget_tokens: str | None = None
        self.disclosure: str | None = None
        self.index: str | None = None


def help_text() -> str:
    lines = [USAGE, "Print the context pack for a task (TASK: the task, prompt or question).", "", "options:"]
    for flag, value, text in FLAGS:
        lines.append(f"  {flag + (' ' + value if value else ''):<24}{text}")
    lines.append(f"  {'-h, --help':<24}show this help and exit")
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str]) -> LoadArgs:
    """The flags and task words, in any order; ``--`` ends the flags. Unique prefixes of a flag
    are accepted (``--dry``), as argparse does."""
    args, words = LoadArgs(), iter(argv)
    for word in words:
        if word == "--":
            args.task += words
        elif not word.startswith("--"):
            args.task.append(word)
        else:
            name, has_value, value = word.partition("=")
            flag, wants = _flag(name)
            if wants is None:
                if has_value:
                    raise FlagError(f"argument {flag}: ignored explicit argument '{gate.line(value)}'")
                setattr(args, _attribute(flag), True)
                continue
            if not has_value:
                value = next(words, None)
                if value is None or value.startswith("--"):
                    raise FlagError(f"argument {flag}: expected one argument")
            _set_value(args, flag, value)
    return args


def _flag(name: str) -> tuple[str, str | None]:
    matches = [(flag, value) for flag, value, _ in FLAGS if flag.startswith(name)]
    exact = [m for m in matches if m[0] == name]
    if exact or len(matches) == 1:
        return (exact or matches)[0]
    if matches:
        raise FlagError(f"ambiguous option: {gate.line(name)} could match {', '.join(flag for flag, _ in matches)}")
    raise FlagError(f"unrecognized arguments: {gate.line(name)}")


def _attribute(flag: str) -> str:
    return flag[2:].replace("-", "_")


def _set_value(args: LoadArgs, flag: str, value: str) -> None:
    if flag == "--id":
        args.id.append(value)
    elif flag == "--index":
        args.index = value
    elif flag == "--disclosure" and value not in DISCLOSURES:
        choices = ", ".join(f"'{choice}'" for choice in DISCLOSURES)
        raise FlagError(f"argument --disclosure: invalid choice: '{gate.line(value)}' (choose from {choices})")
    else:
        setattr(args, _attribute(flag), value)


def clean_text(text: str) -> str:
    """Arguments with undecodable bytes become text with replacement characters."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def parse_budget(raw: str | None) -> int | None:
    if raw is None:
        return None
    low, high = BUDGET_RANGE
    text = raw.strip()
    if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
        raise UsageError(f"--budget-tokens must be an integer from {low} to {high}")
    return int(text)


def main(argv: list[str]) -> int:
    argv = [clean_text(a) for a in argv]
    flags = argv[: argv.index("--")] if "--" in argv else argv
    if "-h" in flags or "--help" in flags:
        sys.stdout.write(help_text())
        return 0
    try:
        args = parse_args(argv)
    except FlagError as exc:
        print(f"engram: error: {exc}", file=sys.stderr)
        return 2
    try:
        budget = parse_budget(args.budget_tokens)
    except UsageError as exc:
        print(f"engram: error: {exc}", file=sys.stderr)
        return 1
    ws = open_workspace()
    try:
        return _run(args, budget, ws)
    except IndexFileError as exc:
        print(f"engram: error: {exc}", file=sys.stderr)
        return 1
    except (sqlite3.DatabaseError, MemoryError) as exc:  # SQLite reports some damaged pages as out of memory
        if args.index is None and _rebuild(ws):
            return _run(args, budget, ws)
        paths = args.index or ", ".join(str(root.index_path) for root in ws.roots)
        print(f"engram: error: {paths}: corrupt index ({exc}); run `engram index`", file=sys.stderr)
        return 1


def _rebuild(ws: Workspace) -> bool:
    """A damaged page behind a valid header shows up only when read: rebuild the roots once."""
    from .compile import compile_root
    from .layers import REFRESH_BUDGET_S

    try:
        for root in ws.roots:
            for line in compile_root(root, ws.config, deadline=time.monotonic() + REFRESH_BUDGET_S).repaired:
                print(f"engram: warning: {line}", file=sys.stderr)
    except (OSError, sqlite3.DatabaseError):
        return False
    return True


def _run(args: LoadArgs, budget: int | None, ws: Workspace) -> int:
    messages: list[str] = []
    state = _open_state(ws.root.state_path if os.path.isdir(ws.root.path) else os.path.join(user_config_dir(), STATE_FILE))
    layers = open_layers(ws, args.index, messages, state)
    for message in messages:
        print(f"engram: warning: {gate.line(message)}", file=sys.stderr)
    ids = [i.strip().lower() for raw in args.id for i in raw.split(",") if i.strip()]
    if ids:
        return _fetch(layers, ids, ws, state)
    return _load(layers, " ".join(args.task), args, budget, ws, state)


def _open_state(path: str) -> sqlite3.Connection | None:
    """state.db (fetch counts, screened texts), created where its folder exists; None where it cannot be."""
    if not os.path.isdir(os.path.dirname(path)):
        return None
    try:
        return open_state(path)
    except (sqlite3.Error, OSError):
        return None  # a read-only folder: load works without the boost and the screen cache


def _screen(state: sqlite3.Connection | None) -> Screen:
    return ScreenCache(state) if state is not None else screen_text


def _batched(state: sqlite3.Connection | None):
    return write_transaction(state, "DEFERRED") if state is not None else contextlib.nullcontext()


def _options(ws: Workspace, everything: bool, explain: bool, state: sqlite3.Connection | None) -> Options:
    counts = fetch_counts(state) if state is not None else {}
    return Options(
        limit=ws.config.get("load.limit"),
        roles=tuple(ws.config.get("roles")),
        include_low=everything,
        everything=everything,
        explain=explain,
        fetch_counts=counts,
    )


def _load(
    layers: list[Layer], query: str, args: LoadArgs, budget: int | None, ws: Workspace, state: sqlite3.Connection | None
) -> int:
    options = _options(ws, args.all, args.dry_run or args.json, state)
    routing = route(layers, query, options)
    layered = not (args.all or args.full or (args.disclosure or ws.config.get("load.disclosure")) == "full")
    if budget is None and layered:
        budget = ws.config.get("load.budget_tokens")
    limit = None if args.all else options.limit
    pack_options = PackOptions(
        limit=limit, expand_top=ws.config.get("load.expand_top"), layered=layered, budget=budget, screen=_screen(state)
    )
    with _batched(state):  # verdicts the screen keeps: one commit
        pack = build_pack(routing, options, pack_options, lambda p: terms.estimate_tokens(render_text(p)))
    if args.json:
        sys.stdout.write(render_json(routing, pack))
    elif args.dry_run:
        sys.stdout.write(render_dry_run(routing, pack))
    else:
        sys.stdout.write(render_text(pack))
    return 0


def _find(layers: list[Layer], memory_id: str, options: Options) -> Candidate | None:
    """The first layer holding the id wins: the workspace copy over the global one."""
    for layer in layers:
        cand = candidate_by_id(layer, memory_id, options)
        if cand is not None:
            return cand
    return None


def _fetch(layers: list[Layer], ids: list[str], ws: Workspace, state: sqlite3.Connection | None) -> int:
    """`load --id a,b`: full bodies, still hidden when ignored or role-filtered."""
    options = Options(roles=tuple(ws.config.get("roles")), include_low=True)
    screen = _screen(state)
    with _batched(state):
        blocks, fetched, missing = _fetched_blocks(layers, ids, options, screen)
    if fetched and state is not None:
        record_fetches(state, fetched)
    if blocks:
        sys.stdout.write(gate.text("\n".join(blocks) + "\n"))
    return 1 if missing == len(dict.fromkeys(ids)) else 0


def _fetched_blocks(
    layers: list[Layer], ids: list[str], options: Options, screen: Screen
) -> tuple[list[str], list[tuple[str, str]], int]:
    """The printed blocks, the (scope, id) fetched, and how many ids were not found."""
    blocks, fetched, missing = [], [], 0
    for memory_id in dict.fromkeys(ids):
        cand = _find(layers, memory_id, options)
        if cand is None:
            print(f"engram: not found: {gate.line(memory_id)}", file=sys.stderr)
            missing += 1
            continue
        if cand.reason in HIDDEN_REASONS:
            blocks.append(f"hidden {gate.name(memory_id)}: {HIDDEN_REASONS[cand.reason]}")
            continue
        body, skip = checked_body(cand, screen)
        if skip:
            blocks.append(skipped_line(source_path(cand), skip.label))
            continue
        blocks.append(body_block(Entry(cand, shown="body", body=body, requires=requires_of(cand))))
        fetched.append((cand.scope, cand.id))
    return blocks, fetched, missing


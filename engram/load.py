"""`engram load`: the read path from the command line, its flags parsed here, not by argparse (stdlib only)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import time
from collections import namedtuple

from . import gate
from .autowatch import start_watcher
from .config import BUDGET_RANGE, user_config_dir
from .errors import EngramError, say, warning
from .index import LOCAL_REBUILD, SHARED_REBUILD, SHARED_REPLACE, IndexFileError
from .layers import Layer, invalid_note, open_layers
from .pack import Entry, Pack, Screen, checked_body, requires_of
from .printable import decoded
from .render import (
    body_block,
    fetch_command,
    render_dry_run,
    render_fetched_json,
    render_json,
    render_text,
    skipped_line,
    source_path,
)
from .route import Options, Routing, first_by_id
from .select import options_from_config, pack_options_from_config, select_pack
from .sources import ROOT_DIR, STATE_FILE
from .state import batched, fetch_counts, record_fetches, screen_with, state_or_none
from .workspace import Workspace, open_workspace

HIDDEN_REASONS = {"ignored": "ignored by .engramignore", "role": "hidden by the role filter"}


class UsageError(EngramError):
    """A bad flag value caught after parsing (a range check): exit 1."""


class FlagError(EngramError):
    """A flag that cannot be parsed: exit 2, like any usage error."""

    exit_code = 2


# (flag, value name or None for a switch, help); `--id` may repeat, `--disclosure` takes a choice.
FLAGS = (
    ("--dry-run", None, "show the routing and its reasons, no bodies"),
    ("--all", None, "every visible routed match, no compact cap"),
    ("--full", None, "full bodies of the whole pack"),
    ("--json", None, "one JSON object"),
    ("--id", "ID", "fetch these ids (comma-separated; repeatable); a retired one says (archived), ..."),
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


UNREADABLE = (sqlite3.DatabaseError, MemoryError)  # SQLite reports some damaged pages as out of memory


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
                following = next(words, None)
                if following is None or following.startswith("--"):
                    raise FlagError(f"argument {flag}: expected one argument")
                value = following
            _set_value(args, flag, value)
    return args


def _flag(name: str) -> tuple[str, str | None]:
    matches = [(flag, value) for flag, value, _ in FLAGS if flag.startswith(name)]
    exact = [m for m in matches if m[0] == name]
    if exact or len(matches) == 1:
        return (exact or matches)[0]
    if matches:
        raise FlagError(f"ambiguous option: {gate.line(name)} could match {', '.join(flag for flag, _ in matches)}")
    hint = (
        ' (a task that starts with "--" goes after a lone --: engram load -- "<task>")' if " " in name.strip() else ""
    )
    raise FlagError(f"unrecognized arguments: {gate.line(name)}{hint}")


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


def parse_budget(raw: str | None) -> int | None:
    if raw is None:
        return None
    low, high = BUDGET_RANGE
    text = raw.strip()
    if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
        raise UsageError(f"--budget-tokens must be an integer from {low} to {high}")
    return int(text)


def main(argv: list[str]) -> int:
    argv = [decoded(a) for a in argv]  # undecodable bytes as U+FFFD
    flags = argv[: argv.index("--")] if "--" in argv else argv
    if "-h" in flags or "--help" in flags:
        sys.stdout.write(help_text())
        return 0
    args = parse_args(argv)
    budget = parse_budget(args.budget_tokens)
    ws = open_workspace()
    try:
        return _run(args, budget, ws)
    except UNREADABLE as exc:
        return _recover(args, budget, ws, exc)
    finally:
        start_watcher(ws)  # hooks.start_watch: the next call is answered by a watcher


def _recover(args: LoadArgs, budget: int | None, ws: Workspace, exc: BaseException) -> int:
    """A load that failed reading an index: without the shared index (a file copied over it while
    it was read), else with the roots rebuilt once; else one line."""
    if args.index is not None:
        raise IndexFileError(f"{args.index}: corrupt index ({exc}); {SHARED_REBUILD}") from None
    if ws.global_index_path:
        with contextlib.suppress(*UNREADABLE):
            code = _run(args, budget, ws, with_shared=False)
            warning(f"global index not used: {ws.global_index_path}: {exc} while it was read; {SHARED_REPLACE}")
            return code
    if _rebuild(ws):
        with contextlib.suppress(*UNREADABLE):
            return _run(args, budget, ws)
    paths = ", ".join(str(root.index_path) for root in ws.roots)
    raise IndexFileError(f"{paths}: corrupt index ({exc}); {LOCAL_REBUILD}") from None


def _rebuild(ws: Workspace) -> bool:
    """A damaged page behind a valid header shows up only when read: rebuild the roots once."""
    from .compile import compile_root
    from .layers import REFRESH_BUDGET_S

    try:
        for root in ws.roots:
            for line in compile_root(root, ws.config, deadline=time.monotonic() + REFRESH_BUDGET_S).repaired:
                warning(line)
    except (OSError, sqlite3.DatabaseError):
        return False
    return True


def _run(args: LoadArgs, budget: int | None, ws: Workspace, with_shared: bool = True) -> int:
    messages: list[str] = []
    layers, state = open_read(ws, args.index, messages, with_shared)
    for message in messages:
        warning(message)
    ids = gate.asked_ids([i for raw in args.id for i in raw.split(",")])
    if ids:
        return _fetch(layers, ids, ws, state, args.json)
    if args.id and not args.task:  # `--id ''` or `--id ,,`: what was asked for is no id
        raise EngramError("--id names no id: engram load --id a,b", 2)
    if reason := _nothing_to_route(args, ws):  # the count line still comes: scripts read it
        warning(reason)
    return _load(layers, " ".join(args.task), args, budget, ws, state)


def no_memory_folder(ws: Workspace) -> str | None:
    """Why nothing can load here whatever the task: no memory folder, the project's or the global one."""
    if not any(os.path.isdir(root.path) for root in ws.roots):
        return f"no {ROOT_DIR} here or above and no global folder: nothing to load; `engram init` creates one"
    return None


def _nothing_to_route(args: LoadArgs, ws: Workspace) -> str | None:
    """Why a load will pack nothing whatever the memories say, for the person at the terminal."""
    if args.index is None and (reason := no_memory_folder(ws)):
        return reason
    if not " ".join(args.task).strip():
        return 'no task given: engram load "<task>"'
    return None


def open_read(
    ws: Workspace, index_file: str | None, messages: list[str], with_shared: bool = True
) -> tuple[list[Layer], sqlite3.Connection | None]:
    """The layers to read and the state.db beside them (None where it cannot be opened); warnings go to `messages`."""
    state_path = ws.root.state_path if os.path.isdir(ws.root.path) else os.path.join(user_config_dir(), STATE_FILE)
    state = state_or_none(state_path)
    return open_layers(ws, index_file, messages, state, with_shared), state


def _load(
    layers: list[Layer], query: str, args: LoadArgs, budget: int | None, ws: Workspace, state: sqlite3.Connection | None
) -> int:
    routing, pack = load_pack(layers, query, ws, state, everything=args.all, explain=args.dry_run or args.json,
                              full=args.full, disclosure=args.disclosure, budget=budget)  # fmt: skip
    fetch_with = fetch_command(args.index)
    if args.json:
        sys.stdout.write(render_json(routing, pack, fetch_with))
    elif args.dry_run:
        sys.stdout.write(render_dry_run(routing, pack))
    else:
        sys.stdout.write(render_text(pack, fetch_with))
    return 0


def load_pack(
    layers: list[Layer],
    query: str,
    ws: Workspace,
    state: sqlite3.Connection | None,
    *,
    everything: bool = False,
    explain: bool = False,
    full: bool = False,
    disclosure: str | None = None,
    budget: int | None = None,
) -> tuple[Routing, Pack]:
    """The routing and pack `engram load` prints for a query: the config's limit, roles, disclosure and token
    budget, unless `everything` (--all), `full` (--full), `disclosure` or `budget` say otherwise."""
    counts = fetch_counts(state) if state is not None else {}
    options = options_from_config(ws.config, everything, explain, counts)
    pack_options = pack_options_from_config(ws.config, everything, full, disclosure, budget, screen_with(state))
    with batched(state):  # verdicts the screen keeps: one commit
        return select_pack(layers, query, options, pack_options)


def _fetch(layers: list[Layer], ids: list[str], ws: Workspace, state: sqlite3.Connection | None, as_json: bool) -> int:
    """`load --id a,b`: full bodies, still hidden when ignored or role-filtered; with --json, one object."""
    found = fetch(layers, ids, ws, state)
    code = 1 if all(item.shown == "missing" for item in found) else 0
    if as_json:
        sys.stdout.write(render_fetched_json([(item.id, item.shown, item.block or "") for item in found]))
        return code
    for asked, item in zip(dict.fromkeys(ids), found):
        if item.shown == "missing":
            say(f"not found: {_as_asked(asked, item.id)}{invalid_note(layers, asked)}")
    blocks = [item.block for item in found if item.block]
    if blocks:
        sys.stdout.write(gate.text("\n".join(blocks) + "\n"))
    return code


def _as_asked(asked: str, shown: str) -> str:
    """An id asked for as `not found` names it; a value that is no id is never echoed, and said to be
    none (`決済` read as `(withheld)`, as if something were hidden); one the screen flags stays withheld."""
    if shown != gate.WITHHELD or asked == gate.WITHHELD:
        return shown
    return "a value that is no id (ids hold a-z, 0-9, '.', '_' and '-')"


class Fetched(namedtuple("Fetched", "id cand shown block")):
    """One id asked for: ``shown`` is body | hidden | skipped | missing, ``block`` the text `load --id` prints."""

    __slots__ = ()


def fetch(layers: list[Layer], ids: list[str], ws: Workspace, state: sqlite3.Connection | None) -> list[Fetched]:
    """Each id once, in order, through the hash and safety checks; the bodies shown count as fetches."""
    options = options_from_config(ws.config, include_low=True)
    screen = screen_with(state)
    with batched(state):
        found = [_fetch_one(layers, memory_id, options, screen) for memory_id in dict.fromkeys(ids)]
    fetched = [(item.cand.scope, item.cand.id) for item in found if item.shown == "body"]
    if fetched and state is not None:
        record_fetches(state, fetched)
    return found


def _fetch_one(layers: list[Layer], memory_id: str, options: Options, screen: Screen) -> Fetched:
    cand = first_by_id(layers, memory_id, options)
    if cand is None:  # the id as asked, unless it is no id or the screen flags it (a pasted token)
        return Fetched(gate.memory_id(memory_id), None, "missing", None)
    if cand.omission in HIDDEN_REASONS:
        return Fetched(
            memory_id, cand, "hidden", f"hidden {gate.memory_id(memory_id)}: {HIDDEN_REASONS[cand.omission]}"
        )
    body, skip = checked_body(cand, screen)
    if skip:
        return Fetched(memory_id, cand, "skipped", skipped_line(source_path(cand), skip.label))
    return Fetched(
        memory_id, cand, "body", body_block(Entry(cand, shown="body", body=body, requires=requires_of(cand)))
    )

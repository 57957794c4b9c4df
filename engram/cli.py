"""The typer app for the commands that are not on the hot path.

`load` and `hook` are dispatched before this module is imported (see
entry.py); they appear here so `engram --help` lists them. Heavy imports
stay inside the command functions.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer

from . import gate
from .config import LIMIT_RANGE, update_config_file
from .errors import EngramError, error, out, warning
from .hosts import HOSTS, other_tools_rules
from .paths import shown_path, write_atomic
from .sources import GENERATED_FILES, MEMORY_FOLDERS, walk_memory_files
from .workspace import Workspace, open_workspace

# Not `pip install 'engram[mcp]'`: that would fetch the unrelated `engram` of PyPI, and pipx and uv
# installs have environments of their own. The extra goes where engram itself was installed from.
MCP_SDK = "the MCP SDK in engram's own environment: install engram again with its extra, e.g. pipx install --force './engram[mcp]'"
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    # plain click help, as docs/commands.md shows it: typer's boxes put `<bool>` after every flag
    rich_markup_mode=None,
    help="engram: the right project memory for AI coding agents, at the right moment.",
)

ROOT_GITIGNORE = "".join(f"{name}\n" for name in GENERATED_FILES)
HOST_NAMES = ", ".join(HOSTS)
ENGRAMIGNORE = (
    "# Memories matched here are never shown. Gitignore syntax, matched against a memory's path\n"
    "# inside .agents/.engram/ (knowledge/old-*.md), not against project paths.\n"
)

FIRST_MEMORY = """write a memory, e.g. {root}/rules/no-secrets.md:
       ---
       id: no-secrets
       tags: [security, secrets]
       directive: Never commit secrets; use the team vault.
       ---
       Read API keys and passwords from the environment; the vault path is in docs/vault.md.
  2. engram load "where should the api keys go"   # the pack an agent gets for that task"""
MEMORIES_FOUND = """engram index                                 # compiles the {count} memory files found; names any problem
  2. engram load "<a task you give an agent>"      # the pack an agent gets for that task"""
LATER_STEPS = """
  3. engram link claude                           # or codex, gemini, cursor: hooks load memories as the agent works
  4. commit .agents/ and .claude/, and run `engram check` in CI"""


def next_steps(root: str, memory_files: int) -> str:
    """What to do after `init`: write a first memory, or compile the ones the folder holds."""
    first = MEMORIES_FOUND.format(count=memory_files) if memory_files else FIRST_MEMORY.format(root=root)
    return f"\nnext steps:\n  1. {first}{LATER_STEPS}"


def run(argv: list[str]) -> int:
    """The typer commands' exit code; a usage error is one line, as `load`'s are (typer would draw
    a box of five)."""
    try:
        code = app(args=argv, prog_name="engram", standalone_mode=False)
    except typer.Abort:
        return 1
    except typer.TyperException as exc:  # click's usage errors, as typer ships click
        ctx = getattr(exc, "ctx", None)
        if "\n" in exc.format_message():  # the help itself (`engram` with no command), on stderr as click shows it
            print(gate.text(exc.format_message()), file=sys.stderr)
        else:
            error(f"{exc.format_message()} (`{ctx.command_path if ctx else 'engram'} -h` says how)")
        return getattr(exc, "exit_code", 2)
    return code if isinstance(code, int) else 0


def _print_version(wanted: bool) -> None:
    if wanted:
        from importlib.metadata import version

        out(f"engram {version('engram')}")
        raise typer.Exit()


@app.callback()
def main(
    _version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """The options every command shares."""


@app.command()
def init() -> None:
    """Create .agents/.engram/{rules,skills,knowledge}, config, .gitignore and .engramignore."""
    ws = open_workspace()
    root = Path(ws.root.path)
    created = []
    if os.path.lexists(root) and not root.is_dir():
        raise EngramError(
            f"{shown_path(str(root), ws.root.project)} is not a folder (a file or a broken link); move it away first"
        )
    for folder in MEMORY_FOLDERS:
        path = root / folder
        if not path.is_dir():
            try:
                path.mkdir(parents=True)
            except OSError as exc:  # `.agents/.engram` a file, a dangling link, a read-only folder
                raise EngramError(f"cannot create {shown_path(str(path), ws.root.project)}: {exc.strerror}") from None
            created.append(path)
    defaults = {
        Path(ws.root.config_path): json.dumps({"load": {"limit": 8}}, indent=2) + "\n",
        root / ".gitignore": ROOT_GITIGNORE,
        Path(ws.root.ignore_path): ENGRAMIGNORE,
    }
    for path, text in defaults.items():
        if not path.exists():
            write_atomic(str(path), text)
            created.append(path)
    for path in created:
        out(f"created {shown_path(str(path), ws.root.project)}")
    shown_root = os.path.relpath(ws.root.path)  # as typed from here: `init` may run in a sub-folder
    out(f"engram root: {shown_root}" + ("" if created else " (already set up)"))
    found = other_tools_rules(ws.root.project)
    if found:
        out(f"rules in other tools' formats: {', '.join(found)}; engram's docs/adopting.md says how to bring them in")
    memory_files = sum(1 for source in walk_memory_files(ws.root) if not source.problem)  # as `index` walks them
    out(next_steps(shown_root, memory_files))


@app.command()
def index(
    output: Path | None = typer.Option(None, "--output", help="Also write a self-contained, shareable index file."),
    scope: str = typer.Option("workspace", "--scope", help="Root written by --output: workspace or global."),
    sign_key: Path | None = typer.Option(
        None, "--sign-key", help="Sign the --output file with this ed25519 key (needs the sign extra)."
    ),
) -> None:
    """Compile the memory roots into their index (incremental, atomic)."""
    from .commands import run_index

    raise typer.Exit(run_index(output, scope, sign_key))


@app.command()
def watch(
    idle_exit: int | None = typer.Option(
        None, "--idle-exit", min=1, metavar="SECONDS", help="Stop after this many seconds without a load or hook."
    ),
) -> None:
    """Keep the workspace index current from file events and answer load and hooks from this process (Linux); Ctrl-C stops."""
    from .watch import serve

    raise typer.Exit(serve(open_workspace(), idle_exit))


@app.command()
def check(as_json: bool = typer.Option(False, "--json", help="Print the findings as JSON.")) -> None:
    """CI gate, on a fresh clone too: exit 1 when a memory is invalid or flagged, or a generated file is not what `engram index` writes now."""
    from .commands import run_check

    raise typer.Exit(run_check(as_json))


@app.command()
def verify(index_file: Path | None = typer.Option(None, "--index", help="Verify this index file.")) -> None:
    """Integrity of an index: schema, full-text index, hashes of stored bodies."""
    from .commands import run_verify

    raise typer.Exit(run_verify(index_file))


@app.command()
def graph(
    task: str | None = typer.Argument(None, help="Only the memories this task routes to, with their prerequisites."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Recompile the index first."),
) -> None:
    """The dependency graph: node and edge counts, dependency layers, cycles."""
    from .commands import run_graph

    raise typer.Exit(run_graph(task, rebuild))


@app.command("set-load-limit", context_settings={"ignore_unknown_options": True})
def set_load_limit(value: str = typer.Argument(..., help="N (1-32), status, or reset.")) -> None:
    """Set how many memories a load keeps (default 8)."""
    ws = open_workspace()
    low, high = LIMIT_RANGE
    if value not in ("status", "reset"):
        if not value.isdigit() or not low <= int(value) <= high:
            raise EngramError(f"set-load-limit must be an integer from {low} to {high}")
        update_config_file(ws.root.config_path, "load.limit", int(value))
    elif value == "reset":
        update_config_file(ws.root.config_path, "load.limit", None)
    limit = open_workspace().config.get("load.limit")
    out(f"Load limit: {limit} (default 8, range {low}-{high})")


def _host_command(
    host: str, global_: bool, unlinking: bool, engram_command: str | None = None, mcp: bool = False
) -> None:
    from . import link as host_link
    from .config import user_config_dir

    if host not in HOSTS:
        raise EngramError(f"unknown host '{host}' (one of {HOST_NAMES})", 2)
    if engram_command is not None and not host_link.names_engram(engram_command):
        raise EngramError("--command must run engram (`engram`, /path/to/engram, python -m engram, a wrapper of it)", 2)
    ws = open_workspace()
    project = Path(ws.root.project)
    backups = Path(user_config_dir()) / "link-backups"
    command = None  # what a link writes for the host to run
    if unlinking:
        hooks, server = host_link.unlink(host, project, global_=global_, backup_dir=backups)
        results = [hooks, *([server] if server.changed else [])]
    else:
        given = engram_command and host_link.EngramCommand(engram_command, "given with --command")
        command = given or host_link.engram_command(global_)
        results = host_link.link(
            host, project, global_=global_, engram_command=command.command, backup_dir=backups, mcp=mcp
        )
    changed: dict[Path, bool] = {}  # one line per file (Gemini keeps hooks and MCP servers in one)
    for result in results:
        changed[result.path] = changed.get(result.path, False) or result.changed
    for path, was_changed in changed.items():
        verb = ("unlinked" if unlinking else "linked") if was_changed else "unchanged"
        out(f"{verb} {host}: {path}")
    if command is not None:
        out(gate.line(f"{host} runs: {command.command} ({command.reason})"))
    for message in (m for result in results for m in result.messages):
        out(message)
    for line in (w for result in results for w in result.warnings):
        warning(line)
    for note in _native_rules_note(host, ws, unlinking, global_):
        out(note)
    if not unlinking:
        _mcp_advice(host, mcp)


def _native_rules_note(host: str, ws: Workspace, unlinking: bool, global_: bool) -> list[str]:
    """What the link changes in the host's native rule files. A project link decides whether they are
    written (unless `hooks.native` names the host), so with an index there it brings them in line at once,
    as `engram index` would; a user-level link, not committed, does not count."""
    from . import native_rules

    rules, config = HOSTS[host].rules, ws.config
    if rules is None or config.get("hooks.path_rules") != "native" or host in config.get("hooks.native"):
        return []
    if global_:
        only_where = f"only in projects that link {host} or name it in hooks.native"
        return [] if unlinking else [f"native rule files ({rules.folder}/) are written {only_where}"]
    if not os.path.exists(ws.root.index_path):
        return [] if unlinking else [f"`engram index` writes its native rule files ({rules.folder}/)"]
    synced = native_rules.sync(ws.root, config)
    for line in synced.warnings:
        warning(line)
    return [synced.summary] if synced.summary else []


def _mcp_advice(host: str, mcp: bool) -> None:
    """Cursor's hooks cannot add context to a prompt: its routed memories come through MCP."""
    import importlib.util

    if not mcp and "prompt" not in HOSTS[host].actions.values():
        out(f"{host} hooks cannot add context to a prompt: `engram link {host} --mcp` also registers "
                   "engram's MCP server, through which the agent routes each task.")  # fmt: skip
    if mcp and importlib.util.find_spec("mcp") is None:
        out(f"engram mcp needs {MCP_SDK}")


@app.command()
def link(
    host: str = typer.Argument(..., help=f"One of {HOST_NAMES}."),
    global_: bool = typer.Option(False, "--global", help="Write the user-level config instead of the project's."),
    command: str | None = typer.Option(
        None,
        "--command",
        help="What the host runs for engram (default: `engram` or `python3 -m engram` from PATH; "
        "with --global, its absolute path).",
    ),
    mcp: bool = typer.Option(False, "--mcp", help="Also register `engram mcp` in the host's MCP config."),
) -> None:
    """Install engram's hooks for a host, keeping every other entry."""
    _host_command(host, global_, unlinking=False, engram_command=command, mcp=mcp)


@app.command()
def unlink(
    host: str = typer.Argument(..., help=f"One of {HOST_NAMES}."),
    global_: bool = typer.Option(False, "--global", help="Edit the user-level config instead of the project's."),
) -> None:
    """Remove engram's hooks and MCP server; restores each file byte for byte when nothing else changed."""
    _host_command(host, global_, unlinking=True)


@app.command()
def benchmark(
    fixture: Path = typer.Argument(
        ...,
        help="JSON list of {query, expect, accept, lang}: expect, the ids that must load (empty: an off-topic task,"
        " silent only when nothing loads); accept, ids also fine to load (counted as relevant by precision); lang,"
        " optional, a group the report also gives numbers for.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the numbers as JSON."),
    show_misses: bool = typer.Option(
        False,
        "--misses",
        help="List the queries that missed an expected id, loaded one off-topic, or loaded one neither"
        " expected nor accepted, and why.",
    ),
) -> None:
    """Routing quality on labelled queries: hit@pack, recall@pack, MRR, precision, off-topic silence."""
    from .benchmark import format_report, run_benchmark

    if not fixture.is_file():
        raise EngramError(f"{fixture}: no such fixture file")
    report = run_benchmark(fixture)
    if unknown := report["unknown_ids"]:
        shown = ", ".join(unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        warning(f"the fixture names ids no memory here has ({len(unknown)}): {shown}")
    if as_json:
        out(json.dumps(report, indent=2, ensure_ascii=False))
        return
    out(format_report(report), end="")
    if show_misses:
        for miss, reasons in zip(report["misses"], report["miss_reasons"]):
            out(f"  {gate.line(miss)}")
            for reason in reasons:
                out(f"      {reason}")


@app.command()
def mcp(
    project: Path | None = typer.Option(
        None, "--project", help="The project to serve (default: the working directory's)."
    ),
) -> None:
    """Serve engram over MCP on stdin/stdout: route a task, fetch memories by id, list the cards."""
    try:
        from .mcp_server import main as mcp_main
    except ImportError as error:
        if not (error.name or "").startswith("mcp"):
            raise
        raise EngramError(f"engram mcp needs {MCP_SDK}") from None
    raise typer.Exit(mcp_main(str(project) if project else None))


@app.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True}, add_help_option=False)
def load(ctx: typer.Context) -> None:
    """Print the context pack for a task (see `engram load --help`)."""
    from .load import main as load_main

    raise typer.Exit(load_main(list(ctx.args)))


@app.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True}, add_help_option=False)
def hook(ctx: typer.Context) -> None:
    """Host hook adapter: host JSON on stdin, one JSON object on stdout, always exit 0."""
    from .hook import main as hook_main

    raise typer.Exit(hook_main(list(ctx.args)))

"""Install and remove engram's hook entries (and its MCP server) in a host's config files.

`link` merges engram's handlers into the host's JSON config and keeps every
other key and entry; with `mcp=True` it does the same for the `engram mcp`
server entry in the host's MCP config (JSON `mcpServers`, or a
`[mcp_servers.engram]` table in Codex's config.toml). `unlink` takes both out
again. Each changes every file or none: the files are edited in memory and
written once every step has succeeded. engram's own entries are exactly what
`link` writes (`_is_engram_handler`, `_is_engram_server`); any other entry,
one that wraps or configures engram included, is the user's and stays as it is.
Before the first write, `link` saves a backup record (the original bytes, or
the fact that the file did not exist, plus the sha256 of what it wrote). If
the file is still exactly what `link` wrote, `unlink` restores the original
byte for byte; otherwise it removes engram's entries structurally and keeps
the user's later edits.
A project's config is committed, so its entries run `engram` (or `python3 -m
engram`) from PATH; a user-level one names this machine's engram by its path.
Stdlib only (`tomllib` reads TOML; engram's table is written as text).
`engram index` asks `is_linked` which hosts get native rule files, so the
modules only `link` needs (tomllib brings typing; shutil, subprocess) are
imported where they are used, and no dataclasses.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shlex
import sys
from collections import namedtuple
from pathlib import Path

from .errors import EngramError
from .hosts import HOSTS as host_registry
from .hosts.base import HookFile, Host
from .paths import read_bytes, write_atomic

HOSTS = tuple(host_registry)
PYTHONS = ("python3", "python")  # the names a portable `python -m engram` command may use
MAX_DEPTH = 100  # host settings nest a few levels; a rewrite of deeper ones would exhaust the recursion limit
MCP_NAME = "engram"  # the server's name in the hosts' MCP configs
# engram's table in a config.toml: the blank line link puts before it, its header and its key lines (blank lines
# between them, not after them: those belong to what follows)
TOML_TABLE = re.compile(
    rf"^(?:[ \t]*\r?\n)?\[mcp_servers\.{MCP_NAME}\][ \t]*\r?\n(?:(?:[ \t]*\r?\n)*(?![ \t]*\[)[ \t]*\S.*(?:\n|$))*",
    re.MULTILINE,
)


class LinkError(EngramError):
    """A config file engram will not touch; the message is one line naming it."""


# messages: what the user should know (a trust step); warnings: what link kept that will not do what they may expect
LinkResult = namedtuple("LinkResult", "path changed messages warnings", defaults=((),))


# --- public API --------------------------------------------------------------


class EngramCommand(namedtuple("EngramCommand", "command reason")):
    """What a host runs for engram, and why `link` wrote that (it says so)."""

    __slots__ = ()


def engram_command(global_: bool) -> EngramCommand:
    """The command a link writes: one that runs on any machine with engram installed for a project's config,
    which teams commit; this machine's absolute path for a user-level (--global) one."""
    portable = None if global_ else portable_engram_command()
    if portable is not None:
        return portable
    reason = (
        "this machine's path, for a user-level config"
        if global_
        else (
            "this machine's path: neither `engram` nor a python that has engram is on PATH here; "
            "put engram on PATH and link again before you commit the config"
        )
    )
    return EngramCommand(absolute_engram_command(), reason)


def portable_engram_command() -> EngramCommand | None:
    """`engram` when PATH has the script, else `python3 -m engram` (or `python`) when PATH's python has the module."""
    import shutil

    found = shutil.which("engram")
    if found:
        return EngramCommand("engram", f"portable: on PATH here as {found}")
    for python in PYTHONS:
        found = shutil.which(python)
        if found and _imports_engram(found):
            return EngramCommand(f"{python} -m engram", f"portable: no engram script on PATH, {found} has the module")
    return None


def absolute_engram_command() -> str:
    """This machine's engram by absolute path, so no shell shim slows every hook."""
    import shutil

    found = shutil.which("engram")
    if found:
        return _quote(os.path.abspath(found))
    argv0 = Path(sys.argv[0])
    if argv0.stem == "engram":
        return _quote(str(argv0.resolve()))
    return f"{_quote(sys.executable)} -m engram"


def is_linked(host: str, project: Path) -> bool:
    """Whether the project's hook config for `host` runs engram's hook, as `link` writes it or wrapped
    (`link --command`, a user's own): the host then gets engram's native rule files."""
    path = config_path(host, project, global_=False)
    try:
        doc = _parse(_read(path), path)
    except LinkError:
        return False  # a file the host cannot read runs no hook either
    return bool(_engram_hook_commands(doc, _host(host)))


def names_engram(command: str) -> bool:
    """Whether a command line names engram at all: what `--command` must do, and what a hook that runs
    engram's (engram's own or a user's wrapper) does."""
    return "engram" in command


def config_path(host: str, project: Path, global_: bool, home: Path | None = None, mcp: bool = False) -> Path:
    """The host's hook config (or with `mcp` its MCP config): under `project`, or under `home` (default: the
    user's) when global."""
    if mcp:
        mcp_file = _host(host).mcp_file
        return (home or Path.home()) / mcp_file.global_path if global_ else project / mcp_file.path
    base = (home or Path.home()) if global_ else project
    return base / _host(host).hook_file.path


def link(
    host: str,
    project: Path,
    *,
    global_: bool = False,
    engram_command: str,
    backup_dir: Path,
    home: Path | None = None,
    mcp: bool = False,
) -> list[LinkResult]:
    """Merge engram's hook entries (with `mcp`: also its MCP server "engram") into the host's configs;
    idempotent. One result per file: the hook config, then the MCP config.

    Raises LinkError (one line, naming the file) for a file engram cannot
    rewrite faithfully; every file is then left untouched.
    """
    spec = _host(host)
    edits = _Edits(backup_dir, None if global_ else project)
    path = config_path(host, project, global_, home)
    kept = _link_file(edits.open(path), _HookEntries(spec, engram_command))
    also = _also_linked(spec, path, config_path(host, project, not global_, home), global_)
    results = [(path, [spec.trust_message] if spec.trust_message else [], kept + also)]
    if mcp:
        path = config_path(host, project, global_, home, mcp=True)
        results.append((path, [], _link_file(edits.open(path), _mcp_entry(spec, engram_command, global_))))
    edits.commit()
    return [LinkResult(path, edits.changed(path), messages, warnings) for path, messages, warnings in results]


def unlink(
    host: str,
    project: Path,
    *,
    global_: bool = False,
    backup_dir: Path,
    home: Path | None = None,
) -> list[LinkResult]:
    """Remove engram's hook entries and its MCP server: byte-exact restore of a file untouched since link.
    One result per file: the hook config, then the MCP config; every file or none changes."""
    spec = _host(host)
    edits = _Edits(backup_dir, None if global_ else project)
    server_path = config_path(host, project, global_, home, mcp=True)
    # the server first: undone in the reverse order of link --mcp (Gemini keeps both in one file)
    _unlink_file(edits.open(server_path), _mcp_entry(spec, "", global_))
    hooks_path = config_path(host, project, global_, home)
    _unlink_file(edits.open(hooks_path), _HookEntries(spec, ""))
    for edit in edits.files.values():
        edit.record = None  # used: a file now without engram's entries needs none, and a stale one goes
    edits.commit()
    return [LinkResult(path, edits.changed(path), []) for path in (hooks_path, server_path)]


# --- one config file: the same steps for every format ------------------------


class _Edit:
    """One config file during a link or unlink: its bytes and backup record as the steps so far left them."""

    def __init__(self, path: Path, backup_dir: Path) -> None:
        self.path = path
        self.on_disk = _read(path)
        self.content = self.on_disk  # None: no file
        self.record = _load_record(backup_dir, path)  # None: no byte-exact restore (`commit` drops a stored one)
        self.created_dirs: list[str] = []  # removed with the file when a step deletes it

    def restore(self, record: _Record) -> None:
        if record.original is None:
            self.delete(record)
        else:
            self.content = record.original

    def delete(self, record: _Record) -> None:
        """Delete a file link created, and then the dirs link created for it if they are empty."""
        self.content = None
        self.created_dirs = record.created_dirs


class _Edits:
    """The config files one link or unlink changes, each read once. The steps change them in memory and
    `commit` writes them, so a file engram refuses leaves every file as it was."""

    def __init__(self, backup_dir: Path, project: Path | None) -> None:
        self.backup_dir = backup_dir
        self.project = project  # a project link's files stay in it; a global one writes where its symlinks lead
        self.files: dict[Path, _Edit] = {}  # Gemini's hooks and MCP server share one file

    def open(self, path: Path) -> _Edit:
        if path not in self.files:
            _refuse_leading_out(path, self.project)
            self.files[path] = _Edit(path, self.backup_dir)
        return self.files[path]

    def changed(self, path: Path) -> bool:
        return self.files[path].content != self.files[path].on_disk

    def commit(self) -> None:
        for edit in self.files.values():
            if edit.content is None:
                if edit.on_disk is not None:
                    _delete_created(edit.path, edit.created_dirs)
            elif edit.content != edit.on_disk:
                self._write(edit, edit.content)
            if edit.record is None:
                _drop_record(self.backup_dir, edit.path)

    def _write(self, edit: _Edit, content: bytes) -> None:
        created = _make_parents(edit.path)
        if edit.record is not None:
            edit.record.created_dirs = edit.record.created_dirs or [str(d.absolute()) for d in created]
            _save_record(self.backup_dir, edit.path, edit.record)  # before the write, so a crash cannot lose it
        _write_atomic(edit.path, content)


def _refuse_leading_out(path: Path, project: Path | None) -> None:
    """A project's config symlinked out of it (a cloned `.claude -> ~/.claude`) would have a project link
    write hooks into another project's or the user's own config."""
    if project is None:
        return
    real, top = os.path.realpath(path), os.path.realpath(project)
    if os.path.commonpath([real, top]) != top:
        raise LinkError(f"{path}: a symlink out of the project; a project's link writes only inside it")


def _link_file(edit: _Edit, entries: _Entries) -> list[str]:
    """Put engram's entries into the file, keeping everything else; a line for each entry engram kept that it
    did not write."""
    raw = edit.content
    doc = entries.parse(raw, edit.path)
    # Replace rather than append, so linking twice equals linking once.
    doc, had_engram, emptied = entries.remove(doc)
    record = _record_for_link(edit.record, raw, had_engram)
    doc, kept = entries.install(doc, edit.path)
    new = entries.dump(entries.prune(doc, emptied, _original_doc(entries, record)), like=raw)
    if raw is not None and new == entries.dump(entries.parse(raw, edit.path), like=raw):
        new = raw  # the same settings (engram kept what it found): the file stays byte for byte
    if record is not None:
        record.written_sha256 = _sha256(new)
    edit.content, edit.record = new, record
    return kept


def _unlink_file(edit: _Edit, entries: _Entries) -> None:
    """Take engram's entries out: the original bytes when the file is still what link wrote."""
    raw, record = edit.content, edit.record
    if raw is None:
        return  # nothing to remove (the user deleted the file)
    if record is not None and _sha256(raw) == record.written_sha256:
        edit.restore(record)
        return
    doc, removed, emptied = entries.remove(entries.parse(raw, edit.path))
    if not removed:
        return
    original = _original_doc(entries, record)
    doc = entries.drop_added_head(entries.prune(doc, emptied, original), original)
    if entries.is_empty(doc) and record is not None and record.original is None:
        edit.delete(record)
    else:
        edit.content = entries.dump(doc, like=raw)


def _also_linked(spec: Host, path: Path, other: Path, global_: bool) -> list[str]:
    """A line when the host's hook config of the other scope (the user's for a project link, the project's
    for a --global one) runs engram's hook too: the host runs both, and each event brings memories twice."""
    if os.path.realpath(other) == os.path.realpath(path):
        return []  # the project is the home folder: one file
    try:
        commands = _engram_hook_commands(_parse(_read(other), other), spec)
    except LinkError:
        return []  # a file the host cannot read runs no hook either
    if not commands:
        return []
    where, unlink_other = ("in this project", "") if global_ else ("for this user", " --global")
    return [
        f"{spec.name} is also linked {where} ({other}): both links will run, so each event brings engram's "
        f"memories twice; `engram unlink {spec.name}{unlink_other}` removes that one"
    ]


# --- host entries ------------------------------------------------------------


def _host(name: str) -> Host:
    try:
        return host_registry[name]
    except KeyError:
        raise LinkError(f"unknown host {name!r} (choose from {', '.join(HOSTS)})") from None


def _imports_engram(python: str) -> bool:
    """Whether that interpreter has the engram package (-P: not just because the current folder holds it)."""
    import subprocess

    try:
        return subprocess.run([python, "-P", "-c", "import engram"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _quote(command: str) -> str:
    return shlex.quote(command) if " " in command else command


def _words(command: str) -> list[str]:
    """A command line's words as a shell splits them; `|`, `>`, `;`, `&` and parentheses are words of their
    own, so a pipeline or a redirection is never part of one word."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""  # as shlex.split: a `#` starts no comment
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote: no command link writes
        return []


def _runs_engram_with(words: list[str], args: list[str]) -> bool:
    """Whether the words are engram's program (as link writes it) and then exactly `args`."""
    return len(words) > len(args) and words[-len(args) :] == args and _is_engram_program(words[: -len(args)])


def _is_engram_program(words: list[str]) -> bool:
    """Whether the words run engram as link writes it: one engram script, or an interpreter `-m engram`."""
    if len(words) == 1:
        return os.path.basename(words[0]) == "engram"
    return len(words) == 3 and words[1:] == ["-m", "engram"]


def _is_engram_handler(handler: object, host: Host, written: str = "") -> bool:
    """Whether a hook handler is one link writes: the file's handler keys, engram's timeout, and a command
    that is engram's program and `hook --host <host>`, nothing else (a flat entry also holds its matcher),
    or ``written``, the exact command this link writes (a `--command` wrapper: linking again replaces it)."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    spec = host.hook_file
    keys = {key: value for key, value in handler.items() if spec.nested or key != "matcher"}
    if keys != dict(spec.handler_head) | {"command": handler["command"], "timeout": spec.timeout}:
        return False
    command = handler["command"]
    return command == written or _runs_engram_with(_words(command), ["hook", "--host", host.name])


def _runs_engram_hook(command: str, host: str) -> bool:
    """Whether a command line runs engram's hook for the host in any form: engram's own, or a user's wrapper."""
    return names_engram(command) and re.search(rf" hook --host {re.escape(host)}(?!\S)", command) is not None


def _engram_hook_commands(doc: dict, host: Host, written: str | None = None) -> dict[str, list[str]]:
    """Each command that runs engram's hook for the host on an event engram installs, and its events; with
    ``written`` (the command this link writes), only those of handlers engram did not write."""
    hooks = doc.get("hooks") or {}
    found: dict[str, list[str]] = {}
    for event in host.events:
        for handler in _handlers(hooks.get(event.name), host.hook_file.nested):
            command = handler.get("command")
            own = written is not None and _is_engram_handler(handler, host, written)
            if isinstance(command, str) and not own and _runs_engram_hook(command, host.name):
                found.setdefault(command, []).append(event.name)
    return found


def _handlers(entries: object, nested: bool) -> list[dict]:
    """The handlers of one event's list: its entries, or the hooks of its matcher groups."""
    if not isinstance(entries, list):
        return []
    groups = [entry for entry in entries if isinstance(entry, dict)]
    if not nested:
        return groups
    return [
        h for group in groups if isinstance(group.get("hooks"), list) for h in group["hooks"] if isinstance(h, dict)
    ]


def _install(data: dict, host: Host, engram_command: str, path: Path) -> None:
    spec = host.hook_file
    for key, value in spec.file_head:
        data.setdefault(key, value)
    hooks = data.setdefault("hooks", {})
    command = f"{engram_command} hook --host {host.name}"
    for event in host.events:
        entries = hooks.setdefault(event.name, [])
        if not isinstance(entries, list):
            raise LinkError(f"{path}: hooks.{event.name} is not a list; engram left it untouched")
        entries.append(_entry(spec, command, event.matcher))


def _entry(spec: HookFile, command: str, matcher: str | None) -> dict:
    handler = dict(spec.handler_head) | {"command": command, "timeout": spec.timeout}
    with_matcher = {"matcher": matcher} if matcher else {}
    if spec.nested:
        return with_matcher | {"hooks": [handler]}
    return handler | with_matcher


def _remove(data: dict, host: Host, written: str = "") -> tuple[bool, list[str]]:
    """Remove engram's handlers in place, dropping matcher groups that held only them.

    Returns whether any were found and the events whose lists the removal
    emptied. Emptied keys stay in place for now so a re-link appends to them
    and the key order, hence the bytes, stay the same.
    """
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return False, []
    found, emptied = False, []
    for event, entries in hooks.items():
        if isinstance(entries, list) and _remove_from_event(entries, host, written):
            found = True
            if not entries:
                emptied.append(event)
    return found, emptied


def _remove_from_event(entries: list, host: Host, written: str) -> bool:
    """Remove engram's handlers from one event's list in place; True if there were any."""
    if not host.hook_file.nested:
        kept = [entry for entry in entries if not _is_engram_handler(entry, host, written)]
        found = len(kept) < len(entries)
    else:
        kept, found = [], False
        for group in entries:
            if _remove_from_group(group, host, written):
                found = True
                if not group["hooks"]:
                    continue  # the group held only engram's handlers
            kept.append(group)
    entries[:] = kept
    return found


def _remove_from_group(group: object, host: Host, written: str) -> bool:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return False
    handlers = group["hooks"]
    kept = [handler for handler in handlers if not _is_engram_handler(handler, host, written)]
    if len(kept) == len(handlers):
        return False
    group["hooks"] = kept
    return True


def _prune(data: dict, emptied: list[str], original: dict | None) -> None:
    """Drop containers engram's removal left empty, unless the original file had them.

    With no backup record (`original` None) every emptied container goes.
    """
    hooks = data["hooks"]
    before = original or {}
    before_hooks = before.get("hooks") or {}
    for event in emptied:
        if hooks.get(event) == [] and event not in before_hooks:
            del hooks[event]
    if emptied and not hooks and "hooks" not in before:
        del data["hooks"]


def _drop_added_head(data: dict, spec: HookFile, original: dict | None) -> None:
    """Drop top-level keys link added (cursor's "version") once engram's entries are gone.

    Without a backup record only a file left with no hooks loses them: the
    host may need them for the hooks that remain.
    """
    for key, value in spec.file_head:
        known_added = key not in (original or {}) and (original is not None or "hooks" not in data)
        if known_added and data.get(key) == value:
            del data[key]


# --- what engram puts in each kind of file -----------------------------------


class _Entries:
    """engram's entries in one kind of config file: how they go in and come out.

    `remove` takes out only what link writes and also reports the containers
    it emptied, which `prune` drops unless the original file had them.
    `install` adds engram's entries and returns a line for each entry it kept
    that engram did not write. Documents are changed in place where they are
    mutable, and returned either way.
    """

    def parse(self, raw: bytes | None, path: Path) -> object:
        return _parse(raw, path)

    def remove(self, doc) -> tuple[object, bool, list[str]]:
        raise NotImplementedError

    def install(self, doc, path: Path) -> tuple[object, list[str]]:
        raise NotImplementedError

    def prune(self, doc, emptied: list[str], original) -> object:
        return doc

    def drop_added_head(self, doc, original) -> object:
        return doc

    def dump(self, doc, like: bytes | None = None) -> bytes:
        """The document as the file's bytes, shaped like ``like`` (the file before the change)."""
        return _dump(doc, like)

    def is_empty(self, doc) -> bool:
        return not doc


class _HookEntries(_Entries):
    """engram's handlers under `hooks` in a JSON hook config."""

    def __init__(self, host: Host, engram_command: str) -> None:
        self.host = host
        self.engram_command = engram_command
        self.written = f"{engram_command} hook --host {host.name}" if engram_command else ""

    def remove(self, doc: dict) -> tuple[dict, bool, list[str]]:
        return (doc, *_remove(doc, self.host, self.written))

    def install(self, doc: dict, path: Path) -> tuple[dict, list[str]]:
        """engram's handlers beside the user's; a user's hook that runs engram too (a wrapper, a timeout of
        its own) stays, and a line says that both run."""
        kept = [
            f"{path}: a hook engram did not write also runs engram on {', '.join(events)} ({command}); "
            "engram kept it beside its own, and both will run"
            for command, events in _engram_hook_commands(doc, self.host, self.written).items()
        ]
        _install(doc, self.host, self.engram_command, path)
        return doc, kept

    def prune(self, doc: dict, emptied: list[str], original: dict | None) -> dict:
        _prune(doc, emptied, original)
        return doc

    def drop_added_head(self, doc: dict, original: dict | None) -> dict:
        _drop_added_head(doc, self.host.hook_file, original)
        return doc


def _mcp_entry(host: Host, engram_command: str, global_: bool) -> _Entries:
    """The `engram mcp` server entry in the host's MCP config; a project file may point it at the project."""
    command, *args = _words(engram_command) or [""]
    args += ["mcp", *(() if global_ else host.mcp_file.project_args)]
    if host.mcp_file.format == "toml":
        return _TomlMcpEntry(host, command, args)
    return _JsonMcpEntry(host, dict(host.mcp_file.entry_head) | {"command": command, "args": args})


def _is_engram_server(entry: object, host: Host) -> bool:
    """Whether an MCP server entry is one link writes: the file's entry keys and an engram program running
    `mcp` (with or without the project arguments), nothing else."""
    mcp_file = host.mcp_file
    if not isinstance(entry, dict) or set(entry) != {*dict(mcp_file.entry_head), "command", "args"}:
        return False
    if any(entry[key] != value for key, value in mcp_file.entry_head) or not _all_strings(entry["args"]):
        return False
    words = [entry["command"], *entry["args"]]
    return any(_runs_engram_with(words, args) for args in (["mcp"], ["mcp", *mcp_file.project_args]))


def _all_strings(values: object) -> bool:
    return isinstance(values, list) and all(isinstance(value, str) for value in values)


def _runs_engram_server(entry: object) -> bool:
    """Whether an MCP server entry runs `engram mcp` in any form: engram's own, or a user's with settings of its own."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str) or not _all_strings(entry.get("args")):
        return False
    return "engram" in " ".join([entry["command"], *entry["args"]]) and "mcp" in entry["args"]


def _kept_server(path: Path, name: str, entry: object) -> list[str]:
    """The line for a server called engram that engram did not write and leaves as it is; a refusal when it
    does not run `engram mcp`, as link cannot register engram's server beside it under the same name."""
    found = f"{path}: has an {name} engram did not write; engram left it untouched"
    if not _runs_engram_server(entry):
        raise LinkError(found)
    return [f"{found} (it runs engram mcp)"]


class _JsonMcpEntry(_Entries):
    """`mcpServers.engram` in a JSON file (.mcp.json, .cursor/mcp.json, .gemini/settings.json)."""

    def __init__(self, host: Host, entry: dict) -> None:
        self.host = host
        self.entry = entry

    def remove(self, doc: dict) -> tuple[dict, bool, list[str]]:
        servers = doc.get("mcpServers")
        if not isinstance(servers, dict):
            return doc, False, []
        entry = servers.get(MCP_NAME)
        if not (entry == self.entry or _is_engram_server(entry, self.host)):  # an exact entry of a --command
            return doc, False, []
        del servers[MCP_NAME]
        return doc, True, [] if servers else ["mcpServers"]

    def install(self, doc: dict, path: Path) -> tuple[dict, list[str]]:
        servers = doc.setdefault("mcpServers", {})
        if not isinstance(servers, dict):
            raise LinkError(f'{path}: its "mcpServers" is not a JSON object; engram left it untouched')
        if MCP_NAME in servers:
            return doc, _kept_server(path, f"mcpServers.{MCP_NAME}", servers[MCP_NAME])
        servers[MCP_NAME] = self.entry
        return doc, []

    def prune(self, doc: dict, emptied: list[str], original: dict | None) -> dict:
        if emptied and doc.get("mcpServers") == {} and "mcpServers" not in (original or {}):
            del doc["mcpServers"]
        return doc


class _TomlMcpEntry(_Entries):
    """`[mcp_servers.engram]` in Codex's config.toml, edited as text (the stdlib reads TOML but cannot write it).

    A removal is checked by reading the file again: it must hold the same settings less engram's server,
    or engram leaves the table to the user (a table with sub-tables or keys of its own is theirs anyway).
    """

    def __init__(self, host: Host, command: str, args: list[str]) -> None:
        self.host = host
        # JSON strings and arrays of strings are valid TOML basic strings and arrays
        self.block = f"[mcp_servers.{MCP_NAME}]\ncommand = {json.dumps(command)}\nargs = {json.dumps(args)}\n"

    def parse(self, raw: bytes | None, path: Path) -> str:
        try:
            text = "" if raw is None else raw.decode("utf-8")
        except UnicodeDecodeError:
            raise LinkError(f"{path}: not UTF-8 text; engram left it untouched") from None
        _toml(text, path)
        return text

    def remove(self, doc: str) -> tuple[str, bool, list[str]]:
        found = TOML_TABLE.search(doc)
        if found is None:
            return doc, False, []
        rest = doc[: found.start()] + doc[found.end() :]
        before, after = _toml(doc) or {}, _toml(rest)
        if (
            after is None
            or not _is_engram_server(_toml_server(before), self.host)
            or _toml_server(after) is not None
            or _without_server(before) != _without_server(after)
        ):
            return doc, False, []
        return rest, True, []

    def install(self, doc: str, path: Path) -> tuple[str, list[str]]:
        server = _toml_server(_toml(doc))
        if server is not None:
            return doc, _kept_server(path, f"[mcp_servers.{MCP_NAME}]", server)
        head = doc if not doc or doc.endswith("\n") else doc + "\n"
        new = head + ("\n" if head.strip() else "") + self.block
        if _toml_server(_toml(new)) is None:  # e.g. mcp_servers written as an inline table
            raise LinkError(f"{path}: cannot add [mcp_servers.{MCP_NAME}] to it; add it by hand")
        return new, []

    def dump(self, doc: str, like: bytes | None = None) -> bytes:
        return doc.encode("utf-8")  # edited as text: the rest of the file is as it was

    def is_empty(self, doc: str) -> bool:
        return not doc.strip()


def _toml(text: str, path: Path | None = None) -> dict | None:
    """The TOML document; None when it does not parse, or with `path` a LinkError naming the file."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        if path is None:
            return None
        raise LinkError(f"{path}: not valid TOML ({err}); engram left it untouched") from None


def _toml_server(data: dict | None) -> object:
    servers = (data or {}).get("mcp_servers")
    return servers.get(MCP_NAME) if isinstance(servers, dict) else None


def _without_server(data: dict) -> dict:
    """The settings less engram's server (and an `mcp_servers` left empty): what a removal must keep."""
    servers = data.get("mcp_servers")
    if not isinstance(servers, dict):
        return data
    others = {name: server for name, server in servers.items() if name != MCP_NAME}
    return {key: value for key, value in data.items() if key != "mcp_servers"} | (
        {"mcp_servers": others} if others else {}
    )


# --- reading and writing -----------------------------------------------------


# A host's settings file is a few KB; a committed link to /dev/zero took GBs of memory, a FIFO hung link.
MAX_HOST_CONFIG_BYTES = 4 * 1024 * 1024


def _read(path: Path) -> bytes | None:
    try:
        return read_bytes(str(path), MAX_HOST_CONFIG_BYTES)
    except FileNotFoundError:
        return None
    except OSError as err:  # UnreadableFile too: a FIFO, a device, a folder, a file past the cap
        raise LinkError(f"{path}: cannot read ({err.strerror or err})") from None


def _parse(raw: bytes | None, path: Path) -> dict:
    """The config as a dict; refuse anything engram could not rewrite faithfully."""
    if raw is None:
        return {}
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LinkError(f"{path}: not UTF-8 text; engram left it untouched") from None
    if not text.strip():
        return {}  # an empty file (e.g. from `touch`) holds no settings yet
    try:
        data = _loads_tolerant(text, path)
    except RecursionError:
        data = None
    if data is None or _depth(data) > MAX_DEPTH:
        raise LinkError(f"{path}: nested deeper than {MAX_DEPTH} levels; engram left it untouched")
    if not isinstance(data, dict):
        raise LinkError(f"{path}: not a JSON object; engram left it untouched")
    if not isinstance(data.get("hooks", {}), dict):
        raise LinkError(f'{path}: its "hooks" is not a JSON object; engram left it untouched')
    try:
        _dump(data)
    except UnicodeEncodeError:
        raise LinkError(
            f"{path}: holds a lone surrogate escape (\\udc00) that no rewrite keeps; engram left it untouched"
        ) from None
    return data


def _depth(value: object) -> int:
    """How deeply containers nest in ``value``, counted without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(item, dict | list):
            stack += [(member, depth + 1) for member in (item.values() if isinstance(item, dict) else item)]
    return deepest


def _loads_tolerant(text: str, path: Path) -> object:
    """Parse JSON, accepting JSONC trailing commas but refusing comments.

    Some hosts read JSONC. Dropping a trailing comma only changes formatting,
    but rewriting a file with comments would lose them silently.
    """
    try:
        return _strict_loads(text, path)
    except json.JSONDecodeError as err:
        error = err
    relaxed = _without_trailing_commas(text)
    if relaxed is None:
        raise LinkError(
            f"{path}: has comments that rewriting would lose; "
            "engram left it untouched (remove the comments or add the hooks by hand)"
        )
    try:
        return _strict_loads(relaxed, path)
    except json.JSONDecodeError:
        raise LinkError(
            f"{path}: not valid JSON ({error.msg} at line {error.lineno} column {error.colno}); "
            "engram left it untouched"
        ) from None


def _strict_loads(text: str, path: Path) -> object:
    """`jsonkeep.strict_loads`: what a rewrite would change is left untouched."""
    from . import jsonkeep

    try:
        return jsonkeep.strict_loads(text)
    except jsonkeep.WouldChange as err:
        raise LinkError(f"{path}: {err}; engram left it untouched") from None


def _without_trailing_commas(text: str) -> str | None:
    """`text` minus commas that directly precede `}` or `]`; None if it has a comment."""
    out: list[str] = []
    in_string = escaped = False
    for i, char in enumerate(text):
        if in_string:
            in_string = escaped or char != '"'
            escaped = not escaped and char == "\\"
        elif char == '"':
            in_string = True
        elif text.startswith(("//", "/*"), i):
            return None
        elif char == "," and text[i + 1 :].lstrip()[:1] in ("}", "]"):
            continue
        out.append(char)
    return "".join(out)


def _dump(data: dict, like: bytes | None = None) -> bytes:
    """JSON text; what did not change since ``like`` keeps its text there (`jsonkeep`)."""
    from . import jsonkeep  # `index` imports this module for other work: only a link writes JSON

    original = like.decode("utf-8-sig") if like is not None else None
    return jsonkeep.dumps(data, original).encode("utf-8")


def _write_atomic(path: Path, content: bytes) -> None:
    """Replace the file in one step, keeping its mode; write through a symlink (dotfile managers use them)."""
    try:
        write_atomic(os.path.realpath(path), content, keep_mode=True)
    except OSError as err:
        raise LinkError(f"{path}: cannot write ({err.strerror})") from None


def _make_parents(path: Path) -> list[Path]:
    """Create the missing parent dirs; return them deepest first."""
    missing = []
    parent = path.parent
    while not parent.exists():
        missing.append(parent)
        parent = parent.parent
    path.parent.mkdir(parents=True, exist_ok=True)
    return missing


def _sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


# --- backup records ----------------------------------------------------------


class _Record:
    """What unlink needs to give a file back as it was before link."""

    def __init__(
        self, original: bytes | None, written_sha256: str | None = None, created_dirs: list[str] | None = None
    ) -> None:
        self.original = original  # None: the file did not exist before link
        self.written_sha256 = written_sha256
        self.created_dirs = created_dirs or []  # deepest first


def _record_path(backup_dir: Path, path: Path) -> Path:
    return backup_dir / f"{_sha256(str(path.absolute()).encode('utf-8'))}.json"


def _load_record(backup_dir: Path, path: Path) -> _Record | None:
    try:
        stored = json.loads(_record_path(backup_dir, path).read_text(encoding="utf-8"))
        original = stored["original"]
        return _Record(
            original=None if original is None else base64.b64decode(original),
            written_sha256=stored["written_sha256"],
            created_dirs=list(stored["created_dirs"]),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return None  # a damaged record only costs the byte-exact restore


def _save_record(backup_dir: Path, path: Path, record: _Record) -> None:
    original = record.original
    stored = {
        "path": str(path.absolute()),
        "original": None if original is None else base64.b64encode(original).decode("ascii"),
        "written_sha256": record.written_sha256,
        "created_dirs": record.created_dirs,
    }
    backup_dir.mkdir(parents=True, exist_ok=True)
    _write_atomic(_record_path(backup_dir, path), _dump(stored))


def _drop_record(backup_dir: Path, path: Path) -> None:
    _record_path(backup_dir, path).unlink(missing_ok=True)


def _record_for_link(existing: _Record | None, raw: bytes | None, had_engram: bool) -> _Record | None:
    """The record to keep for this link, or None when no byte-exact restore is possible."""
    if existing is not None and raw is not None and _sha256(raw) == existing.written_sha256:
        return existing  # still our own output: keep the pristine original
    if had_engram:
        return None  # engram's entries came from elsewhere (e.g. a teammate's commit)
    return _Record(original=raw)


def _original_doc(entries: _Entries, record: _Record | None) -> object:
    """The config as it was before link, or None when unknown."""
    if record is None:
        return None
    try:
        return entries.parse(record.original, Path("<backup>"))
    except LinkError:
        return None  # a damaged record only costs precision in pruning


def _delete_created(path: Path, created_dirs: list[str]) -> None:
    """Delete a file link created, then the dirs link created for it (deepest first) if now empty."""
    path.unlink()
    for directory in created_dirs:
        try:
            os.rmdir(directory)
        except OSError:
            break  # not empty: the user keeps something there

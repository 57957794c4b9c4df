"""Install and remove engram's hook entries in a host's config file.

`link` merges engram's handlers into the host's JSON config and keeps every
other key and entry; `unlink` takes them out again. Before the first write,
`link` saves a backup record (the original bytes, or the fact that the file
did not exist, plus the sha256 of what it wrote). If the file is still exactly
what `link` wrote, `unlink` restores the original byte for byte; otherwise it
removes engram's entries structurally and keeps the user's later edits.
Stdlib only.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .hosts import HOSTS as host_registry
from .hosts.base import HookFile, Host

HOSTS = tuple(host_registry)


class LinkError(Exception):
    """A config file engram will not touch; the message is one line naming it."""


@dataclass
class LinkResult:
    path: Path
    changed: bool
    messages: list[str]


# --- public API --------------------------------------------------------------


def default_engram_command() -> str:
    """The command hosts should run: an absolute path, so no shell shim slows every hook."""
    found = shutil.which("engram")
    if found:
        return _quote(os.path.abspath(found))
    argv0 = Path(sys.argv[0])
    if argv0.stem == "engram":
        return _quote(str(argv0.resolve()))
    return f"{_quote(sys.executable)} -m engram"


def runs_engram(command: str) -> bool:
    """Whether a hook command names engram: how link and unlink recognise their own entries."""
    return "engram" in command


def config_path(host: str, project: Path, global_: bool, home: Path | None = None) -> Path:
    """The host's hook config: under `project`, or under `home` (default: the user's) when global."""
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
) -> LinkResult:
    """Merge engram's hook entries into the host's config; idempotent.

    Raises LinkError (one line, naming the file) for a file engram cannot
    rewrite faithfully; the file is then left untouched.
    """
    spec = _host(host).hook_file
    path = config_path(host, project, global_, home)
    messages = [_host(host).trust_message] if _host(host).trust_message else []
    raw = _read(path)
    data = _parse(raw, path)
    # Replace rather than append, so linking twice equals linking once.
    had_engram, emptied = _remove(data, host, spec)
    record = _record_for_link(_load_record(backup_dir, path), raw, had_engram)
    _install(data, _host(host), engram_command, path)
    _prune(data, emptied, _original_data(record))
    new = _dump(data)
    if record is None:
        _drop_record(backup_dir, path)
    if new == raw:
        return LinkResult(path, False, messages)
    created = _make_parents(path)
    if record is not None:
        record.created_dirs = record.created_dirs or [str(d.absolute()) for d in created]
        record.written_sha256 = _sha256(new)
        _save_record(backup_dir, path, record)  # before the write, so a crash cannot lose the original
    _write_atomic(path, new)
    return LinkResult(path, True, messages)


def unlink(
    host: str,
    project: Path,
    *,
    global_: bool = False,
    backup_dir: Path,
    home: Path | None = None,
) -> LinkResult:
    """Remove engram's hook entries: byte-exact restore if the file is untouched since link."""
    spec = _host(host).hook_file
    path = config_path(host, project, global_, home)
    raw = _read(path)
    record = _load_record(backup_dir, path)
    if raw is None:
        # Nothing to remove; a record left behind is stale (the user deleted the file).
        _drop_record(backup_dir, path)
        return LinkResult(path, False, [])
    if record is not None and _sha256(raw) == record.written_sha256:
        _restore(path, record)
        _drop_record(backup_dir, path)
        return LinkResult(path, True, [])
    data = _parse(raw, path)
    removed, emptied = _remove(data, host, spec)
    if not removed:
        _drop_record(backup_dir, path)
        return LinkResult(path, False, [])
    original = _original_data(record)
    _prune(data, emptied, original)
    _drop_added_head(data, spec, original)
    if not data and record is not None and record.original is None:
        _delete_created(path, record)
    else:
        _write_atomic(path, _dump(data))
    _drop_record(backup_dir, path)
    return LinkResult(path, True, [])


# --- host entries ------------------------------------------------------------


def _host(name: str) -> Host:
    try:
        return host_registry[name]
    except KeyError:
        raise LinkError(f"unknown host {name!r} (choose from {', '.join(HOSTS)})") from None


def _quote(command: str) -> str:
    return shlex.quote(command) if " " in command else command


def _is_engram_handler(handler: object, host: str) -> bool:
    if not isinstance(handler, dict):
        return False
    command = handler.get("command")
    return (
        isinstance(command, str)
        and runs_engram(command)
        and re.search(rf" hook --host {re.escape(host)}(?!\S)", command) is not None
    )


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


def _remove(data: dict, host: str, spec: HookFile) -> tuple[bool, list[str]]:
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
        if isinstance(entries, list) and _remove_from_event(entries, host, spec.nested):
            found = True
            if not entries:
                emptied.append(event)
    return found, emptied


def _remove_from_event(entries: list, host: str, nested: bool) -> bool:
    """Remove engram's handlers from one event's list in place; True if there were any."""
    if not nested:
        kept = [entry for entry in entries if not _is_engram_handler(entry, host)]
        found = len(kept) < len(entries)
    else:
        kept, found = [], False
        for group in entries:
            if _remove_from_group(group, host):
                found = True
                if not group["hooks"]:
                    continue  # the group held only engram's handlers
            kept.append(group)
    entries[:] = kept
    return found


def _remove_from_group(group: object, host: str) -> bool:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return False
    handlers = group["hooks"]
    kept = [handler for handler in handlers if not _is_engram_handler(handler, host)]
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


# --- reading and writing -----------------------------------------------------


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise LinkError(f"{path}: cannot read ({err.strerror})") from None


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
    data = _loads_tolerant(text, path)
    if not isinstance(data, dict):
        raise LinkError(f"{path}: not a JSON object; engram left it untouched")
    if not isinstance(data.get("hooks", {}), dict):
        raise LinkError(f"{path}: its \"hooks\" is not a JSON object; engram left it untouched")
    return data


def _loads_tolerant(text: str, path: Path) -> object:
    """Parse JSON, accepting JSONC trailing commas but refusing comments.

    Some hosts read JSONC. Dropping a trailing comma only changes formatting,
    but rewriting a file with comments would lose them silently.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        error = err
    relaxed = _without_trailing_commas(text)
    if relaxed is None:
        raise LinkError(
            f"{path}: has comments that rewriting would lose; "
            "engram left it untouched (remove the comments or add the hooks by hand)"
        )
    try:
        return json.loads(relaxed)
    except json.JSONDecodeError:
        raise LinkError(
            f"{path}: not valid JSON ({error.msg} at line {error.lineno} column {error.colno}); "
            "engram left it untouched"
        ) from None


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


def _dump(data: dict) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _write_atomic(path: Path, content: bytes) -> None:
    """Replace the file in one step; write through a symlink (dotfile managers use them)."""
    target = Path(os.path.realpath(path))
    temp = target.with_name(f".{target.name}.engram-{os.getpid()}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        if target.exists():
            os.chmod(temp, stat.S_IMODE(target.stat().st_mode))
        os.replace(temp, target)
    except OSError as err:
        temp.unlink(missing_ok=True)
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


@dataclass
class _Record:
    original: bytes | None  # None: the file did not exist before link
    written_sha256: str | None = None
    created_dirs: list[str] = field(default_factory=list)  # deepest first


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


def _original_data(record: _Record | None) -> dict | None:
    """The config as it was before link, or None when unknown."""
    if record is None:
        return None
    try:
        return _parse(record.original, Path("<backup>"))
    except LinkError:
        return None  # a damaged record only costs precision in pruning


def _restore(path: Path, record: _Record) -> None:
    if record.original is None:
        _delete_created(path, record)
    else:
        _write_atomic(path, record.original)


def _delete_created(path: Path, record: _Record) -> None:
    """Delete a file link created, then the dirs link created for it if now empty."""
    path.unlink()
    for directory in record.created_dirs:
        try:
            os.rmdir(directory)
        except OSError:
            break  # not empty: the user keeps something there

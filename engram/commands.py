"""What `engram index`, `check` and `verify` do, as plain functions returning exit codes."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from . import gate, native_rules
from .compile import CompileResult, compile_root, export_index
from .errors import EngramError, out, say, warning
from .graph import describe
from .index import LOCAL_REBUILD, SHARED_REBUILD, IndexFileError, open_index
from .sources import ROOT_DIR, Root, display_path, stray_files, unindexed_files
from .trust import SIGNATURE_SUFFIX, sign_index, signing_key
from .verify import repaired_lines, signature_line, verify_index
from .workspace import Workspace, open_workspace

COUNTS = ("total", "files", "added", "changed", "removed", "invalid")
STRAY_SHOWN = 5


def _warn_settings(ws: Workspace) -> None:
    """The config's problems, and a global folder configured that is not used."""
    for line in [*ws.config.problems, *ws.global_notes()]:
        warning(line)


def _compile_all(ws: Workspace, output: Path | None, scope: str) -> tuple[list[CompileResult], bool]:
    """Every root compiled (its damage repaired and said), and whether ``output``, the shareable copy,
    was written."""
    results, exported = [], False
    for root in ws.roots:
        if output is not None and root.scope == scope:
            result, exported = export_index(root, ws.config, output)
            results.append(result)
        else:
            results.append(compile_root(root, ws.config, progress=True, report=True))
    return results, exported


def _require_roots(ws: Workspace) -> None:
    """Fail outside any project (with no global root either)."""
    if not (os.path.isdir(ws.root.path) or ws.global_root is not None):
        raise EngramError(f"no {ROOT_DIR} here or above; `engram init` creates one")


def run_index(output: Path | None, scope: str, sign_key: Path | None = None) -> int:
    ws = open_workspace()
    _warn_settings(ws)
    if scope not in ("workspace", "global"):
        raise EngramError("--scope must be workspace or global", 2)
    if scope == "global" and ws.global_root is None:
        raise EngramError("no global root: set ENGRAM_GLOBAL_DIR or global_path")
    _require_roots(ws)
    if sign_key is not None and output is None:
        raise EngramError("--sign-key signs the file --output writes; give --output too", 2)
    key = None
    if sign_key is not None:
        try:
            key = signing_key(str(sign_key))
        except (IndexFileError, OSError) as exc:
            raise EngramError(f"cannot sign with {sign_key}: {exc}; nothing written") from None
    if output is not None and key is None and os.path.exists(f"{output}{SIGNATURE_SUFFIX}"):
        raise EngramError(
            f"{output}{SIGNATURE_SUFFIX} signs the file --output would replace, and pinned readers would leave "
            f"the new one out: sign it with --sign-key, or delete {output}{SIGNATURE_SUFFIX} to publish it "
            "unsigned; nothing written",
            2,
        )
    try:
        results, exported = _compile_all(ws, output, scope)
    except (OSError, TimeoutError) as exc:
        raise EngramError(f"cannot write the index: {exc}") from None
    for result in results:
        for line in result.repaired:
            warning(line)
        for problem in result.problems:
            say(str(problem))
    native = native_rules.sync(ws.root, ws.config)
    for line in native.warnings:
        warning(line)
    _note_stray_files(ws)
    out(summary_line(results))
    if native.summary:
        out(native.summary)
    if output is not None and not exported:
        raise EngramError(
            f"not written: {output} would publish the flagged memories above; remove what they hold first"
        )
    if output is not None:
        out(f"wrote {output}")
    if key is not None:
        try:
            public = sign_index(str(output), key)
        except (IndexFileError, OSError) as exc:
            raise EngramError(f"cannot sign {output}: {exc}") from None
        out(f'signed {output} ({output}{SIGNATURE_SUFFIX}); pin it with "global_index_key": "{public}"')
    # A global folder's invalid file fails only its own index (where no project is, or exported):
    # a project that reads the folder cannot fix it (`check._as_global_warning`).
    own = {"workspace", *([scope] if output is not None else []), *([] if os.path.isdir(ws.root.path) else ["global"])}
    return 1 if any(r.invalid for r in results if r.root.scope in own) else 0


def summary_line(results: list[CompileResult]) -> str:
    """Memories and invalid files add up to the files; added, changed and removed count files."""
    total = {key: sum(getattr(r, key) for r in results) for key in COUNTS}
    # indexed, but never shown to an agent: said beside the counts, not only in the lines above them
    flagged = len({p.where for r in results for p in r.problems if p.kind == "flagged"})
    return (
        f"indexed {counted(total['total'], 'memory', 'memories')} from {counted(total['files'], 'file', 'files')} "
        f"({total['added']} added, {total['changed']} changed, {total['removed']} removed, {total['invalid']} invalid"
        f"{f', {flagged} flagged' if flagged else ''})"
    )


def counted(number: int, one: str, many: str) -> str:
    return f"{number} {one if number == 1 else many}"


LEFTOVER_HINT = " (delete them after the merge, or rename a memory named so)"


def _note_stray_files(ws: Workspace) -> None:
    """Markdown files a root holds outside rules/, skills/ and knowledge/, and other tools' rule
    files inside them (Cursor's `.mdc`) or a merge tool's copies, are never indexed: say so."""
    for root in ws.roots:
        _note_unindexed(root, stray_files(root), "outside rules/, skills/ and knowledge/", "")
        other_format, merge_copies = unindexed_files(root)
        _note_unindexed(root, other_format, "engram reads *.md", " (rename them to .md)")
        _note_unindexed(root, merge_copies, "named as a merge tool's copies", LEFTOVER_HINT)


def _note_unindexed(root: Root, rels: list[str], why: str, hint: str) -> None:
    if rels:
        shown = [display_path(root, rel) for rel in rels[:STRAY_SHOWN]]
        more = f" and {len(rels) - STRAY_SHOWN} more" if len(rels) > STRAY_SHOWN else ""
        say(f"note: {counted(len(rels), 'file', 'files')} not indexed, {why}: {', '.join(shown)}{more}{hint}")


def run_check(as_json: bool) -> int:
    import tempfile

    from .check import check_workspace

    ws = open_workspace()
    _require_roots(ws)
    with tempfile.TemporaryDirectory(prefix="engram-check-") as scratch:  # config problems are among its findings
        reports = check_workspace(ws, scratch)
    fresh = all(r.fresh for r in reports)
    if as_json:
        payload = {
            "fresh": fresh,
            "roots": [
                {
                    "scope": r.root.scope,
                    "path": gate.file_path(str(r.root.path)),
                    "problems": [p.as_json() for p in r.problems],
                }
                for r in reports
            ],
        }
        out(json.dumps(payload, indent=2, ensure_ascii=False))
        return 0 if fresh else 1
    problems = [problem for report in reports for problem in report.problems]
    for problem in problems:
        out(str(problem))
    # files, as `index` counts them: a file with two errors or two secrets is one
    kinds = Counter(kind for kind, _ in dict.fromkeys((p.kind, p.where) for p in problems if p.kind != "warning"))
    out(
        "engram check: fresh"
        if fresh
        else f"engram check: not fresh ({', '.join(f'{n} {k}' for k, n in kinds.items())})"
    )
    return 0 if fresh else 1


def run_verify(index_file: Path | None) -> int:
    ws = open_workspace()
    paths = [index_file] if index_file else [root.index_path for root in ws.roots]
    failed = False
    for path in paths:
        findings = verify_index(path, _rebuild_hint(path, ws))
        signed = None
        if index_file is not None and not findings:
            signed, bad = signature_line(index_file, ws.config.get("global_index_key"))
            findings += [bad] if bad else []
        for finding in findings:
            out(finding)
        if not findings:
            out(f"OK {path}" + (f", {signed}" if signed else ""))
        failed = failed or bool(findings)
    if index_file is None:
        for root in ws.roots:
            for line in repaired_lines(root.data):
                out(line)
    return 1 if failed else 0


def _rebuild_hint(index_path: str | Path, ws: Workspace) -> str:
    """`engram index` rebuilds a root's own index; any other file only `engram index --output` does."""
    own = {os.path.realpath(root.index_path) for root in ws.roots}
    return LOCAL_REBUILD if os.path.realpath(index_path) in own else SHARED_REBUILD


def run_graph(task: str | None, rebuild: bool) -> int:
    ws = open_workspace()
    _require_roots(ws)
    if rebuild:
        for result in _compile_all(ws, None, "workspace")[0]:
            for problem in result.problems:
                say(str(problem))
    for root in ws.roots:
        if not os.path.isdir(root.path):
            continue
        try:
            conn = open_index(root.index_path)
        except IndexFileError as exc:
            raise EngramError(f"{exc}" + ("" if rebuild else "; `engram graph --rebuild` builds it")) from None
        lines = describe(conn) if task is None else _task_graph(conn, task, ws)
        out("\n".join(lines))
    return 0


def _task_graph(conn, task: str, ws: Workspace) -> list[str]:
    """The graph restricted to what `task` routes to, prerequisites included."""
    from .layers import open_layers
    from .pack import with_prerequisites
    from .route import route
    from .select import options_from_config

    options = options_from_config(ws.config)
    routing = route(open_layers(ws, None, []), task, options)
    return describe(conn, {c.id for c in with_prerequisites(routing, options, options.limit)})

"""What `engram index`, `check` and `verify` do, as plain functions returning exit codes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from . import gate, native_rules
from .compile import CompileResult, compile_root, export_index
from .freshness import check_sources
from .graph import describe
from .index import IndexFileError, open_index
from .trust import SIGNATURE_SUFFIX, sign_index
from .verify import repaired_lines, signature_line, verify_index
from .workspace import Workspace, open_workspace


def _err(line: str) -> None:
    print(f"engram: {line}", file=sys.stderr)


def _warn_config(ws: Workspace) -> None:
    for problem in ws.config.problems:
        _err(f"warning: {problem}")


def _compile_all(ws: Workspace, output: Path | None, scope: str) -> list[CompileResult]:
    """Every root compiled (its damage repaired and said); ``output``: the shareable copy."""
    results = []
    for root in ws.roots:
        if output is not None and root.scope == scope:
            results.append(export_index(root, ws.config, output))
        else:
            results.append(compile_root(root, ws.config, progress=True))
    return results


def run_index(output: Path | None, scope: str, sign_key: Path | None = None) -> int:
    ws = open_workspace()
    _warn_config(ws)
    if scope not in ("workspace", "global"):
        _err("error: --scope must be workspace or global")
        return 2
    if scope == "global" and ws.global_root is None:
        _err("error: no global root: set ENGRAM_GLOBAL_DIR or global_path")
        return 1
    if not os.path.isdir(ws.root.path) and ws.global_root is None:
        _err(f"error: no memory root at {ws.root.path}; run `engram init`")
        return 1
    if sign_key is not None and output is None:
        _err("error: --sign-key signs the file --output writes; give --output too")
        return 2
    try:
        results = _compile_all(ws, output, scope)
    except (OSError, TimeoutError) as exc:
        _err(f"error: cannot write the index: {exc}")
        return 1
    for result in results:
        for line in result.repaired:
            _err(f"warning: {line}")
        for problem in result.problems:
            _err(str(problem))
    native = native_rules.sync(ws.root, ws.config)
    for warning in native.warnings:
        _err(f"warning: {warning}")
    total = {key: sum(getattr(r, key) for r in results) for key in ("total", "added", "changed", "removed", "invalid")}
    print(
        f"indexed {total['total']} memories ({total['added']} added, {total['changed']} changed, "
        f"{total['removed']} removed, {total['invalid']} invalid)"
    )
    if native.summary:
        print(native.summary)
    if output is not None:
        print(f"wrote {output}")
    if sign_key is not None:
        try:
            key = sign_index(str(output), str(sign_key))
        except (IndexFileError, OSError) as exc:
            _err(f"error: cannot sign {output}: {gate.line(str(exc))}")
            return 1
        print(f"signed {output} ({output}{SIGNATURE_SUFFIX}); pin it with \"global_index_key\": \"{key}\"")
    return 1 if total["invalid"] else 0


def run_check(as_json: bool) -> int:
    ws = open_workspace()
    reports = [check_sources(root, ws.config) for root in ws.roots]
    reports[0].problems += native_rules.check(ws.root, ws.config)  # ws.roots[0] is the workspace root
    fresh = all(r.fresh for r in reports)
    if as_json:
        payload = {
            "fresh": fresh,
            "roots": [
                {"scope": r.root.scope, "path": str(r.root.path), "problems": [p.as_json() for p in r.problems]}
                for r in reports
            ],
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        for report in reports:
            for problem in report.problems:
                print(problem)
        print("engram check: fresh" if fresh else "engram check: not fresh; run `engram index`")
    return 0 if fresh else 1


def run_verify(index_file: Path | None) -> int:
    ws = open_workspace()
    paths = [index_file] if index_file else [root.index_path for root in ws.roots]
    failed = False
    for path in paths:
        findings = verify_index(path)
        signed = None
        if index_file is not None and not findings:
            signed, bad = signature_line(index_file, ws.config.get("global_index_key"))
            findings += [bad] if bad else []
        for finding in findings:
            print(finding)
        if not findings:
            print(f"OK {path}" + (f", {signed}" if signed else ""))
        failed = failed or bool(findings)
    if index_file is None:
        for root in ws.roots:
            for line in repaired_lines(root.path):
                print(line)
    return 1 if failed else 0


def run_graph(task: str | None, rebuild: bool) -> int:
    ws = open_workspace()
    if rebuild:
        for result in _compile_all(ws, None, "workspace"):
            for problem in result.problems:
                _err(str(problem))
    for root in ws.roots:
        try:
            conn = open_index(root.index_path)
        except IndexFileError as exc:
            _err(f"error: {exc}; run `engram graph --rebuild`")
            return 1
        lines = describe(conn) if task is None else _task_graph(conn, task, ws)
        print(gate.text("\n".join(lines)))
    return 0


def _task_graph(conn, task: str, ws: Workspace) -> list[str]:
    """The graph restricted to what `task` routes to, prerequisites included."""
    from .layers import open_layers
    from .pack import with_prerequisites
    from .route import Options, route

    options = Options(limit=ws.config.get("load.limit"), roles=tuple(ws.config.get("roles")))
    routing = route(open_layers(ws, None, []), task, options)
    return describe(conn, {c.id for c in with_prerequisites(routing.pack, options, options.limit)})

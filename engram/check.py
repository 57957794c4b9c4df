"""`engram check`, the CI gate: the question a pull request asks, answered on a fresh clone.

Are the sources valid and unflagged, is every committed generated file (native
rule files, a shared index named in config) exactly what `engram index` would
write now, and is a local index, where there is one, current? `index.db` is
kept out of git, so a clone has none: what the comparison needs is built in a
temporary folder, and nothing is written into the project.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

from . import native_rules
from .compile import compile_to
from .config import Config
from .errors import Problem
from .freshness import (
    built_here,
    compare_sources,
    flagged_problems,
    ignore_rules,
    open_usable,
    recorded_problems,
    unseen_problems,
)
from .index import IndexFileError, connect_readonly, read_meta
from .layers import open_prebuilt, recorded_sources
from .paths import is_inside, sha256_file, shown_path
from .sources import INDEX_FILE, Root, display_path, unindexed_files
from .trust import Pin, read_signature, signature_path
from .verify import verify_index
from .workspace import Workspace


class Report:
    """What `engram check` found for one root."""

    def __init__(self, root: Root) -> None:
        self.root = root
        self.problems: list[Problem] = []

    @property
    def fresh(self) -> bool:
        return not any(p.kind != "warning" for p in self.problems)


def check_workspace(ws: Workspace, scratch: str) -> list[Report]:
    """One report per root, the workspace root first; ``scratch`` is an empty temporary folder."""
    reports = []
    for root in ws.roots:
        report = Report(root)
        if os.path.isdir(root.path):
            reference = reference_index(root, ws.config, os.path.join(scratch, f"{root.scope}.db"), report)
            report.problems += source_problems(reference, root, ws.config)
            report.problems += ignore_rules(root, ws.config)[1]
            report.problems += other_format_problems(root)
            if root.scope == "workspace":
                report.problems += native_rules.check(root, ws.config, reference, git_ignored(root.project))
            elif os.path.isdir(ws.root.path):  # a project reading the folder; else the folder's own check
                report.problems = [_as_global_warning(p) for p in report.problems]
        reports.append(report)
    reports[0].problems[:0] = config_problems(ws.config) + global_notes(ws)
    reports[0].problems += shared_index_problems(ws, os.path.join(scratch, "shared.db"))
    return reports


def other_format_problems(root: Root) -> list[Problem]:
    """Another tool's rule file in a memory folder (Cursor's `.mdc`) is a warning: copied there to
    be a memory, it is none, and a check that passes on an empty folder would hide it. So is a merge
    tool's copy (`x_BASE_1234.md`), which is never indexed."""
    other_format, merge_copies = unindexed_files(root)
    return [
        Problem(display_path(root, rel), "not indexed: a memory is a *.md file (rename it)", kind="warning")
        for rel in other_format
    ] + [
        Problem(display_path(root, rel), "not indexed: named as a merge tool's copy", kind="warning")
        for rel in merge_copies
    ]


def config_problems(config: Config) -> list[Problem]:
    """A config engram cannot use as written fails the gate: its bad values fall back to their
    defaults, so the team's settings would silently not apply."""
    return [
        Problem(*problem.split(": ", 1)) if ": " in problem else Problem("config", problem)
        for problem in config.problems
    ]


def _as_global_warning(problem: Problem) -> Problem:
    """A global folder's problem, in a project's check: a warning. The project cannot fix it, and its
    CI, with no such folder, never sees it: a failure would block every developer's commit in every
    project that reads the folder (a rollout audit's pre-commit did). The folder's own check (run
    where no project is, with the folder as the global root) fails on it."""
    if problem.kind == "warning":
        return problem
    return problem._replace(reason=f"{problem.reason} ({problem.kind}, in the global folder)", kind="warning")


def global_notes(ws: Workspace) -> list[Problem]:
    """A global folder configured that is not used is a warning, not a failure: a CI machine may
    well lack someone's personal folder."""
    notes = (note.split(": ", 1) for note in ws.global_notes())
    return [Problem(where, reason, kind="warning") for where, reason in notes]


def reference_index(root: Root, config: Config, scratch_path: str, report: Report) -> str:
    """The path of an index that is what `engram index` would build now: the local one when it is
    current and engram built it here, else one built at ``scratch_path`` (from the local
    one when it is usable and engram's own).

    The local index's differences from the sources go into ``report``, but for a copy git keeps
    out of the project (a CI cache restored, a copied checkout): `load` rebuilds such a one before
    serving from it, and the change under check is not behind because it is.
    """
    if _restored_cache(root):
        compile_to(root, config, scratch_path, None)
        return scratch_path
    local = open_usable(root.index_path, thorough=True)
    if local is None and os.path.exists(root.index_path):
        report.problems.append(
            Problem(
                display_path(root, INDEX_FILE),
                "the local index cannot be used as is (damaged, or built by another engram); `engram index` rebuilds it",
                kind="stale",
            )
        )
    try:
        behind = compare_sources(local, root, config) if local is not None else []
        report.problems += behind
        committed = False
        if local is not None and not built_here(root):
            # a committed index.db (a fresh clone's) may say a flagged memory is clean: what the gate
            # reports is built here from the sources
            committed = True
            local.close()
            local = None
        if local is not None and not behind:
            return root.index_path
        compile_to(root, config, scratch_path, local)
        if committed and not behind and _rows(root.index_path) != _rows(scratch_path):
            # its sources' digests can match while its rows differ: an index of no memory file matches
            # an empty folder's, and served memories no file holds (a red-team audit)
            report.problems.append(Problem(display_path(root, INDEX_FILE), NOT_FROM_SOURCES, kind="stale"))
        return scratch_path
    finally:
        if local is not None:
            local.close()


NOT_FROM_SOURCES = "not what `engram index` builds from the sources (it holds other memories); run `engram index`"


def _restored_cache(root: Root) -> bool:
    """A local index engram did not build here, which git ignores (not committed)."""
    index = Path(root.index_path)
    return index.exists() and not built_here(root) and bool(git_ignored(root.project)([index]))


def source_problems(index_path: str, root: Root, config: Config) -> list[Problem]:
    """Invalid files, unknown `depends_on` ids and cycles, memories the screen flagged, and (warnings)
    memories no agent sees as written."""
    conn = connect_readonly(index_path)
    try:
        return recorded_problems(conn, root) + flagged_problems(conn, root) + unseen_problems(conn, root, config)
    finally:
        conn.close()


def git_ignored(project: str) -> Callable[[list[Path]], set[Path]]:
    """A function picking the paths git ignores in ``project`` (none outside a git work tree)."""

    def ignored(paths: list[Path]) -> set[Path]:
        try:
            out = subprocess.run(
                ["git", "-C", project, "check-ignore", "--stdin", "-z"],
                input="\0".join(map(str, paths)),
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError):
            return set()
        return {Path(name) for name in out.stdout.split("\0") if name} if out.returncode in (0, 1) else set()

    return ignored


def shared_index_problems(ws: Workspace, scratch_path: str) -> list[Problem]:
    """The shared index `global_index` names. One this project builds (inside it, from its
    sources) must be what `engram index --output` builds from them now. One copied in from
    elsewhere (its sources not here) is checked for integrity only, and must not be rebuilt from
    this project's memories. Any that `load` would not use (unreadable, or failing its pin) is a
    warning where it is on this machine only, as `load` says, and fails where it is committed here."""
    path = ws.global_index_path
    if path is None:
        return []
    shown = shown_path(path, ws.root.project)
    inside = is_inside(path, os.path.realpath(ws.root.project))
    if not os.path.isfile(path):  # one from elsewhere may be on someone's machine only: a warning, as `load` gives
        if inside:
            return [Problem(shown, "named by global_index in config, but there is no such file", kind="missing")]
        return [Problem(shown, "global index not used: no index file", kind="warning")]
    meta = read_meta_of(path)
    sources = recorded_sources(path, meta)
    own = inside and sources is not None and is_inside(sources, os.path.realpath(ws.root.project))
    scope = meta.get("scope", "workspace")  # a global folder's own export is rebuilt with --scope global
    # A committed file must be whole and, where this project builds and signs it, signed as it is;
    # one from elsewhere that is damaged routes differently without a word (docs/safety.md): a warning.
    findings = verify_index(path, _mend(path, own, scope) if inside else "get it again from where it is published")
    if own:  # one copied in is checked against its pin as `load` does (`_unusable`)
        findings += _signature_findings(path, scope)
    if findings:
        kind = "stale" if inside else "warning"
        return [Problem(shown, finding.removeprefix(f"{path}: "), kind=kind) for finding in findings]
    problems = _unusable(ws, path, shown, inside)
    if own and sources is not None:
        problems += _stale_export(ws, path, meta, sources, scratch_path)
    return problems


def _mend(path: str, own: bool, scope: str) -> str:
    """What mends a committed shared index: rebuilding it where this project's memories are its
    sources (the command as run where check runs: from a subfolder, a project-relative path would
    write a stray file there), else a good copy of the file it came from."""
    if not own:
        return "copy it again from where the shared index is published and commit it"
    return f"rebuild it with `{_rebuild_command(path, scope)}` and commit it"


def _rebuild_command(path: str, scope: str) -> str:
    command = "engram index" + (" --scope global" if scope == "global" else "")
    command += f" --output {shlex.quote(shown_path(path, os.getcwd()))}"
    signed = os.path.exists(signature_path(path))  # a rebuild without the key would leave the old signature
    return command + (" --sign-key <your signing key>" if signed else "")


def _signature_findings(path: str, scope: str) -> list[str]:
    """This project's committed export whose signature is of another file: every reader that pins
    its key leaves it out."""
    try:
        record = read_signature(path)
    except IndexFileError as exc:
        bad = str(exc)
    else:  # the digest only: whether the signature verifies is `engram verify`'s (it needs the sign extra)
        if record is None or record["sha256"] == sha256_file(path):
            return []
        bad = f"its signature ({os.path.basename(signature_path(path))}) is of another file"
    return [f"{bad}; sign it again with `{_rebuild_command(path, scope)}` and commit both"]


def _unusable(ws: Workspace, path: str, shown: str, committed: bool) -> list[Problem]:
    """Where `load` would leave the shared index out (its pin failed, or it cannot be read): a warning
    for a file on this machine only, a failure for one committed here (a swapped file fails its pin)."""
    pin = Pin(ws.config.get("global_index_key"), ws.config.get("global_index_sha256"))
    try:
        open_prebuilt(path, "global", pin).conn.close()
    except IndexFileError as exc:
        reason = f"global index not used: {str(exc).removeprefix(f'{path}: ')}"
        return [Problem(shown, reason, kind="unusable" if committed else "warning")]
    return []


def _stale_export(ws: Workspace, path: str, meta: dict[str, str], sources: str, scratch_path: str) -> list[Problem]:
    """This project's own export (its ``meta`` read once), compared with a build of its sources now."""
    project = ws.root.project if sources == ws.root.path else sources
    scope = meta.get("scope", "workspace")
    compile_to(Root(sources, scope, project), ws.config, scratch_path, None)
    # Its rows too, not only what its meta says of its sources: a commit that copied the meta of the
    # good build onto a build of other sources passed (a red-team audit)
    if _content_key(meta) == _content_key(read_meta_of(scratch_path)) and _rows(path) == _rows(scratch_path):
        return []
    reason = f"not what `{_rebuild_command(path, scope)}` writes now (its sources changed); rebuild it and commit it"
    return [Problem(shown_path(path, ws.root.project), reason, kind="stale")]


def _content_key(meta: dict[str, str]) -> tuple:
    """What makes two builds of the same sources hold the same memories (build times and file
    stats differ between clones)."""
    return tuple(meta.get(key) for key in ("schema_version", "tokenizer", "compiler", "fingerprint", "ignore_digest"))


def _rows(index_path: str) -> list[tuple]:
    """Every stored memory row as built (its rowid aside: build order is no content)."""
    conn = connect_readonly(index_path)
    try:
        return [row[1:] for row in conn.execute("SELECT * FROM memories ORDER BY id")]
    except sqlite3.DatabaseError:
        return []
    finally:
        conn.close()


def read_meta_of(index_path: str) -> dict[str, str]:
    conn = connect_readonly(index_path)
    try:
        return read_meta(conn)
    except sqlite3.DatabaseError:
        return {}
    finally:
        conn.close()

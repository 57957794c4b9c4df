"""The labelled task sets the relevance decision is fitted and measured on, and how each is split.

A set is a cases file (a JSON list of ``{"query", "expect", "accept", ...}``) routed over one
memory folder, or over one folder per case (``corpus`` names it). Every set is split the same
way: a fixed share of its cases, chosen by a hash of the set's name and the case, is held out
(never seen by fitting); some sets are held out whole. Bundled sets live in ``fixtures/``;
development sets of third-party text are read from a folder given on the command line and never
copied into the project.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
CURSORRULES = FIXTURES / "cursorrules" / ".agents" / ".engram"
HELD_OUT_SHARE = 0.4


class TaskSet:
    """Cases and where each one routes: ``folder(case)`` is the memory root (holding rules/,
    skills/, knowledge/) or a flat folder of memory files (copied into rules/)."""

    def __init__(self, name: str, cases: Path, folder: Callable[[dict], Path], held_out_whole: bool = False) -> None:
        self.name = name
        self.cases_path = cases
        self.folder = folder
        self.held_out_whole = held_out_whole

    def cases(self) -> list[dict]:
        return json.loads(self.cases_path.read_text(encoding="utf-8"))

    def is_held_out(self, case: dict) -> bool:
        if self.held_out_whole:
            return True
        key = f"{self.name}/{case.get('id') or case['query']}".encode()
        return hashlib.sha256(key).digest()[0] / 256 < HELD_OUT_SHARE


def _one(folder: Path) -> Callable[[dict], Path]:
    return lambda case: folder


def bundled() -> list[TaskSet]:
    bench = FIXTURES / "bench"
    over_rules = ["cursorrules", "cursorrules-heldout", "cursorrules-heldout-2", "cursorrules-heldout-3"]
    sets = [TaskSet(name, bench / f"{name}.json", _one(CURSORRULES)) for name in over_rules]
    sets += [
        TaskSet(name, bench / f"{name}.json", _one(CURSORRULES))
        for name in ("long-prompts", "homonyms", "cjk-mixed", "multi-topic")
    ]
    sets.append(
        TaskSet("multilingual", bench / "multilingual.json", _one(FIXTURES / "multilingual" / ".agents" / ".engram"))
    )
    for name in ("small-shop", "ledgerly"):
        sets.append(TaskSet(name, bench / f"{name}.json", _one(FIXTURES / "folders" / name / ".agents" / ".engram")))
    for name in ("tidewater", "harbor", "emberfall", "frostline"):  # written to judge, never fitted on
        root = FIXTURES / "folders" / name / ".agents" / ".engram"
        sets.append(TaskSet(name, bench / f"{name}.json", _one(root), held_out_whole=True))
    return sets


def quality_dev(folder: Path) -> list[TaskSet]:
    """The development sets of real text (real issues over the bundled rules; real teams' rule
    folders with their own issues), where that folder is present."""
    out = []
    if (folder / "real-issues.json").is_file():
        out.append(TaskSet("real-issues", folder / "real-issues.json", _one(CURSORRULES)))
    teams = folder / "teams"
    if (teams / "cases.json").is_file():
        out.append(TaskSet("teams", teams / "cases.json", lambda case: teams / case["corpus"] / "rules"))
    return out


def extra(spec: str, held_out_whole: bool = True) -> TaskSet:
    """``NAME=CASES.json:FOLDER`` (FOLDER: a memory root, or a flat folder of memory files, or, for
    cases naming a ``corpus``, a folder of such corpora laid out as the teams set is, each in
    ``<corpus>/rules``; the bundled rules when left out): a further set kept outside the project,
    held out whole, or split as the development sets are."""
    name, _, rest = spec.partition("=")
    cases, _, folder = rest.partition(":")
    return TaskSet(name, Path(cases), _corpus_or(Path(folder) if folder else CURSORRULES), held_out_whole)


def _corpus_or(folder: Path) -> Callable[[dict], Path]:
    """The case's own corpus under ``folder`` where it names one that is there, else ``folder``."""

    def where(case: dict) -> Path:
        corpus = case.get("corpus")
        return folder / corpus / "rules" if corpus and (folder / corpus / "rules").is_dir() else folder

    return where

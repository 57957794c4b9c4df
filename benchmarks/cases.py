"""Labelled tasks routed through engram's own read path, for measuring and fitting.

A `Folder` is a throw-away project holding one memory folder, indexed by `engram.compile`; a
`Case` is one labelled task gathered over it once (`route.gather`: its evidence and judged
candidates), so fitting can score it again under other weights without routing it again.
"""

from __future__ import annotations

import shutil
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import sets
from engram import relevance, route
from engram.benchmark import Scores
from engram.compile import compile_root
from engram.layers import open_layers
from engram.select import options_from_config, pack_options_from_config, select_pack
from engram.workspace import open_workspace

DOCUMENTS = "docs-tree"  # beside a set's flat rule folder: the project's files its pointer memories link to
PARTS = "folder-parts"  # fitting's cases over parts of folders (`fit.subset_cases`): they weigh as one set
TASKS = "all sets"  # every case but the folder parts


class Folder:
    """A throw-away project holding one memory folder, indexed by engram."""

    def __init__(self, source: Path, work: Path) -> None:
        self.project = work / f"p{abs(hash(source))}"
        root = self.project / ".agents" / ".engram"
        if any((source / sub).is_dir() for sub in ("rules", "skills", "knowledge")):
            shutil.copytree(source, root)
        else:
            (root / "rules").mkdir(parents=True)
            for path in source.glob("*.md"):
                shutil.copy(path, root / "rules" / path.name)
        for files in _project_files(source):  # the documents its pointer memories link to, where they were
            copy = shutil.copytree if files.is_dir() else shutil.copy
            copy(files, self.project / files.name)
        (self.project / ".git").mkdir()  # the project's top: no folder above is searched
        self.ws = open_workspace(self.project)
        compile_root(self.ws.root, self.ws.config)
        self.layers = open_layers(self.ws, None, [])
        self.source = source


def _project_files(source: Path) -> list[Path]:
    """The files of the project a memory folder belongs to: beside a bundled project's
    `.agents/.engram`, or in a `docs-tree/` beside a set's flat rule folder."""
    if source.name == ".engram" and source.parent.name == ".agents":
        return [path for path in source.parent.parent.iterdir() if path.name != ".agents"]
    return list((source.parent / DOCUMENTS).iterdir()) if (source.parent / DOCUMENTS).is_dir() else []


class Case:
    """One labelled task, gathered once: its evidence and judged candidates (`route.gather`)."""

    def __init__(self, task_set: sets.TaskSet, case: dict, folder: Folder) -> None:
        self.set = task_set.name
        self.query = case["query"]
        self.expect = set(case.get("expect", []))
        self.accept = set(case.get("accept", []))
        self.label = case
        self.held_out = task_set.is_held_out(case)
        self.folder = folder
        self.options = options_from_config(folder.ws.config)
        self.routing, self.found = route.gather(folder.layers, self.query, self.options)
        self.judged = [j for m in self.found for j in m.judged]
        self.memories = max((m.evidence.total for m in self.found), default=0)  # of the largest index
        self.ranked: list[tuple[str, float, float]] = []  # (id, score, relevance) under the model scored last
        self.task: dict[str, float] = {}
        self.on_topic = 0.0
        self.named = 0.0  # the relevance of the best candidate named for a word of the task
        self.everyday = False  # everyday text in another language around a stack's name
        self.implied = 0.0  # ... named or tagged for a technology the task implies
        self.named_id = self.implied_id = ""  # those two candidates' ids
        self.thin: set[str] = set()  # the candidates holding the task's words in their bodies alone
        self.triggered: set[str] = set()  # the candidates a trigger phrase of which the task writes

    def score(self, model: relevance.Model) -> None:
        """Rank the candidates as `route` does under ``model``'s candidate weights."""
        for j in self.judged:
            j.rescore(model.candidate_relevance(j.features))
        route.rank(self.routing, self.found)
        self.ranked = [(c.id, c.score, c.relevance) for c in self.routing.admitted]
        self.everyday = any(m.everyday for m in self.found)  # no small-folder override then (`route._decide`)
        named = None if self.everyday else route.named_candidate(self.routing.admitted)
        implied = route.implied_candidate(self.routing)
        self.named, self.named_id = (named.relevance, named.id) if named else (0.0, "")
        self.implied, self.implied_id = (implied.relevance, implied.id) if implied else (0.0, "")
        self.thin = {c.id for c in self.routing.admitted if route.is_thin(c)}
        self.triggered = {c.id for c in route.triggered_candidates(self.routing)}
        self.task = route.query_features(self.routing, self.found, self.query) if self.ranked else {}


def gather(task_sets: list[sets.TaskSet], work: Path) -> list[Case]:
    folders: dict[Path, Folder] = {}
    cases = []
    for task_set in task_sets:
        for case in task_set.cases():
            source = task_set.folder(case).resolve()
            if source not in folders:
                folders[source] = Folder(source, work)
            cases.append(Case(task_set, case, folders[source]))
    return cases


def set_scores(cases: list[Case], pack_of) -> dict[str, dict]:
    groups: dict[str, Scores] = defaultdict(Scores)
    for case in cases:
        ids = pack_of(case)
        groups[case.set].add(case.label, ids)
        groups["all"].add(case.label, ids)
        if case.set != PARTS:
            groups[TASKS].add(case.label, ids)
    return {name: scores.summary() for name, scores in groups.items()}


def runtime_scores(cases: list[Case], model: relevance.Model) -> dict[str, dict]:
    """What `engram load` itself packs under ``model``."""

    def pack_of(case: Case) -> list[str]:
        options = options_from_config(case.folder.ws.config)
        options.model = model
        _, pack = select_pack(case.folder.layers, case.query, options, pack_options_from_config(case.folder.ws.config))
        return [e.cand.id for e in pack.selected]

    return set_scores(cases, pack_of)

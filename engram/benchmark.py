"""`engram benchmark FIXTURE.json`: routing quality of the current workspace on labelled queries.

Each case is ``{"query": ..., "expect": [ids], "accept": [ids]}`` (``expect``
empty for a query that should load nothing; an optional ``lang`` groups the
numbers). The pack is what `engram load` would select (`select`), without the
boost of earlier `load --id` fetches, so the numbers do not depend on this
clone's history.
"""

from __future__ import annotations

import json
import os
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from . import gate
from .errors import EngramError
from .layers import Layer, invalid_note, open_layers
from .pack import Pack
from .render import miss_reasons
from .route import Routing
from .select import options_from_config, pack_options_from_config, select_pack
from .workspace import Workspace, open_workspace


@dataclass
class Scores:
    positives: int = 0
    hits: int = 0
    recall: float = 0.0
    reciprocal_rank: float = 0.0
    precision: float = 0.0
    packs: int = 0  # positive queries that loaded something (precision's denominator)
    negatives: int = 0
    silent_negatives: int = 0
    loaded: int = 0  # memories selected over all queries (the mean pack's numerator)
    misses: list[str] = field(default_factory=list)
    miss_reasons: list[list[str]] = field(default_factory=list)  # per miss, what the routing said

    def add(self, case: dict, pack_ids: list[str], explain=None) -> None:
        """Count a case; ``explain(expect)`` gives the lines that say why a miss missed."""
        expect = set(case.get("expect", []))
        self.loaded += len(pack_ids)
        if not expect:
            self.negatives += 1
            self.silent_negatives += not pack_ids
            if pack_ids:
                self._miss(f"off-topic loaded {','.join(pack_ids)}: {_named(case)}", explain, pack_ids)
            return
        self.positives += 1
        found = [i for i in pack_ids if i in expect]
        self.hits += bool(found)
        self.recall += len(found) / len(expect)
        first = next((rank for rank, i in enumerate(pack_ids, 1) if i in expect), None)
        self.reciprocal_rank += 1 / first if first else 0.0
        relevant = expect | set(case.get("accept", []))
        if pack_ids:
            self.packs += 1
            self.precision += sum(i in relevant for i in pack_ids) / len(pack_ids)
        missing = sorted(expect.difference(found))
        if missing:  # a hit that left some expected memory out is listed too: recall is what it lost
            what = "missed" if not found else "partly missed"
            got = ",".join(pack_ids) or "nothing"
            shown = ",".join(map(gate.name, missing))  # a fixture's ids are text like the query: screened
            self._miss(f"{what} {shown} (got {got}): {_named(case)}", explain, missing)
        if extra := [i for i in pack_ids if i not in relevant]:  # what precision lost, and to which memory
            shown = ",".join(map(gate.name, extra))
            self._miss(f"also loaded {shown} (not expected or accepted): {_named(case)}", explain, extra)

    def _miss(self, line: str, explain, ids: list[str]) -> None:
        self.misses.append(line)
        self.miss_reasons.append(explain(ids) if explain else [])

    def summary(self) -> dict:
        def ratio(a: float, b: int) -> float:
            return round(a / b, 3) if b else 0.0

        return {
            "queries": self.positives + self.negatives,
            "on_topic": self.positives,
            "off_topic": self.negatives,
            "hit_at_pack": ratio(self.hits, self.positives),
            "recall_at_pack": ratio(self.recall, self.positives),
            "mrr": ratio(self.reciprocal_rank, self.positives),
            "precision": ratio(self.precision, self.packs),
            "off_topic_silent": ratio(self.silent_negatives, self.negatives),
            "mean_pack": ratio(self.loaded, self.positives + self.negatives),
        }


def _named(case: dict) -> str:
    """A case as a miss names it: its id where it has one (a set's own name for it), then its query."""
    query = gate.redacted(case["query"])
    return f"[{gate.name(str(case['id']))}] {query}" if case.get("id") else query


def routed(layers: list[Layer], ws: Workspace, query: str) -> tuple[Routing, Pack]:
    """The routing of the query and the pack `engram load` would select for it."""
    options = options_from_config(ws.config, explain=True)
    return select_pack(layers, query, options, pack_options_from_config(ws.config))


class FixtureError(EngramError):
    """A fixture that cannot be run: not a JSON list of cases, or no memories to route over."""


def read_cases(fixture: Path) -> list[dict]:
    """The fixture's cases, checked: a wrong shape fails here, not halfway through the run."""
    try:
        data = json.loads(fixture.read_bytes().decode("utf-8"))
    except OSError as error:
        raise FixtureError(f"{fixture}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise FixtureError(f"{fixture}: not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise FixtureError(f"{fixture}: not JSON ({error.msg}, line {error.lineno})") from None
    except ValueError:  # a number of more than 4,300 digits
        raise FixtureError(f"{fixture}: holds a number too long to read") from None
    except RecursionError:  # the C parser recurses once per level of nesting
        raise FixtureError(f"{fixture}: nested too deeply") from None
    if not isinstance(data, list):
        raise FixtureError(f"{fixture}: not a JSON list of cases")
    for number, case in enumerate(data, 1):
        if problem := _case_problem(case):
            raise FixtureError(f"{fixture}: case {number}: {problem}")
    return data


def _case_problem(case: object) -> str | None:
    if not isinstance(case, dict):
        return 'not an object with "query", "expect" and "accept"'
    if not isinstance(case.get("query"), str):
        return '"query" is not a string'
    if "expect" not in case:  # not read as off-topic: a label left out would count as silence asked for
        return 'no "expect" (the ids that must load; [] for an off-topic task)'
    for key in ("expect", "accept"):
        ids = case.get(key, [])
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            return f'"{key}" is not a list of ids'
    if not isinstance(case.get("lang", ""), str):
        return '"lang" is not a string'
    if case.get("lang") == "all":  # the whole set's group: its cases would count twice there
        return '"lang" is "all", the name of the group of every case'
    texts = [case["query"], case.get("lang", ""), *case["expect"], *case.get("accept", [])]
    if not all(_is_unicode(text) for text in texts):
        return "holds a lone surrogate (\\ud800 ... \\udfff), which is no text"
    return None


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _index_fully(ws: Workspace) -> None:
    """Bring every memory folder's index up to date first, however long that takes: a benchmark
    measures routing, and the read path's refresh budget (`layers.REFRESH_BUDGET_S`) would leave a
    first run in a fresh copy on a busy machine with no index at all."""
    from .compile import compile_root  # the compiler (yaml, pathspec) loads only for a command that builds

    for root in ws.roots:
        if os.path.isdir(root.path):
            compile_root(root, ws.config)


def _memory_ids(layers: list[Layer]) -> set[str]:
    return {memory_id for layer in layers for (memory_id,) in layer.conn.execute("SELECT id FROM memories")}


def run_benchmark(fixture: Path) -> dict:
    cases = read_cases(fixture)
    ws = open_workspace()
    _index_fully(ws)
    layers = open_layers(ws, None, [])
    known = _memory_ids(layers)
    if not known:
        raise FixtureError(f"no memories to route over in {ws.root.path}: run it in the workspace the fixture is for")
    groups: dict[str, Scores] = defaultdict(Scores)
    for case in cases:
        routing, pack = routed(layers, ws, case["query"])
        ids = [e.cand.id for e in pack.selected]
        groups["all"].add(case, ids, lambda wanted, routing=routing, pack=pack: miss_reasons(routing, pack, wanted))
        if "lang" in case:
            groups[case["lang"]].add(case, ids)
    named = {i for case in cases for key in ("expect", "accept") for i in case.get(key, [])}
    return {
        "fixture": str(fixture),
        "results": {name: scores.summary() for name, scores in groups.items()},
        "misses": groups["all"].misses,
        "miss_reasons": groups["all"].miss_reasons,
        # labels this workspace cannot satisfy: a wrong folder, a typo, or a memory file that is not valid
        "unknown_ids": [f"{gate.name(i)}{invalid_note(layers, i)}" for i in sorted(named - known)],
    }


COLUMNS = ("queries", "hit_at_pack", "recall_at_pack", "mrr", "precision", "off_topic_silent", "mean_pack")


NAME_WIDTH = 8


def table_line(name: str, cells, width: int = NAME_WIDTH) -> str:
    """One line of the report table: a row name padded to ``width`` terminal columns, then one
    right-aligned cell per column."""
    return name + " " * (width - display_width(name)) + "".join(f"{cell:>17}" for cell in cells)


def display_width(text: str) -> int:
    """Terminal columns: a wide character (CJK, full-width forms) takes two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def format_report(report: dict) -> str:
    width = max([NAME_WIDTH, *(display_width(name) for name in report["results"])])
    lines = [table_line("group", COLUMNS, width)]
    for name, summary in report["results"].items():
        lines.append(table_line(name, (_cell(summary, c) for c in COLUMNS), width))
    return "\n".join(lines) + "\n"


OFF_TOPIC_COLUMNS = ("off_topic_silent",)  # the rest but `queries` are measured on the on-topic cases


def _cell(summary: dict, column: str):
    """A number, or n/a where the group has no case it is measured on (a language's on-topic
    tasks alone: its silence is no 0.0)."""
    if column in ("queries", "mean_pack"):  # over every case
        return summary[column]
    cases = summary["off_topic"] if column in OFF_TOPIC_COLUMNS else summary["on_topic"]
    return summary[column] if cases else "n/a"

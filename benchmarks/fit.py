"""Fit the relevance decision on labelled tasks, cross-validate it, and write its weights.

    python benchmarks/fit.py [--quality-dev DIR] [--extra|--dev NAME=CASES.json[:FOLDER] ...] [--write] [--report FILE]

Every set of `sets.py` is split into a fitting part and a held-out part that fitting never sees.
On the fitting part it fits, with k-fold cross-validation (folds by case):

1. the candidate model: a logistic regression of "this memory is expected or accepted for the
   task" on `relevance.CANDIDATE_FEATURES` (each set weighs the same, whatever its size);
2. the task model: a logistic regression of "something here is expected" on
   `relevance.QUERY_FEATURES`, computed from out-of-fold candidate relevances, so it learns from
   relevances like those it will see;
3. the thresholds (on-topic, select, relative to the best, body, plausible), by a grid search
   on the out-of-fold decisions, maximising hit and MRR averaged over the sets, with precision
   and off-topic silence kept above their floors on every set.

It prints the scores per fold and, per set, on the fitting part (cross-validated) and on the
held-out part, beside a plain FTS5 BM25 top-8 on the same cases (`quality.report`); `--write`
writes the weights to engram/relevance_weights.py, `--report` the table as markdown. Routing
runs through engram's own code (`route.gather` ... `select.select_pack`), so the decision
fitted is the one `load` makes. Needs the `fit` extra (scikit-learn).
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import quality, sets
from benchmarks.cases import PARTS, TASKS, Case, Folder, gather, set_scores
from engram import relevance

WEIGHTS_FILE = sets.ROOT / "engram" / "relevance_weights.py"
FOLDS = 5
SUBSET_SIZES = (8, 16, 40, 100)
SUBSET_DRAWS = 2
ACCEPT_WEIGHT = 0.5  # an accepted memory counts half a positive: reasonable, not required
# Precision is traded, not only held above its floor: without it every refit packed more than the
# shipped weights at the same hit (docs/routing.md, "Fitting"), and refits could not be compared.
PRECISION_WEIGHT = 0.5
PRECISION_FLOOR = 0.65  # per set, kept with a margin above the 0.60 the routing must reach
SILENCE_FLOOR = 0.92  # per set with off-topic cases, likewise above 0.90
BODY_PRECISION = 0.75  # a packed memory is a body from the score where this share is relevant
PLAUSIBLE_PRECISION = 0.3  # one left out is listed as a card from where this share is
# The hit of the bundled fixtures before the fitted decision, which it must not fall below.
HIT_FLOORS = {"cursorrules": 0.971, "cursorrules-heldout": 0.938, "cursorrules-heldout-2": 0.844,
              "cursorrules-heldout-3": 0.8, "multilingual": 0.942}  # fmt: skip
GRID = {
    "gated_from": [8, 16, 32, 64],  # the folder size from which the task decision is trusted
    "on_topic": [x / 100 for x in range(45, 86, 5)],
    "sure": [0.9, 1.01],
    "select": [0.02, 0.05, 0.1, 0.15, 0.2, 0.3],
    "relative": [0.2, 0.3, 0.4, 0.5, 0.6],
}


# --- the folders and the cases ------------------------------------------------------------------


class Subset(sets.TaskSet):
    """Fitting cases routed over a random part of their folder: folders of every size, from a
    few memories up, with the same real tasks. A task whose labelled memories are all left out
    is one the part has nothing for (an off-topic case); one with only accepted memories left is dropped."""

    def __init__(self, name: str, cases: list[dict]) -> None:
        super().__init__(name, Path(), lambda case: Path())
        self.subset_cases = cases

    def cases(self) -> list[dict]:
        return self.subset_cases

    def is_held_out(self, case: dict) -> bool:
        return False


def subset_cases(fitting: list[Case], work: Path, seed: int = 7) -> list[Case]:
    """For each folder of the fitting cases and each of SUBSET_SIZES below its size, SUBSET_DRAWS
    random parts holding the expected memories of some of its cases."""
    rng = random.Random(seed)
    by_folder: dict[Path, list[Case]] = defaultdict(list)
    for case in fitting:
        by_folder[case.folder.source].append(case)
    out = []
    # In the order of the sets and their folders' names, not their paths: the parts drawn, and so
    # the weights, are the same in every checkout.
    for _, cases in sorted(by_folder.items(), key=lambda item: (item[1][0].set, item[0].parts[-3:])):
        files = dict(cases[0].folder.layers[0].conn.execute("SELECT id, rel FROM memories"))
        for size in (s for s in SUBSET_SIZES if s < len(files)):
            for draw in range(SUBSET_DRAWS):
                chosen = _draw(rng, cases, files, size)
                folder = _subset_folder(cases[0].folder, chosen, work / f"subset-{len(out)}-{size}-{draw}")
                task_set = Subset(PARTS, [c for c in map(lambda c: _restricted(c.label, chosen), cases) if c])
                out += [Case(task_set, case, folder) for case in task_set.cases()]
    return out


def _draw(rng: random.Random, cases: list[Case], files: dict[str, str], size: int) -> set[str]:
    chosen: set[str] = set()
    for case in rng.sample(cases, len(cases)):
        if len(chosen) + len(case.expect) > size // 2:
            break
        chosen |= case.expect & files.keys()
    rest = sorted(files.keys() - chosen)
    return chosen | set(rng.sample(rest, size - len(chosen)))


def _subset_folder(base: Folder, chosen: set[str], path: Path) -> Folder:
    source = path / "memories"
    source.mkdir(parents=True)
    root = Path(base.ws.root.path)
    for memory_id, rel in base.layers[0].conn.execute("SELECT id, rel FROM memories"):
        if memory_id in chosen:
            shutil.copy(root / rel, source / f"{memory_id}.md")
    return Folder(source, path)


def _restricted(label: dict, chosen: set[str]) -> dict | None:
    expect, accept = set(label.get("expect", [])) & chosen, set(label.get("accept", [])) & chosen
    if not expect and accept:
        return None
    return {**label, "expect": sorted(expect), "accept": sorted(accept)}


# --- the models ---------------------------------------------------------------------------------


def set_weights(cases: list[Case]) -> dict[str, float]:
    """Per set, a weight that makes every set count the same."""
    counts: dict[str, int] = defaultdict(int)
    for case in cases:
        counts[case.set] += 1
    return {name: len(cases) / len(counts) / n for name, n in counts.items()}


def logistic_fit(
    rows: list[list[float]], labels: list[int], weights: list[float], names: tuple[str, ...]
) -> dict[str, float]:
    """A standardised logistic regression, with its weights given back on the raw features."""
    x, y, w = np.array(rows, dtype=float), np.array(labels), np.array(weights)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=1.0, max_iter=5000).fit((x - mean) / scale, y, sample_weight=w)
    coef = model.coef_[0] / scale
    out = {"bias": float(model.intercept_[0] - (coef * mean).sum())}
    out.update({name: float(value) for name, value in zip(names, coef)})
    return {name: round(value, 4) for name, value in out.items()}


def fit_candidates(cases: list[Case]) -> dict[str, float]:
    balance = set_weights(cases)
    rows, labels, weights = [], [], []
    for case in cases:
        for j in case.judged:
            rows.append([j.features[name] for name in relevance.CANDIDATE_FEATURES])
            labels.append(int(j.id in case.expect or j.id in case.accept))
            weights.append(balance[case.set] * (ACCEPT_WEIGHT if j.id in case.accept else 1.0))
    return logistic_fit(rows, labels, weights, relevance.CANDIDATE_FEATURES)


def fit_tasks(cases: list[Case]) -> dict[str, float]:
    """The task model, on cases already scored out of fold (``Case.task``)."""
    judged = [c for c in cases if c.ranked]
    balance = set_weights(judged)
    labels = [int(bool(c.expect)) for c in judged]
    share = sum(labels) / len(labels)
    weights = [balance[c.set] * (0.5 / share if y else 0.5 / (1 - share)) for c, y in zip(judged, labels)]
    rows = [[c.task[name] for name in relevance.QUERY_FEATURES] for c in judged]
    return logistic_fit(rows, labels, weights, relevance.QUERY_FEATURES)


def model_of(candidate: dict, query: dict, thresholds: dict | None = None) -> relevance.Model:
    return relevance.Model(candidate, query, thresholds or relevance.FITTED.thresholds)


def folds_of(cases: list[Case]) -> list[int]:
    """A fixed fold per case, spread within each set."""
    out, seen = [], defaultdict(int)
    for case in cases:
        out.append(seen[case.set] % FOLDS)
        seen[case.set] += 1
    return out


def cross_validate(cases: list[Case]) -> None:
    """Out-of-fold candidate scores and task relevances for every fitting case (``on_topic``)."""
    fold = folds_of(cases)
    for k in range(FOLDS):
        weights = fit_candidates([c for c, f in zip(cases, fold) if f != k])
        for case, f in zip(cases, fold):
            if f == k:
                case.score(model_of(weights, relevance.FITTED.query))
    for k in range(FOLDS):
        query = fit_tasks([c for c, f in zip(cases, fold) if f != k])
        model = model_of(relevance.FITTED.candidate, query)
        for case, f in zip(cases, fold):
            if f == k:
                case.on_topic = model.task_relevance(case.task) if case.ranked else 0.0


# --- the thresholds -----------------------------------------------------------------------------


def decided(
    case: Case, gated_from: int, on_topic: float, sure: float, select: float, relative: float, limit: int = 8
) -> list[str]:
    """The ids `route._decide` packs from a scored case (prerequisites aside)."""
    if not case.ranked:
        return []
    best_relevance = 0.0 if case.everyday else max(r for _, _, r in case.ranked)  # as `route._decide` judges it
    named_implied = (case.named, case.implied)
    memories = max(case.memories, gated_from) if case.everyday else case.memories
    reason = relevance.on_topic_because(
        case.on_topic, best_relevance, memories, named_implied, gated_from, on_topic, sure, select
    )
    if not case.triggered and not reason:
        return []
    best = case.ranked[0][1]
    bar = max(select, relative * best)
    ranked = sorted(case.ranked, key=lambda ranked: ranked[0] not in case.triggered)  # as `route._decide` orders it
    pack = [(i, r) for i, score, r in ranked if score >= bar or i in case.triggered][:limit]
    if reason not in relevance.TASK_DECIDED or not reason:  # one memory decided: it packs, and what is triggered
        sure_id = max(case.ranked, key=lambda ranked: ranked[2])[0]
        deciders = {relevance.NAMED_TOPIC: case.named_id, relevance.IMPLIED_TOPIC: case.implied_id}
        decider = deciders.get(reason, sure_id if reason == relevance.SURE_TOPIC else "")
        pack = [(i, r) for i, r in pack if i == decider or i in case.triggered]
    if not case.triggered and relevance.thin_pack([(r, i in case.thin) for i, r in pack], case.memories) is not None:
        return []
    return [i for i, _ in pack]


def objective(scores: dict[str, dict], cases: list[Case]) -> float:
    """Mean hit, half the mean MRR and half the mean precision over the sets, less a steep cost for
    falling below a floor:
    precision on every set, the hit the bundled fixtures had before (`HIT_FLOORS`), off-topic
    silence over all sets' off-topic cases together (the folder parts aside) and, less steeply, on
    each set (some sets' off-topic cases are in-domain tasks no memory covers)."""
    named = [n for n in scores if n not in ("all", TASKS)]
    negatives = {c.set for c in cases if not c.expect}
    value = sum(
        scores[n]["hit_at_pack"] + 0.5 * scores[n]["mrr"] + PRECISION_WEIGHT * scores[n]["precision"] for n in named
    ) / len(named)
    value -= 4 * max(0.0, SILENCE_FLOOR - scores[TASKS]["off_topic_silent"])
    for n in named:
        value -= 4 * max(0.0, PRECISION_FLOOR - scores[n]["precision"])
        value -= 4 * max(0.0, HIT_FLOORS.get(n, 0.0) - scores[n]["hit_at_pack"])
        if n in negatives:
            value -= 2 * max(0.0, SILENCE_FLOOR - scores[n]["off_topic_silent"])
    return value


def search_thresholds(cases: list[Case]) -> dict[str, float]:
    best, best_value = None, -math.inf
    for values in itertools.product(*GRID.values()):
        thresholds = dict(zip(GRID, values))
        value = objective(set_scores(cases, lambda c, thresholds=thresholds: decided(c, **thresholds)), cases)
        if value > best_value:
            best, best_value = thresholds, value
    return best


def calibrated(cases: list[Case], share: float, floor: float) -> float:
    """The lowest score from which at least ``share`` of the on-topic candidates above it are relevant."""
    points = sorted(
        ((score, i in c.expect or i in c.accept) for c in cases if c.expect for i, score, _ in c.ranked[:8]),
        reverse=True,
    )
    relevant = 0
    chosen = points[0][0] if points else 1.0
    for count, (score, good) in enumerate(points, 1):
        relevant += good
        if relevant / count >= share:
            chosen = score
    return round(max(floor, chosen), 4)


# --- reports ------------------------------------------------------------------------------------


def weights_module(model: relevance.Model, thresholds: dict, note: str) -> str:
    def block(name: str, values: dict) -> str:
        items = ",\n".join(f"    {key!r}: {value}" for key, value in values.items())
        return f"{name} = {{\n{items},\n}}\n"

    return (
        '"""Fitted weights of the relevance decision (`relevance`): written by `benchmarks/fit.py`, not by hand.\n\n'
        f'{note}\n"""\n\n# fmt: off\n'
        + block("CANDIDATE", model.candidate)
        + block("QUERY", model.query)
        + block("THRESHOLDS", thresholds)
        + "# fmt: on\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    quality.set_arguments(parser)
    parser.add_argument("--write", action="store_true", help="write engram/relevance_weights.py")
    parser.add_argument("--report", type=Path, help="write the table as markdown")
    args = parser.parse_args(argv)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="engram-fit-") as work:
        cases = gather(quality.chosen_sets(args), Path(work))
        fitting = [c for c in cases if not c.held_out]
        fitting += subset_cases(fitting, Path(work))
        print(
            f"{len(cases)} cases, {len(fitting)} for fitting (with parts of folders), gathered in {time.monotonic() - started:.0f} s"
        )
        model, cv = fit(fitting)
        if args.write:
            note = f"Fitted on {len(fitting)} cases of {len({c.set for c in fitting})} sets; see docs/routing.md."
            WEIGHTS_FILE.write_text(weights_module(model, model.thresholds, note), encoding="utf-8")
        table = quality.report(cases, model, {name: scores for name, scores in cv.items() if name != PARTS})
    print(table)
    if args.report:
        args.report.write_text(table, encoding="utf-8")
    return 0


def fit(fitting: list[Case]) -> tuple[relevance.Model, dict[str, dict]]:
    """The fitted model, and the scores of its decisions cross-validated on the fitting cases."""
    cross_validate(fitting)
    thresholds = search_thresholds(fitting)
    cv = set_scores(fitting, lambda c: decided(c, **thresholds))
    fold = folds_of(fitting)
    for k in range(FOLDS):
        part = set_scores([c for c, f in zip(fitting, fold) if f == k], lambda c: decided(c, **thresholds))["all"]
        print(
            f"fold {k + 1}: hit {part['hit_at_pack']} mrr {part['mrr']} precision {part['precision']} silent {part['off_topic_silent']}"
        )
    thresholds["body"] = calibrated(fitting, BODY_PRECISION, thresholds["select"])
    thresholds["plausible"] = min(thresholds["select"], calibrated(fitting, PLAUSIBLE_PRECISION, 0.01))
    # The task model learns from out-of-fold candidate relevances (`cross_validate` left them in
    # `Case.task`): like those it meets at run time on tasks the candidate model never saw.
    query = fit_tasks(fitting)
    candidate = fit_candidates(fitting)
    print("thresholds:", thresholds)
    return model_of(candidate, query, thresholds), cv


if __name__ == "__main__":
    sys.exit(main())

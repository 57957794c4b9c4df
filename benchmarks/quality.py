"""Routing quality of the relevance decision as shipped, beside plain BM25 in the same run.

    python benchmarks/quality.py [--quality-dev DIR] [--extra|--dev NAME=CASES.json[:FOLDER] ...] [--markdown FILE] [--depth]

For every set of `sets.py` (the bundled ones; the development sets of real text in DIR where
given), on its fitting part and on its held-out part (never seen by `fit.py`), it routes every
case through engram's own `select_pack`, exactly what `engram load` prints, and through the
plain FTS5 BM25 top-8 baseline (`baseline.py`), and prints hit, recall, MRR, precision,
off-topic silence and mean pack size side by side. `--depth` adds how far down each ranking the
expected memory is: hit at 1, 2, 3, 5 and 8 of engram's ranked candidates (before the relevance
decision cuts them) beside the baseline's, which tells a ranking miss from a cut that was too
tight. Standard library only.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import baseline, sets
from benchmarks.cases import Case, gather, runtime_scores, set_scores
from engram import relevance

DEPTHS = (1, 2, 3, 5, 8)
DEPTH_HEADER = (
    "| set | part | on-topic cases | engram ranking hit@1 / 2 / 3 / 5 / 8 | BM25 hit@1 / 2 / 3 / 5 / 8 |",
    "|---|---|---|---|---|",
)
HEADER = (
    "| set | part | cases | engram hit / recall / MRR / precision / silent / pack | BM25 top-8 hit / MRR / precision / pack |",
    "|---|---|---|---|---|",
)


def task_sets(quality_dev: Path | None, extra: list[str], dev: list[str] | None = None) -> list[sets.TaskSet]:
    """The bundled sets, the extra ones (held out whole), the further development ones (split), and
    the development sets where their folder is present."""
    chosen = sets.bundled() + [sets.extra(spec) for spec in extra]
    chosen += [sets.extra(spec, held_out_whole=False) for spec in dev or []]
    if quality_dev is not None and quality_dev.is_dir():
        chosen += sets.quality_dev(quality_dev)
    elif quality_dev is not None:
        print(f"quality: {quality_dev} is not a folder: the development sets are left out", file=sys.stderr)
    return chosen


def set_arguments(parser: argparse.ArgumentParser) -> None:
    """The options choosing the sets (`task_sets`), shared with fit.py."""
    parser.add_argument("--quality-dev", type=Path, help="the development sets of real text (left out when absent)")
    parser.add_argument("--extra", action="append", default=[], help="NAME=CASES.json[:FOLDER], a set held out whole")
    parser.add_argument(
        "--dev", action="append", default=[], help="NAME=CASES.json[:FOLDER], a set split as the others"
    )


def chosen_sets(args: argparse.Namespace) -> list[sets.TaskSet]:
    return task_sets(args.quality_dev, args.extra, args.dev)


def rows(cases: list[Case], engram_scores: dict[str, dict], part: str) -> list[str]:
    """One table row per set: engram's numbers beside the baseline's on the same cases."""
    base = set_scores(cases, baseline.pack_of)
    out = []
    for name in sorted(n for n in engram_scores if n != "all"):
        e, b = engram_scores[name], base[name]
        out.append(
            f"| {name} | {part} | {e['queries']} | {e['hit_at_pack']:.2f} / {e['recall_at_pack']:.2f} / {e['mrr']:.2f} / "
            f"{e['precision']:.2f} / {e['off_topic_silent']:.2f} / {e['mean_pack']:.2f} | "
            f"{b['hit_at_pack']:.2f} / {b['mrr']:.2f} / {b['precision']:.2f} / {b['mean_pack']:.2f} |"
        )
    return out


def report(cases: list[Case], model: relevance.Model, fitted: dict[str, dict] | None = None) -> str:
    """The table: the fitting part (``fitted``: fit.py's cross-validated numbers, else the shipped
    weights on it), then the held-out part, each set beside the baseline."""
    fitting = [c for c in cases if not c.held_out]
    held = [c for c in cases if c.held_out]
    fit_label = "fitting, cross-validated" if fitted is not None else "fitting"
    lines = list(HEADER)
    lines += rows(fitting, fitted if fitted is not None else runtime_scores(fitting, model), fit_label)
    lines += rows(held, runtime_scores(held, model), "held-out")
    return "\n".join(lines) + "\n"


def depth_report(cases: list[Case], model: relevance.Model) -> str:
    """Per set and part, the share of on-topic cases whose expected memory is within the first k of
    engram's ranking (every candidate, before the cut) and of the baseline's."""
    rows: dict[tuple[str, str], list[tuple[list[str], list[str], set[str]]]] = {}
    for case in cases:
        if case.expect:
            case.score(model)
            ranked = [memory_id for memory_id, _, _ in case.ranked]
            part = "held-out" if case.held_out else "fitting"
            rows.setdefault((case.set, part), []).append((ranked, baseline.pack_of(case), case.expect))
    lines = list(DEPTH_HEADER)
    for (name, part), found in sorted(rows.items(), key=lambda item: (item[0][1], item[0][0])):
        lines.append(f"| {name} | {part} | {len(found)} | {_hits_at(found, 0)} | {_hits_at(found, 1)} |")
    return "\n".join(lines) + "\n"


def _hits_at(found: list[tuple[list[str], list[str], set[str]]], which: int) -> str:
    """The share of ``found`` whose expected memory is within the first k of ranking ``which``, per k."""
    return " / ".join(f"{sum(bool(set(row[which][:k]) & row[2]) for row in found) / len(found):.2f}" for k in DEPTHS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    set_arguments(parser)
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    parser.add_argument("--depth", action="store_true", help="also the hit at 1-8 of each ranking, before the cut")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="engram-quality-") as work:
        cases = gather(chosen_sets(args), Path(work))
        table = report(cases, relevance.FITTED)
        if args.depth:
            table += "\n" + depth_report(cases, relevance.FITTED)
    print(table)
    if args.markdown:
        args.markdown.write_text(table, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`python benchmarks/subsets.py` (in `make quality`): routing quality in small folders.

Most projects hold tens of memories, not the 257 rules of the bundled corpus, and
small folders behave differently (many ordinary words are simply not written yet,
and IDF barely separates a word in one memory from a word in two). For a few random
subsets of the bundled rules per size, each holding the expected rules of half as
many fixture queries as it has rules, every query of the cursorrules fixtures whose
expected rules are all in the subset is routed with `engram benchmark` in a fresh
project of just those rules (`accept` cut to the subset); the table shows the means.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench import SEED_RULES, bench_env
from benchmarks.sets import FIXTURES
from engram.benchmark import COLUMNS, table_line

FIXTURE_FILES = ("cursorrules.json", "cursorrules-heldout.json", "cursorrules-heldout-2.json")
SIZES = (15, 30, 60, 120)
SAMPLES = 6


def load_cases() -> list[dict]:
    return [
        case for name in FIXTURE_FILES for case in json.loads((FIXTURES / "bench" / name).read_text(encoding="utf-8"))
    ]


def pick_rules(cases: list[dict], size: int, seed: int) -> set[str]:
    """The expected rules of size // 2 random positive queries, topped up with random others."""
    rnd = random.Random(seed)
    chosen = rnd.sample([c for c in cases if c["expect"]], size // 2)
    rules = {rule for case in chosen for rule in case["expect"]}
    others = sorted(path.stem for path in SEED_RULES.glob("*.md") if path.stem not in rules)
    return rules | set(rnd.sample(others, max(0, size - len(rules))))


def cases_within(cases: list[dict], rules: set[str]) -> list[dict]:
    """The queries whose expected rules are all present (every off-topic one), accept cut to them."""
    kept = [case for case in cases if set(case["expect"]) <= rules]
    return [{**case, "accept": [rule for rule in case.get("accept", []) if rule in rules]} for case in kept]


def score_subset(base: Path, cases: list[dict], rules: set[str]) -> dict:
    """`engram benchmark --json` in a fresh project holding only ``rules``."""
    project = base / "project"
    shutil.rmtree(project, ignore_errors=True)
    folder = project / ".agents" / ".engram" / "rules"
    folder.mkdir(parents=True)
    for rule in rules:
        shutil.copy(SEED_RULES / f"{rule}.md", folder)
    fixture = base / "cases.json"
    fixture.write_text(json.dumps(cases_within(cases, rules)), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "engram", "benchmark", "--json", str(fixture)],
        cwd=project,
        env=bench_env(base / "config"),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)["results"]["all"]


def mean_scores(base: Path, cases: list[dict], size: int, samples: int) -> dict[str, float]:
    results = [score_subset(base, cases, pick_rules(cases, size, seed)) for seed in range(samples)]
    return {column: round(sum(r[column] for r in results) / samples, 3) for column in COLUMNS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/subsets.py", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="rules per folder")
    parser.add_argument("--samples", type=int, default=SAMPLES, help="random folders per size")
    args = parser.parse_args(argv)
    cases = load_cases()
    print(table_line("rules", COLUMNS))
    with tempfile.TemporaryDirectory(prefix="engram-subsets-") as tmp:
        for size in args.sizes:
            means = mean_scores(Path(tmp), cases, size, args.samples)
            print(table_line(str(size), (means[c] for c in COLUMNS)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

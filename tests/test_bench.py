"""The tools in benchmarks/ (`make bench`, `make quality`) run end to end on small corpora and report every number."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.installed, pytest.mark.slow]

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

METRICS = (
    "compile",
    "no-op refresh",
    "edit-one refresh",
    "load",
    "load --index",
    "hook prompt",
    "hook long prompt",
    "hook file",
    "load, no watcher",
    "hook prompt, no watcher",
    "hook file, no watcher",
)
TIMED_FIELDS = ("runs", "p50_ms", "p95_ms", "p50_ratio", "p95_ratio", "peak_rss_kb")


def test_bench_reports_every_metric_with_ratios(tmp_path):
    out = tmp_path / "r.json"
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench.py"), "--sizes", "60", "--runs", "2", "--out", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    (size,) = report["sizes"]
    assert size["memories"] == 60
    assert size["sources_bytes"] > 0 and size["index_bytes"] > 0 and size["index_ratio"] > 0
    assert size["baseline"]["p50_ms"] > 0 and size["baseline"]["p50_ratio"] == 1.0
    assert set(size["metrics"]) == set(METRICS)
    for name in METRICS:
        metric = size["metrics"][name]
        assert all(metric[key] > 0 for key in TIMED_FIELDS), (name, metric)
        assert metric["p95_ms"] >= metric["p50_ms"]
        assert 0 <= metric["ok_runs"] <= metric["runs"] == len(metric["times_ms"])
    assert size["metrics"]["compile"]["ok_runs"] == size["metrics"]["compile"]["runs"]
    for name in [m for m in METRICS if m.endswith(", no watcher")]:  # the default config: the same outputs
        assert size["metrics"][name]["ok_runs"] == size["metrics"][name.removesuffix(", no watcher")]["ok_runs"], name
    assert size["metrics"]["compile"]["memories_per_s"] > 0
    assert report["targets"] == []  # targets apply at 10,000 and 100,000 memories only
    assert "engram speed" in proc.stdout and "p50/python" in proc.stdout
    for name in ("python -c pass", *METRICS):
        assert name in proc.stdout


def test_peak_rss_is_the_commands_own_not_the_harness(tmp_path):
    """Linux counts a parent's resident memory at fork in the child's peak RSS; the harness
    holds whole corpora, so commands are started from a small spawner process."""
    from benchmarks.bench import Spawner

    ballast = bytearray(120 * 1024 * 1024)
    ballast[::4096] = b"\x01" * len(ballast[::4096])  # touch every page: resident, not just reserved
    spawner = Spawner(tmp_path)
    try:
        sample = spawner.run([sys.executable, "-c", "print('hi')"], tmp_path, {}, "")
    finally:
        spawner.close()
    assert sample.stdout == "hi\n"
    assert 0 < sample.rss_kb < 60 * 1024, sample.rss_kb
    assert len(ballast) > 0


def test_a_missed_goal_makes_bench_exit_1(tmp_path, monkeypatch, capsys):
    """`make bench` fails when a goal is missed, naming it, so the numbers cannot drift unnoticed."""
    from benchmarks import bench

    goal = bench.Target(60, "load p50 <= 0x python", bench.p50_ratio("load"), lambda v: v <= 0, "x{:.2f}")
    monkeypatch.setattr(bench, "TARGETS", (goal,))
    assert bench.main(["--sizes", "60", "--runs", "2", "--out", str(tmp_path / "r.json")]) == 1
    captured = capsys.readouterr()
    assert "load p50 <= 0x python" in captured.out and "FAIL" in captured.out
    assert captured.err.splitlines()[-1] == "engram bench: 1 of 1 goals missed: load p50 <= 0x python"


def test_small_folder_quality_runs_on_the_bundled_rules():
    """`benchmarks/subsets.py` builds a folder from a random subset of the rules and routes the
    fixture queries whose rules are in it."""
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "subsets.py"), "--sizes", "15", "--samples", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    header, row = proc.stdout.splitlines()
    assert header.split() == [
        "rules",
        "queries",
        "hit_at_pack",
        "recall_at_pack",
        "mrr",
        "precision",
        "off_topic_silent",
        "mean_pack",
    ]
    size, queries, *ratios, mean_pack = row.split()
    assert size == "15" and float(queries) > 10
    assert all(0.0 <= float(value) <= 1.0 for value in ratios) and 0.0 <= float(mean_pack) <= 8.0


def test_the_depth_report_tells_how_far_down_each_ranking_the_expected_memory_is(tmp_path, benchmarks_importable):
    """`quality.py --depth`: per set and part, hit at 1, 2, 3, 5 and 8 of engram's ranking and of the
    baseline's, over the on-topic cases only."""
    from benchmarks import quality, sets
    from benchmarks.cases import gather
    from engram import relevance

    folder = tmp_path / "memories"
    folder.mkdir()
    for memory_id, directive in (("kafka-events", "Publish domain events to Kafka topics"),
                                 ("pytest-style", "Write pytest tests with fixtures"),
                                 ("css-colors", "Use the palette variables for colours")):  # fmt: skip
        (folder / f"{memory_id}.md").write_text(
            f"---\nid: {memory_id}\ntags: [{memory_id.split('-')[0]}]\ndirective: {directive}\n---\n{directive}.\n",
            encoding="utf-8",
        )
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([
        {"id": "a", "query": "publish an event to kafka", "expect": ["kafka-events"]},
        {"id": "b", "query": "kafka topics for the pytest fixtures", "expect": ["css-colors"]},
        {"id": "c", "query": "plan a trip to Kyoto", "expect": []},
    ]), encoding="utf-8")  # fmt: skip
    gathered = gather([sets.extra(f"tiny={cases}:{folder}")], tmp_path / "work")
    lines = quality.depth_report(gathered, relevance.FITTED).splitlines()
    assert lines[: len(quality.DEPTH_HEADER)] == list(quality.DEPTH_HEADER)
    # Both rank the first case's memory first. The second one's memory holds none of its meaningful
    # words: engram never ranks it, the baseline (every word OR-ed, "the" too) third.
    assert lines[len(quality.DEPTH_HEADER) :] == [
        "| tiny | held-out | 2 | 0.50 / 0.50 / 0.50 / 0.50 / 0.50 | 0.50 / 0.50 / 1.00 / 1.00 / 1.00 |"
    ]


def test_the_signature_table_script_filters_and_merges_as_docs_routing_says(benchmarks_importable):
    """`benchmarks/signature_table.py`: what it leaves out of a helper's list and why, how a new
    technology and a signature shared by technologies are merged, and that the shipped table is in
    its form."""
    from collections import Counter

    from benchmarks import signature_table as script
    from engram import signature_tables, signatures

    common = {"web": 64, "data": 150, "context": 40, "working": 30, "outside": 9}
    names, df, ordinary = signatures.NAMES, Counter(common), {"hardhat"}
    assert [script.signature_of(tech, identifier, names, df, ordinary) for tech, identifier in (
        ("react", "useEffect"), ("actix", "web::Data"), ("alembic", "alembic upgrade head"),
        ("solidity", "hardhat"), ("ruby", "rails"), ("go", "$@"),
        ("flask", "Working outside of web data context."), ("flask", "The web data context"),
        ("unreal", "Would you like to rebuild them now?"),
    )] == [
        ("useeffect", ""), ("web data", "common"), ("alembic upgrade head", "own name"),
        ("hardhat", "ordinary"), ("rails", "ordinary"), ("", "empty"),
        ("working outside of web data context", ""), ("the web data context", "common"),
        ("would you like to rebuild them now", ""),
    ]  # fmt: skip
    table = {"useeffect": ("react",), "createstore": ("redux", "solidjs", "zustand")}
    lists = [
        {"preact": ["useEffect", "createStore"]},
        {
            "solidjs": ["createSignal", "on_cleanup_hook"],
            "elixir": ["x"],
            "quasar": ["q-btn"],
            "_names": {"quasar": ["quasar"]},
        },
        {
            "vercel": ["FUNCTION_INVOCATION_TIMEOUT", "vercel.json"],
            "_names": {"vercel": ["vercel", "vercel-deployment", "v"]},
        },
    ]
    # a bundled rule named for React writes FUNCTION_INVOCATION_TIMEOUT as code: no stack's own then
    rules = [({"react"}, {"function_invocation_timeout"}), (set(), {"on_cleanup_hook"})]
    # a receiver and a member any code writes imply no stack, though the table had it
    new_names, (out, code), left_out = script.merged(
        {"preact": ("preact",), "solidjs": ("solidj",)}, (table, {"data.map": ("haskell",)}), lists, df, ordinary, rules
    )
    assert new_names == {"preact": ("preact",), "solidjs": ("solidj",), "quasar": ("quasar",),
                         "vercel": ("vercel", "verceldeployment")}  # fmt: skip
    assert out == {"useeffect": ("react", "preact"), "createstore": table["createstore"], "createsignal": ("solidjs",),
                   "on cleanup hook": ("solidjs",), "q btn": ("quasar",),
                   "function invocation timeout": ("vercel",)}  # fmt: skip
    assert code == {"on_cleanup_hook": ("solidjs",)}  # `vercel.json` names its own technology
    assert left_out == {
        "too many technologies": 1,
        "unknown technology": 1,
        "own name": 1,
        "code of other stacks too": 1,
        "any stack's code": 1,
    }
    # the literals as the script writes them are the two files as they are
    everyday = sorted(signatures.EVERYDAY_NAMES)
    names_source = script.NAMES_FILE.read_text(encoding="utf-8")
    assert script.rewrite_names(names_source, signatures.NAMES, everyday) == names_source
    tables_source = script.TABLE_FILE.read_text(encoding="utf-8")
    tables = (signature_tables.SIGNATURES, signature_tables.CODE)
    assert script.rewrite_tables(tables_source, tables) == tables_source
    # a name is an everyday word as the index stems it: `hibernate` is one, `gms2` none
    names = {"spring-boot": ("springboot", "spring"), "hibernate": ("hibernat", "jpa"), "gamemaker": ("gms2",)}
    assert script.everyday_names(names, {"spring", "hibernate", "jpa", "gms"}) == ["hibernat", "jpa", "spring"]


def test_a_further_development_set_is_split_as_the_others_and_an_extra_one_held_out_whole(
    tmp_path, benchmarks_importable
):
    """`--dev NAME=CASES.json:FOLDER` (fit.py, quality.py): fitted on its fitting part, measured on
    the rest; `--extra` is never fitted on."""
    from benchmarks import quality

    cases = [{"id": f"c{n}", "query": f"task {n}", "expect": []} for n in range(40)]
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    spec = f"mine={path}:{tmp_path}"
    chosen = quality.task_sets(None, [spec], [spec.replace("mine", "ours")])
    held = {task_set.name: [task_set.is_held_out(case) for case in task_set.cases()] for task_set in chosen}
    assert all(held["mine"])
    assert 0 < sum(held["ours"]) < len(cases)

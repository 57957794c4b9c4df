"""`reads`: inside `engram watch`, an index's answers are kept while the index file is the one vouched for."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from engram import evidence, reads
from engram.compile import compile_root
from engram.freshness import VOUCHED_HERE, file_stamp
from engram.layers import open_layers
from engram.route import anchors_of
from engram.workspace import open_workspace

TASK = "deploy the canary with helm and roll back on failed checks"


def _project(tmp_path: Path, count: int) -> Path:
    rules = tmp_path / ".agents" / ".engram" / "rules"
    rules.mkdir(parents=True, exist_ok=True)
    (tmp_path / ".git").mkdir(exist_ok=True)
    for n in range(count):
        (rules / f"deploy-{n}.md").write_text(
            f"---\nid: deploy-{n}\ntags: [deploy, helm]\ndirective: Deploy service {n} with the canary.\n---\n"
            f"# Deploy {n}\n\nRoll back when checks fail; helm upgrade for service {n}.\n",
            encoding="utf-8",
        )
    compile_root(open_workspace(tmp_path).root, open_workspace(tmp_path).config)
    return tmp_path


def _vouched_layer(project: Path):
    """The workspace layer as `engram watch` opens it for a reader: the index file vouched for."""
    ws = open_workspace(project)
    VOUCHED_HERE[ws.root.path] = file_stamp(ws.root.index_path) or ""
    try:
        return open_layers(ws, None, [])[0]
    finally:
        VOUCHED_HERE.clear()


def _held(found: evidence.Evidence) -> dict[int, dict[int, list[float]]]:
    return {rowid: dict(f.counts) for rowid, f in sorted(found.found.items())}


def _fts_reads(conn: sqlite3.Connection, run) -> list[str]:
    """The statements ``run`` makes SQLite run that read the full-text index."""
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        run()
    finally:
        conn.set_trace_callback(None)
    return [s for s in statements if s.startswith("SELECT") and ("memories_fts" in s or "engram_" in s)]


def test_kept_answers_are_the_answers_and_a_second_task_asks_the_index_nothing_again(tmp_path: Path) -> None:
    layer = _vouched_layer(_project(tmp_path, 5))
    assert isinstance(layer.reads, reads.KeptReads)
    anchors = anchors_of(TASK)[0]
    asked = evidence.Evidence(reads.Reads(layer.conn), anchors)
    kept_first = evidence.Evidence(layer.reads, anchors)
    assert _held(kept_first) == _held(asked) and len(asked.reached) == 5
    again = _fts_reads(layer.conn, lambda: evidence.Evidence(layer.reads, anchors))
    assert again == []  # every answer was kept
    assert _held(evidence.Evidence(layer.reads, anchors)) == _held(asked)


def test_outside_a_watcher_nothing_is_kept(tmp_path: Path) -> None:
    project = _project(tmp_path, 2)
    layer = open_layers(open_workspace(project), None, [])[0]
    assert type(layer.reads) is reads.Reads
    anchors = anchors_of(TASK)[0]
    evidence.Evidence(layer.reads, anchors)
    assert _fts_reads(layer.conn, lambda: evidence.Evidence(layer.reads, anchors))  # asked again


def test_a_refreshed_index_is_another_file_and_nothing_kept_of_the_old_one_is_used(tmp_path: Path) -> None:
    project = _project(tmp_path, 3)
    anchors = anchors_of(TASK)[0]
    before = _vouched_layer(project)
    assert len(evidence.Evidence(before.reads, anchors).reached) == 3
    _project(tmp_path, 4)  # one more memory holding the task's words, indexed
    after = _vouched_layer(project)
    assert after.reads.kept is not before.reads.kept and not after.reads.kept.answers
    assert len(evidence.Evidence(after.reads, anchors).reached) == 4


@settings(max_examples=200, deadline=None)
@given(
    limit=st.integers(min_value=1, max_value=400),
    puts=st.lists(
        st.tuples(st.integers(0, 20), st.lists(st.tuples(st.text(max_size=60) | st.integers()), max_size=4)),
        max_size=40,
    ),
)
def test_what_is_kept_stays_within_its_weight_and_is_what_was_asked(limit: int, puts: list) -> None:
    kept = reads.Kept("stamp", limit)
    for key, answer in puts:
        kept.put(("sql", (key,)), answer)
        weighs = reads._weight(answer)
        if weighs <= limit:  # the newest answer is kept when it fits at all
            assert kept.get(("sql", (key,))) is answer
        assert kept.weight == sum(map(reads._weight, kept.answers.values())) <= limit


def test_answers_are_kept_for_a_few_indexes_at_most(tmp_path: Path) -> None:
    conn = sqlite3.connect(":memory:")
    paths = [str(tmp_path / f"index-{n}.db") for n in range(reads.KEPT_INDEXES + 2)]
    for path in paths:
        reads.reads_for(conn, path, "stamp")
    again = reads.reads_for(conn, paths[-1], "stamp")
    assert len(reads._KEPT) == reads.KEPT_INDEXES and paths[0] not in reads._KEPT
    assert isinstance(again, reads.KeptReads) and again.kept is reads._KEPT[paths[-1]]

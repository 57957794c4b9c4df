"""`engram graph`: the count line, dependency layers with depths, cycles, and `--rebuild`."""

from __future__ import annotations

import sqlite3


def _write_chain(project, write_memory):
    write_memory(
        project,
        "knowledge/release-foundation.md",
        {"id": "release-foundation", "level": "foundation", "tags": ["release", "versioning", "semver"]},
        "# Base\nVersioning basics.\n",
    )
    write_memory(
        project,
        "rules/release-checklist.md",
        {"id": "release-checklist", "depends_on": ["release-foundation"], "tags": ["release", "checklist", "tags"]},
        "# Checklist\nTag after the checklist.\n",
    )
    write_memory(
        project,
        "skills/release-hotfix.md",
        {"id": "release-hotfix", "level": "advanced", "depends_on": "release-checklist"},
        "# Hotfix\nPatch releases.\n",
    )
    write_memory(
        project,
        "knowledge/unrelated.md",
        {"id": "unrelated", "tags": ["zebra"]},
        "# Zebra\nNothing to do with releases.\n",
    )


def test_graph_prints_counts_and_layers_by_depth(project, write_memory, run_engram):
    _write_chain(project, write_memory)
    assert run_engram(["index"], project).returncode == 0
    proc = run_engram(["graph"], project)
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0] == "engram graph: 4 nodes, 2 edges"
    # what makes a related edge: one shared tag of three does not (a new user read "0" as a bug)
    assert lines[1] == "0 related edges (memories sharing half their tags or more; they only rerank)"
    layers = [line.strip() for line in lines if line.startswith("  [")]
    assert layers.index("[0] release-foundation") < layers.index("[1] release-checklist depends on release-foundation")
    assert "[2] release-hotfix depends on release-checklist" in layers  # max(level advanced=2, 1 + 1)
    assert not any(line.startswith("cycle:") for line in lines)


def test_graph_names_cycles_and_never_loops(project, write_memory, run_engram):
    write_memory(project, "rules/a.md", {"id": "a", "depends_on": ["b"]}, "# A\nalpha deploy\n")
    write_memory(project, "rules/b.md", {"id": "b", "depends_on": ["c"]}, "# B\nbeta\n")
    write_memory(project, "rules/c.md", {"id": "c", "depends_on": ["a"]}, "# C\ngamma\n")
    index = run_engram(["index"], project)
    assert index.returncode == 0
    assert "dependency cycle: a -> b -> c -> a" in index.stderr
    graph = run_engram(["graph"], project)
    assert "cycle: a -> b -> c -> a" in graph.stdout.splitlines()
    check = run_engram(["check"], project)
    assert "dependency cycle" in check.stdout
    load = run_engram(["load", "deploy"], project)  # the pack still renders, each memory once
    assert load.returncode == 0
    assert [line for line in load.stdout.splitlines() if line.startswith("### ")] == [
        "### c [rule, instruction]",
        "### b [rule, instruction]",
        "### a [rule, instruction]",
    ]


def test_graph_rebuild_compiles_first_and_task_limits_the_graph(project, write_memory, run_engram):
    _write_chain(project, write_memory)
    proc = run_engram(["graph", "--rebuild", "hotfix"], project)  # no index yet: --rebuild builds it
    assert proc.returncode == 0
    layers = [line.strip() for line in proc.stdout.splitlines() if line.startswith("  [")]
    assert [line.split()[1] for line in layers] == ["release-foundation", "release-checklist", "release-hotfix"]
    assert proc.stdout.splitlines()[0] == "engram graph: 3 nodes, 2 edges"


def test_graph_warnings_are_repeated_by_a_no_op_index_and_go_with_their_cause(project, write_memory, run_engram):
    write_memory(project, "rules/a.md", {"id": "a", "depends_on": ["b", "ghost"]}, "# A\nalpha\n")
    write_memory(project, "rules/b.md", {"id": "b", "depends_on": ["a"]}, "# B\nbeta\n")
    warnings = [
        "rules/a.md: depends_on names unknown id 'ghost'",
        "rules/a.md: dependency cycle: a -> b -> a",
    ]
    first = run_engram(["index"], project)
    again = run_engram(["index"], project)  # nothing changed: the build's findings, read back
    assert "(2 added," in first.stdout and "(0 added, 0 changed" in again.stdout
    for proc in (first, again, run_engram(["check"], project)):
        assert [line for line in warnings if line in proc.stdout + proc.stderr] == warnings
    for garbled in ("not json", "[1]", None):  # an index edited by hand is rebuilt: the findings are made again
        with sqlite3.connect(project / ".agents" / ".engram" / "index.db") as conn:
            conn.execute("DELETE FROM meta WHERE key = 'graph_findings'")
            if garbled is not None:
                conn.execute("INSERT INTO meta (key, value) VALUES ('graph_findings', ?)", (garbled,))
        proc = run_engram(["index"], project)
        assert proc.returncode == 0 and "indexed 2 memories from 2 files" in proc.stdout, proc.stderr
        assert [line for line in warnings if line in proc.stderr] == warnings
    write_memory(project, "rules/b.md", {"id": "b"}, "# B\nbeta\n")
    fixed = run_engram(["index"], project)
    assert "dependency cycle" not in fixed.stdout + fixed.stderr
    assert warnings[0] in fixed.stdout + fixed.stderr
    assert "dependency cycle" not in run_engram(["index"], project).stderr


def test_an_unknown_prerequisite_one_edit_from_an_id_says_which_it_may_mean(project, write_memory, run_engram):
    """A memory author's audit misspelled `release-proces`: the warning names the id it is close to."""
    write_memory(project, "rules/release-process.md", {"id": "release-process"}, "# Release\nTag it.\n")
    write_memory(project, "rules/hotfix.md", {"id": "hotfix", "depends_on": ["release-proces", "zzz"]}, "# Fix\n")
    said = run_engram(["check"], project)
    assert (
        "rules/hotfix.md: depends_on names unknown id 'release-proces': did you mean 'release-process'?" in said.stdout
    )
    assert "depends_on names unknown id 'zzz'\n" in said.stdout

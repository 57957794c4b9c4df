"""Concepts of project work a task writes in other words (`engram.concepts`): the table, the
anchors a task gets, and the folders where they count."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram import concepts, relevance, terms
from engram.compile import compile_root
from engram.layers import open_layers
from engram.route import Options, anchors_of, gather, route
from engram.workspace import open_workspace
from helpers import write_memory


def concept_anchors(task: str) -> dict[str, str]:
    return {a.text: a.source for a in anchors_of(task)[0] if a.concept}


def folder(tmp_path: Path, memories: dict[str, tuple[str, str]], fillers: int = 0) -> list:
    """A project of these memories (id -> tag, directive) and ``fillers`` more on other work."""
    filler = {f"note-{n}": (f"topic{n}", f"Note {n} on the invoice export and its columns.") for n in range(fillers)}
    for memory_id, (tag, directive) in {**memories, **filler}.items():
        write_memory(
            tmp_path, f"rules/{memory_id}.md", {"id": memory_id, "tags": [tag], "directive": directive}, directive
        )
    workspace = open_workspace(str(tmp_path))
    compile_root(workspace.root, workspace.config)
    return open_layers(workspace, None, [])


SMALL = {
    "migrations": ("database", "Every schema change is a reviewed migration file."),
    "release": ("versioning", "Tag from main after the changelog is written."),
    "styling": ("css", "Use the design tokens, never raw values."),
}


def test_two_words_signal_a_concept_the_task_does_not_name() -> None:
    assert concept_anchors("add a nullable column to the invoices table") == {"migrations": "nullable column"}
    assert concept_anchors("Text unreadable in High Contrast themes") == {"colors": "high contrast"}
    # one word alone signals nothing
    assert concept_anchors("ship it") == {}


def test_a_concept_is_looked_for_by_the_names_the_task_does_not_write() -> None:
    """ "ship a new version": `ship` is one of `release`'s names, but a memory named `release`
    holds no "ship"; the anchor looks for the others."""
    anchors = {a.text: a.word.terms for a in anchors_of("how do I ship a new version")[0] if a.concept}
    assert anchors == {"release": tuple(name for name in concepts.NAMES["release"] if name != "ship")}
    written = {a.text: a.word.terms for a in anchors_of("write the migrations for a nullable column")[0] if a.concept}
    assert "migration" not in written["migrations"]  # the task's own word finds what it names already


def test_no_name_of_a_concept_is_an_everyday_word_of_rules() -> None:
    """`changes`, an alias of `changelog`, stems to `chang`: every directive saying "Any change
    touching auth needs a review" held the concept's name, and a task about a changelog entry
    found that rule for it (a team-flow audit)."""
    everyday = {terms.stem(word) for word in ("change", "changes", "rule", "use", "code", "make", "need", "always")}
    assert not {name for names in concepts.NAMES.values() for name in names} & everyday


def test_a_long_report_signals_at_most_a_few_concepts() -> None:
    report = "nullable column, high contrast, screen reader, rate limit, bump version, alter table"
    assert len(concept_anchors(report)) == concepts.MAX_CONCEPTS


def test_a_small_folder_routes_a_task_by_the_concept_it_signals(tmp_path) -> None:
    layers = folder(tmp_path, SMALL)
    assert [c.id for c in route(layers, "add a nullable column to the invoices table", Options()).pack][:1] == [
        "migrations"
    ]


def test_a_technology_the_task_names_or_implies_gives_the_concept_it_is_an_instance_of() -> None:
    """A team's rule named `testing` or `llm` is about "vitest ..." and "the ollama ...", which name
    only the technology; an everyday word that names one (the helm of a sailboat) gives none."""
    assert concept_anchors("vitest snapshot fails after the upgrade")["testing"] == "vitest"
    assert concept_anchors("Adapt the ollama streaming tool call")["llm"] == "ollama"
    assert concept_anchors("fix the describe block: expect(wrapper.vm).toMatchSnapshot()").get("testing")
    assert concept_anchors("the helm on our sailboat got stiff over winter") == {}


def test_a_small_folder_routes_a_task_naming_a_technology_to_its_concept(tmp_path) -> None:
    layers = folder(tmp_path, {**SMALL, "testing": ("qa", "Every feature ships with tests that run in CI.")})
    assert [c.id for c in route(layers, "vitest snapshot fails after the upgrade", Options()).pack][:1] == ["testing"]


def test_a_name_of_three_words_is_found_as_the_index_glues_it(tmp_path) -> None:
    """An id of three words with separators (`end-to-end`) is indexed with its adjacent words glued
    (`endend`, the stopword left out), not as one glued word: the concept looks for both forms."""
    layers = folder(tmp_path, {**SMALL, "end-to-end": ("playwright", "Cover each user flow in the browser.")})
    task = "the smoke test of the checkout keeps timing out"
    assert "e2e-testing" in concept_anchors(task)
    assert [c.id for c in route(layers, task, Options()).pack][:1] == ["end-to-end"]


def test_a_big_folder_leaves_concepts_out(tmp_path) -> None:
    """A folder of many stacks' rules holds a concept's name in passing: there a task is routed on
    its own words."""
    task = "add a nullable column to the invoices table"
    small = folder(tmp_path / "small", SMALL)
    big = folder(tmp_path / "big", SMALL, fillers=relevance.SMALL_FOLDER)
    assert [a.text for a in gather(small, task, Options())[0].scoring if a.concept] == ["migrations"]
    assert [a.text for a in gather(big, task, Options())[0].scoring if a.concept] == []


@pytest.mark.usefixtures("benchmarks_importable")
def test_the_shipped_table_is_what_the_script_writes_from_the_thesaurus() -> None:
    from benchmarks import concept_table

    names, signals = concept_table.tables(json.loads(concept_table.THESAURUS.read_text(encoding="utf-8")))
    assert (names, signals) == (concepts.NAMES, concepts.SIGNALS)
    mapping = json.loads(concept_table.TECHNOLOGY_CONCEPTS.read_text(encoding="utf-8"))
    assert concept_table.technology_table(mapping, names) == concepts.TECHNOLOGIES
    assert concept_table.signal_key("how to") is None  # stopwords only
    assert concept_table.signal_key("ship") is None  # one word: too often about something else
    assert concept_table.name_terms("error-handling", ["errors"]) == ("errorhandl", "error")

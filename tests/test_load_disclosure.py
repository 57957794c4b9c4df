"""`engram load`: layered disclosure, dependency layers, hidden sections and the token budget.

spec/read-path.md "Layered disclosure" and "Dependency layers", DESIGN.md 3 and 6.
"""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.render import render_text
from engram.terms import estimate_tokens
from helpers import (
    COUNT_LINE,
    Project,
    card_ids,
    entry_ids,
    heading_ids,
    printed_ids,
)

NAMES = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet")


def _deploy_memories(project, count: int, body_words: int = 0) -> list[str]:
    ids = []
    for name in NAMES[:count]:
        filler = " ".join(f"filler{name}{i}" for i in range(body_words))
        project.write(
            f"deploy-{name}",
            f"# {name.title()}\nDeploy notes for {name}. {filler}".rstrip(),
            tags=["deploy"],
            directive=f"Deploy the {name} service.",
        )
        ids.append(f"deploy-{name}")
    return ids


# --- layered disclosure -----------------------------------------------------------------------


def test_default_output_is_layered(project):
    _deploy_memories(project, 5)
    payload = project.load_json("deploy")
    ranked = entry_ids(payload)
    assert [e["shown"] for e in payload["entries"]] == ["body"] * 3 + ["card"] * 2

    result = project.load("deploy")
    assert result.returncode == 0
    lines = result.lines
    assert lines[0] == "loaded 5 memory files / 5 total related memories"
    assert heading_ids(result.stdout) == ranked[:3]
    for memory_id in ranked[:3]:
        assert f"### {memory_id} [rule, instruction]" in lines
    name = {i: i.removeprefix("deploy-") for i in ranked}
    cards = [line for line in lines if line.startswith("- ")]
    assert cards == [f"- {i} [rule] Deploy the {name[i]} service." for i in ranked[3:]]
    assert lines[-1] == f"fetch: engram load --id {ranked[3]},{ranked[4]}"
    assert payload["fetch"] == lines[-1].removeprefix("fetch: ")
    # bodies first, then cards, then the fetch line
    assert lines.index(cards[0]) > max(lines.index(f"### {i} [rule, instruction]") for i in ranked[:3])
    # a card carries no body
    for memory_id in ranked[3:]:
        assert f"Deploy notes for {name[memory_id]}." not in result.stdout


def test_no_cards_no_fetch_line(project):
    _deploy_memories(project, 2)
    result = project.load("deploy")
    assert len(heading_ids(result.stdout)) == 2
    assert "fetch:" not in result.stdout
    assert card_ids(result.stdout) == []


def test_expand_top_sets_how_many_bodies(project):
    _deploy_memories(project, 5)
    for expand_top in (0, 1, 2, 4):
        project.config({"load": {"expand_top": expand_top}})
        result = project.load("deploy")
        assert len(heading_ids(result.stdout)) == expand_top
        assert len(card_ids(result.stdout)) == 5 - expand_top
        assert result.lines[0] == "loaded 5 memory files / 5 total related memories"


def test_card_shows_directive_else_summary(project):
    project.config({"load": {"expand_top": 0}})
    project.write(
        "with-directive",
        "# Title one\nDeploy body.",
        tags=["deploy"],
        directive="Use the directive.",
        summary="Not the summary.",
    )
    project.write(
        "with-summary", "# Title two\nDeploy body.", type="knowledge", tags=["deploy"], summary="Only a summary here."
    )
    project.write("with-text", "# Title three\n\n- Deploy on Tuesdays, never on Fridays.", tags=["deploy"])
    long_line = "Deploy " + "with care " * 30
    project.write("with-title", f"# Title four\n{long_line}", tags=["deploy"])
    project.write("with-heading", f"### Deploy overview\n{long_line}", tags=["deploy"])  # no level-1 heading
    result = project.load("--budget-tokens", "200", "deploy")
    assert "- with-directive [rule] Use the directive." in result.lines
    assert "- with-summary [knowledge] Only a summary here." in result.lines
    # what the rule says, its first line of text (converted rules have no directive), before its title
    assert "- with-text [rule] Deploy on Tuesdays, never on Fridays." in result.lines
    assert "- with-title [rule] Title four" in result.lines  # a first line too long for a card: never cut
    assert "- with-heading [rule] Deploy overview" in result.lines  # not its id a second time


def test_at_most_five_omitted_candidates_become_cards(project):
    project.config({"load": {"limit": 1}})
    _deploy_memories(project, 8)
    payload = project.load_json("deploy")
    assert payload["selected"] == 1 and payload["total_related"] == 8
    carded = [o["id"] for o in payload["omitted"] if o.get("shown") == "card"]
    assert len(carded) == 5
    assert all(o["reason"] == "limit" for o in payload["omitted"])
    assert len(payload["omitted"]) == 7

    result = project.load("deploy")
    assert result.lines[0] == "loaded 1 memory files / 8 total related memories"  # omitted cards are not counted
    assert heading_ids(result.stdout) == entry_ids(payload)
    assert card_ids(result.stdout) == carded
    assert result.lines[-1] == "fetch: engram load --id " + ",".join(carded)
    # the omitted cards are the next-ranked candidates, in rank order
    dry = project.load("--dry-run", "deploy")
    omitted_order = [line.split()[1] for line in dry.lines if line.startswith("omitted: ")]
    assert omitted_order[:5] == carded


def test_skip_layering_with_full_disclosure_all(project):
    _deploy_memories(project, 5)
    for args in (("--full",), ("--all",), ("--disclosure", "full")):
        result = project.load(*args, "deploy")
        assert len(heading_ids(result.stdout)) == 5, args
        assert card_ids(result.stdout) == [], args
        assert "fetch:" not in result.stdout, args


# --- hidden sections and frontmatter ------------------------------------------------------------

SECTIONED = """# Release checklist

Intro VISIBLEINTRO deploy line.

## Content
- VISIBLECONTENT tag the release after the deploy.

## Context
HIDDENCONTEXT why we do this.

### Detail under context
HIDDENDETAIL nested.

## Example
HIDDENEXAMPLE sample run.

## Examples
HIDDENEXAMPLES2 more samples.

## Notes
VISIBLENOTES keep this.

## Origin
HIDDENORIGIN incident 42.
"""

HIDDEN_MARKERS = (
    "HIDDENCONTEXT",
    "HIDDENDETAIL",
    "HIDDENEXAMPLE",
    "HIDDENEXAMPLES2",
    "HIDDENORIGIN",
    "FRONTMATTERSENTINEL",
    "## Context",
    "## Example",
    "## Origin",
    "owner:",
    "confidence:",
    "---",
)


@pytest.fixture(scope="module")
def sectioned(tmp_path_factory):
    project = Project(tmp_path_factory.mktemp("sectioned"))
    project.write(
        "release-checklist",
        SECTIONED,
        tags=["deploy", "release"],
        directive="Run the release checklist.",
        owner="FRONTMATTERSENTINEL",
        confidence="high",
    )
    project.write("base", "# Base\nBASEBODY foundation.\n\n## Origin\nHIDDENORIGIN too.", type="knowledge")
    project.write(
        "dep", "# Dep\nDEPBODY deploy pipeline.\n\n## Context\nHIDDENCONTEXT too.", depends_on=["base"], tags=["deploy"]
    )
    return project


@pytest.mark.parametrize(
    "args",
    [
        ("deploy",),
        ("--full", "deploy"),
        ("--all", "deploy"),
        ("--disclosure", "full", "deploy"),
        ("--id", "release-checklist,dep,base"),
        ("--json", "deploy"),
        ("--dry-run", "deploy"),
        ("--budget-tokens", "16000", "deploy"),
    ],
)
def test_hidden_sections_and_frontmatter_never_print(sectioned, args):
    result = sectioned.load(*args)
    assert result.returncode == 0, result.stderr
    for marker in HIDDEN_MARKERS:
        assert marker not in result.stdout, (marker, args)
    if args[0] != "--json" and args[0] != "--dry-run":
        assert "VISIBLEINTRO" in result.stdout
        assert "VISIBLECONTENT" in result.stdout
        assert "VISIBLENOTES" in result.stdout
        assert "## Content" in result.stdout and "## Notes" in result.stdout


def test_hidden_section_words_do_not_route(sectioned):
    """Text only in ## Context / ## Example / ## Origin is not what the agent sees; it does not route either."""
    for query in ("hiddencontext", "hiddenexample", "hiddenorigin", "frontmattersentinel"):
        assert sectioned.load_json(query)["total_related"] == 0, query


def test_hidden_heading_inside_a_code_fence_is_body_text(project):
    body = "# Fenced\nDeploy docs.\n\n```markdown\n## Context\nFENCEDTEXT stays.\n```\n\n## Context\nHIDDENREAL.\n"
    project.write("fenced", body, tags=["deploy"])
    result = project.load("deploy")
    assert "FENCEDTEXT stays." in result.stdout
    assert "HIDDENREAL" not in result.stdout


# --- dependency layers -------------------------------------------------------------------------


def test_prerequisite_printed_before_its_dependent_without_keyword_overlap(project):
    project.write(
        "base", "# Foundations\nBASEBODY zebra platform primer.", type="knowledge", directive="Platform primer."
    )
    project.write(
        "release-deep",
        "# Deep\nDEEPBODY advanced deploy pipeline.",
        tags=["deploy"],
        depends_on=["base"],
        level="advanced",
    )
    result = project.load("deploy")
    assert result.returncode == 0
    assert heading_ids(result.stdout) == ["base", "release-deep"]
    lines = result.lines
    deep = lines.index("### release-deep [rule, instruction]")
    assert lines[deep + 1] == "requires: base"
    assert "### base [knowledge, reference]" in lines
    assert lines.index("### base [knowledge, reference]") < deep
    assert result.stdout.index("BASEBODY") < result.stdout.index("DEEPBODY")
    assert result.counts()[0] == 2  # the prerequisite is counted (total related: see test_load)

    payload = project.load_json("deploy")
    assert entry_ids(payload) == ["base", "release-deep"]
    assert payload["entries"][1]["requires"] == ["base"]
    assert payload["entries"][0]["requires"] == []
    assert any("prerequisite of release-deep" in r for r in payload["entries"][0]["reasons"])
    # base alone shares no word with the query: it is not routed on its own
    project.write("release-deep", "# Deep\nDEEPBODY advanced pipeline.", tags=["shipping"], depends_on=["base"])
    assert "BASEBODY" not in project.load("deploy").stdout


def test_requires_lists_every_dependency(project):
    project.write("first-base", "# A\nFIRSTBASE.", type="knowledge")
    project.write("second-base", "# B\nSECONDBASE.", type="knowledge")
    project.write("deep", "# Deep\nDEEPBODY deploy.", tags=["deploy"], depends_on="first-base, second-base")
    result = project.load("deploy")
    assert heading_ids(result.stdout)[-1] == "deep"
    assert set(heading_ids(result.stdout)[:2]) == {"first-base", "second-base"}
    lines = result.lines
    assert lines[lines.index("### deep [rule, instruction]") + 1] == "requires: first-base, second-base"


def test_the_memory_a_task_is_about_keeps_its_body_beside_its_prerequisites(project):
    """Two bodies to give, and a memory with two prerequisites: it is a body, printed after the
    prerequisite that is one; the other is a card, one fetch away (they used to take both bodies
    and leave the memory the task is about a card)."""
    project.config({"load": {"expand_top": 2}})
    project.write("first-base", "# A\nFIRSTBASE.", type="knowledge")
    project.write("second-base", "# B\nSECONDBASE.", type="knowledge")
    project.write("deep", "# Deep\nDEEPBODY deploy.", tags=["deploy"], depends_on="first-base, second-base")
    stdout = project.load("deploy").stdout
    assert heading_ids(stdout) == ["first-base", "deep"] and card_ids(stdout) == ["second-base"]


def test_transitive_prerequisites_come_deepest_first(project):
    project.write("layer-zero", "# Zero\nZEROBODY.", type="knowledge", level="foundation")
    project.write("layer-one", "# One\nONEBODY.", type="knowledge", depends_on=["layer-zero"], level="intermediate")
    project.write("layer-two", "# Two\nTWOBODY deploy.", tags=["deploy"], depends_on=["layer-one"], level="advanced")
    result = project.load("deploy")
    assert heading_ids(result.stdout) == ["layer-zero", "layer-one", "layer-two"]
    lines = result.lines
    assert lines[lines.index("### layer-one [knowledge, reference]") + 1] == "requires: layer-zero"
    assert lines[lines.index("### layer-two [rule, instruction]") + 1] == "requires: layer-one"


def test_prerequisite_cycle_does_not_hang_or_repeat(project):
    project.write("cycle-a", "# A\nABODY deploy.", tags=["deploy"], depends_on=["cycle-b"])
    project.write("cycle-b", "# B\nBBODY.", depends_on=["cycle-a"])
    result = project.load("deploy")
    assert result.returncode == 0
    ids = heading_ids(result.stdout) + card_ids(result.stdout)
    assert sorted(ids) == ["cycle-a", "cycle-b"]
    assert ids.index("cycle-b") < ids.index("cycle-a")


def test_hidden_prerequisite_is_not_pulled_in(project):
    project.write("old-base", "# Old\nOLDBASE.", type="knowledge", lifecycle="archived")
    project.write("deep", "# Deep\nDEEPBODY deploy.", tags=["deploy"], depends_on=["old-base"])
    result = project.load("deploy")
    assert heading_ids(result.stdout) == ["deep"]
    assert "OLDBASE" not in result.stdout


def test_prerequisites_count_against_the_limit(project):
    project.config({"load": {"limit": 2}})
    project.write("base", "# Base\nBASEBODY.", type="knowledge")
    project.write(
        "deploy-deep",
        "# Deep\nDeploy deep pipeline.",
        tags=["deploy"],
        depends_on=["base"],
        directive="Deploy deep.",
        confidence="high",
    )
    project.write("deploy-wide", "# Wide\nDeploy wide notes.", tags=["deploy"], directive="Deploy wide.")
    payload = project.load_json("deploy")
    assert entry_ids(payload) == ["base", "deploy-deep"]
    assert payload["selected"] == 2


# --- --budget-tokens -------------------------------------------------------------------------


def test_budget_out_of_range(project):
    _deploy_memories(project, 1)
    for value in ("199", "16001", "abc", "0", "1e3", ""):
        result = project.load("--budget-tokens", value, "deploy")
        assert result.returncode == 1, value
        assert result.stdout == ""
        assert "integer from 200 to 16000" in result.stderr, value
        assert result.stderr.startswith("engram: error: ")


def test_budget_bounds_are_accepted(project):
    _deploy_memories(project, 1)
    for value in ("200", "16000"):
        result = project.load("--budget-tokens", value, "deploy")
        assert result.returncode == 0, result.stderr
        assert result.lines[0] == "loaded 1 memory files / 1 total related memories"


def _check_budget(result, budget: int) -> None:
    assert result.returncode == 0, result.stderr
    assert estimate_tokens(result.stdout) <= budget, (estimate_tokens(result.stdout), budget)
    assert COUNT_LINE.match(result.lines[0])


def test_budget_demotes_lowest_ranked_bodies_first_then_drops_cards(project):
    _deploy_memories(project, 5, body_words=60)  # ~250 tokens per body
    ranked = entry_ids(project.load_json("deploy"))
    full = project.load("--budget-tokens", "16000", "deploy")
    assert heading_ids(full.stdout) == ranked[:3]
    size = estimate_tokens(full.stdout)

    one_less = project.load("--budget-tokens", str(size - 60), "deploy")
    _check_budget(one_less, size - 60)
    assert heading_ids(one_less.stdout) == ranked[:2]  # the third body became a card, the top two stay
    assert card_ids(one_less.stdout) == ranked[2:]
    assert one_less.lines[0] == "loaded 5 memory files / 5 total related memories"
    assert one_less.lines[-1] == "fetch: engram load --id " + ",".join(ranked[2:])

    tiny = project.load("--budget-tokens", "200", "deploy")
    _check_budget(tiny, 200)
    assert heading_ids(tiny.stdout) == []  # bodies go before any card is dropped
    assert card_ids(tiny.stdout) == ranked  # five short cards still fit

    payload = project.load_json("--budget-tokens", "200", "deploy")
    assert [e["shown"] for e in payload["entries"]] == ["card"] * 5


def test_budget_demotes_a_prerequisite_before_the_memory_that_needs_it(project):
    words = " ".join(f"word{i}" for i in range(60))
    project.write("architecture", f"# Architecture\nLayers. {words}", type="knowledge")
    project.write(
        "db-migration", f"# Migrations\nNumbered SQL migrations. {words}", tags=["migration"],
        depends_on=["architecture"], directive="Write a numbered SQL migration.",
    )  # fmt: skip
    task = "add a migration for the invoices table"
    full = project.load("--budget-tokens", "16000", task)
    assert heading_ids(full.stdout) == ["architecture", "db-migration"]  # the prerequisite first
    size = estimate_tokens(full.stdout)
    tight = project.load("--budget-tokens", str(size - 40), task)
    _check_budget(tight, size - 40)
    assert heading_ids(tight.stdout) == ["db-migration"]  # the task's memory keeps its body
    assert printed_ids(tight.stdout) == ["architecture", "db-migration"]  # still in pack order


def test_a_long_top_memory_leaves_its_room_to_the_short_ones_below_it(project):
    long_body = " ".join(f"stage{i} validates the cart and writes an audit row" for i in range(120))
    project.write("deploy", f"# Deploy\n{long_body}", tags=["deploy"], directive="How a deploy is built.")
    _deploy_memories(project, 2)
    ranked = entry_ids(project.load_json("--budget-tokens", "16000", "deploy"))
    assert ranked[0] == "deploy" and len(ranked) == 3, ranked
    result = project.load("--budget-tokens", "600", "deploy")
    _check_budget(result, 600)
    assert card_ids(result.stdout)[:1] == ["deploy"]  # too long for the budget alone
    assert heading_ids(result.stdout) == ranked[1:]  # the short ones below it keep their bodies
    assert result.counts() == (3, 3)


def test_budget_drops_lowest_cards_last_and_count_line_follows(project):
    project.config({"load": {"limit": 10}})
    for name in NAMES:
        long_directive = f"Deploy the {name} service " + " ".join(f"step{name}{i}" for i in range(25)) + "."
        project.write(f"deploy-{name}", f"# {name}\nDeploy {name}.", tags=["deploy"], directive=long_directive)
    ranked = entry_ids(project.load_json("--budget-tokens", "16000", "deploy"))
    assert len(ranked) == 10
    result = project.load("--budget-tokens", "200", "deploy")
    _check_budget(result, 200)
    shown = card_ids(result.stdout)
    assert heading_ids(result.stdout) == []
    assert 0 < len(shown) < 10
    assert shown == ranked[: len(shown)]  # the lowest-ranked cards were dropped
    assert result.counts() == (len(shown), 10)
    assert result.lines[-1] == "fetch: engram load --id " + ",".join(shown)
    payload = project.load_json("--budget-tokens", "200", "deploy")
    assert payload["selected"] == len(shown)
    dropped = {o["id"]: o["reason"] for o in payload["omitted"]}
    assert set(dropped) == set(ranked[len(shown) :])
    assert set(dropped.values()) == {"budget"}


def test_default_budget_caps_the_default_output(project):
    _deploy_memories(project, 5, body_words=500)  # bodies of ~2,000 tokens each
    result = project.load("deploy")
    _check_budget(result, 1600)  # load.budget_tokens default
    assert result.counts() == (5, 5)
    project.config({"load": {"budget_tokens": 400}})
    _check_budget(project.load("deploy"), 400)


def test_budget_caps_full_output_too(project):
    _deploy_memories(project, 5, body_words=100)
    unbounded = project.load("--full", "deploy")
    assert estimate_tokens(unbounded.stdout) > 400
    result = project.load("--full", "--budget-tokens", "400", "deploy")
    _check_budget(result, 400)
    assert result.counts()[0] == len(heading_ids(result.stdout)) + len(card_ids(result.stdout))


def test_budget_counts_non_ascii_characters_as_tokens(project):
    for name in NAMES[:4]:
        project.write(
            f"deploy-{name}",
            f"# {name}\nデプロイ手順 deploy {name} " + "本番環境への反映。" * 40,
            tags=["deploy"],
            directive=f"デプロイ {name}.",
        )
    result = project.load("--budget-tokens", "300", "deploy")
    _check_budget(result, 300)
    assert len(result.stdout) <= 4 * 300


def test_bodies_are_never_cut(project):
    _deploy_memories(project, 5, body_words=80)
    for budget in (200, 450, 800, 1200):
        result = project.load("--budget-tokens", str(budget), "deploy")
        _check_budget(result, budget)
        for memory_id in heading_ids(result.stdout):
            name = memory_id.removeprefix("deploy-")
            assert f"filler{name}79" in result.stdout  # the last word of the body is there


# --- property: the budget always holds and the count line always matches ----------------------

WORDS = (
    "deploy",
    "release",
    "kafka",
    "schema",
    "cache",
    "token",
    "review",
    "lint",
    "docker",
    "metrics",
    "tracing",
    "backup",
    "index",
    "query",
    "gateway",
    "signing",
    "rollback",
    "canary",
)
CJK = ("デプロイ", "本番環境", "缓存", "数据库")


class Corpus(tuple):
    def __new__(cls, project, bodies):
        return super().__new__(cls, (project, bodies))

    def __repr__(self) -> str:
        return f"Corpus({len(self[1])} memories)"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    rng = random.Random(20240611)
    project = Project(tmp_path_factory.mktemp("corpus"))
    bodies = {}
    for number in range(20):
        memory_id = f"mem-{number:02d}"
        topic = rng.sample(WORDS, 3)
        size = rng.choice((5, 20, 60, 150, 400, 900))
        words = [rng.choice(WORDS + ("the", "and", "notes", "step")) for _ in range(size)]
        if number % 5 == 0:
            words += [rng.choice(CJK) for _ in range(size // 4)]
        body = f"# {topic[0].title()} notes\n" + " ".join(words) + f" END{number:02d}"
        fields = {"tags": topic[:2], "directive": f"Handle {topic[0]} and {topic[2]} carefully."}
        if number % 4 == 1:
            fields["depends_on"] = [f"mem-{number - 1:02d}"]
        if number % 7 == 3:
            fields["confidence"] = "high"
        project.write(memory_id, body, type=("rule", "skill", "knowledge")[number % 3], **fields)
        bodies[memory_id] = body
    assert project.load("deploy").returncode == 0  # builds the index once
    return Corpus(project, bodies)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    budget=st.integers(min_value=200, max_value=4000),
    query=st.lists(st.sampled_from(WORDS + CJK + ("the", "rule", "workflow")), min_size=1, max_size=5),
    mode=st.sampled_from([(), ("--full",), ("--disclosure", "full")]),
    expand_top=st.integers(min_value=0, max_value=3),
)
def test_budget_property(corpus, budget, query, mode, expand_top):
    project, bodies = corpus
    project.config({"load": {"expand_top": expand_top}})
    task = " ".join(query)
    result = project.load(*mode, "--budget-tokens", str(budget), task)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert estimate_tokens(result.stdout) <= budget

    selected, total = result.counts()
    payload_run = project.load(*mode, "--json", "--budget-tokens", str(budget), task)
    payload = json.loads(payload_run.stdout)
    assert (selected, total) == (payload["selected"], payload["total_related"])
    assert payload["selected"] == len(payload["entries"])
    printed = printed_ids(result.stdout)  # in pack order: a demoted prerequisite's card before its dependent's body
    assert printed[: len(payload["entries"])] == entry_ids(payload)
    extra_cards = printed[len(payload["entries"]) :]
    assert len(extra_cards) <= 5 and not set(extra_cards) & set(entry_ids(payload))
    assert heading_ids(result.stdout) == [e["id"] for e in payload["entries"] if e["shown"] == "body"]

    # bodies are whole, never cut mid-way
    for memory_id in heading_ids(result.stdout):
        visible = bodies[memory_id]
        assert visible in result.stdout, memory_id

    # cards are dropped only once every body has been demoted
    unbounded = json.loads(project.load(*mode, "--json", "--budget-tokens", "16000", task).stdout)
    if heading_ids(result.stdout):
        assert entry_ids(payload) == entry_ids(unbounded)
    assert entry_ids(payload) == entry_ids(unbounded)[: len(payload["entries"])]  # lowest-ranked go first
    if re.search(r"^fetch: ", result.stdout, re.M):
        assert result.lines[-1] == "fetch: " + payload["fetch"]
        assert payload["fetch"] == "engram load --id " + ",".join(card_ids(result.stdout))


def test_fitting_a_large_pack_renders_it_a_few_times_not_once_an_entry(project):
    """`load --all --budget-tokens 2000` over 2,500 matching memories took a minute: each body demoted
    and each card dropped rendered the whole pack again (a monorepo audit). Counts are now found by
    halving; the pack is the one the one-by-one cut gave: the most entries that fit, in rank order."""
    from engram.layers import open_layers
    from engram.select import options_from_config, pack_options_from_config, pack_routing, route
    from engram.workspace import open_workspace

    for n in range(300):
        project.write(f"deploy-{n:03d}", f"# Deploy {n}\nDeploy notes {n}.", tags=["deploy"], directive=f"Deploy {n}.")
    assert project.run("index").returncode == 0
    ws = open_workspace(project.path)
    layers = open_layers(ws, None, [])
    options = options_from_config(ws.config, everything=True)
    routing = route(layers, "deploy", options)
    renders = []

    def fits(pack) -> bool:
        renders.append(len(pack.entries))
        return estimate_tokens(render_text(pack)) <= 2000

    pack = pack_routing(routing, options, pack_options_from_config(ws.config, everything=True), fits)
    assert len(routing.admitted) == 300 and 0 < len(pack.entries) < 300
    assert len(renders) <= 2 * 10 + 4  # two halvings of 300, not 300 + 300 renders
    assert fits(pack)
    kept = [entry.cand.id for entry in pack.entries]
    assert kept == [cand.id for cand in routing.admitted][: len(kept)]

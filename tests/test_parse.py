"""engram.parse: frontmatter, defaults, the agent-visible body, and parse errors."""

from __future__ import annotations

import re
import textwrap
import unicodedata

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engram.parse import Memory, ParseError, parse_memory

ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
HIDDEN_HEADING = re.compile(r"^ {0,3}##[ \t]+(context|examples?|origin)[ \t#]*$", re.I)
HIDDEN_SETEXT_TEXT = re.compile(r"^ {0,3}(context|examples?|origin)[ \t]*$", re.I)
SETEXT_DASHES = re.compile(r"^ {0,3}-+[ \t]*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def doc(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def hidden_headings_outside_fences(body: str) -> list[str]:
    """ATX (``## Context``) and setext (``Context`` over ``---``) hidden headings left in a body."""
    found, in_fence = [], False
    lines = body.splitlines()
    for index, line in enumerate(lines):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        setext = (
            HIDDEN_SETEXT_TEXT.match(line)
            and (index == 0 or not lines[index - 1].strip())
            and index + 1 < len(lines)
            and SETEXT_DASHES.match(lines[index + 1])
        )
        if not in_fence and (HIDDEN_HEADING.match(line) or setext):
            found.append(line)
    return found


# --- frontmatter values -------------------------------------------------------------------


FULL = doc(
    """
    ---
    id: release-checklist
    type: rule
    tags: [release, deploy]
    directive: Run the release checklist before tagging.
    summary: Steps and owners for cutting a release.
    triggers: [ship it, cut a release]
    applies_to: ["src/release/**", "pyproject.toml"]
    depends_on: [release-foundation]
    level: advanced
    confidence: high
    authority: instruction
    lifecycle: active
    valid_until: 2027-06-30
    role: [backend]
    updated: 2026-11-01
    ---
    # Release checklist

    ## Content
    - bump the version
    - tag the release

    ## Context
    We forgot twice in 2025.

    ## Example
    `git tag v1.2.3`

    ## Origin
    Postmortem 42.
    """
)


def test_design_example_parses_every_field():
    m = parse_memory(FULL, "rules/release-checklist.md")
    assert isinstance(m, Memory)
    assert m.id == "release-checklist"
    assert m.type == "rule"
    assert m.tags == ["release", "deploy"]
    assert m.directive == "Run the release checklist before tagging."
    assert m.summary == "Steps and owners for cutting a release."
    assert m.triggers == ["ship it", "cut a release"]
    assert m.applies_to == ["src/release/**", "pyproject.toml"]
    assert m.depends_on == ["release-foundation"]
    assert m.confidence == "high"
    assert m.authority == "instruction"
    assert m.lifecycle == "active"
    assert m.roles == ["backend"]
    assert m.title == "Release checklist"
    assert isinstance(m.level, int)
    assert m.level > parse_memory("---\nlevel: foundation\n---\n", "rules/a.md").level


def test_dates_stay_the_strings_the_author_wrote():
    m = parse_memory(FULL, "rules/release-checklist.md")
    assert m.valid_until == "2027-06-30"
    assert m.updated == "2026-11-01"
    assert type(m.valid_until) is str and type(m.updated) is str


def test_booleans_and_numbers_stay_strings():
    text = doc(
        """
        ---
        id: scalars
        directive: yes
        summary: 1.10
        tags: [on, no, 0755, 1e3]
        triggers: off, true
        ---
        body
        """
    )
    m = parse_memory(text, "rules/scalars.md")
    assert m.directive == "yes"
    assert m.summary == "1.10"
    assert m.tags == ["on", "no", "0755", "1e3"]
    assert m.triggers == ["off", "true"]


@pytest.mark.parametrize(
    "line, expected",
    [
        ("tags: [release, deploy]", ["release", "deploy"]),
        ("tags: release, deploy", ["release", "deploy"]),
        ("tags: release,deploy ,  ops", ["release", "deploy", "ops"]),
        ("tags: single", ["single"]),
        ("tags:\n  - release\n  - deploy", ["release", "deploy"]),
        ("tags: []", []),
        ("tags:", []),
    ],
)
def test_lists_are_yaml_lists_or_comma_strings(line, expected):
    m = parse_memory(f"---\nid: x\n{line}\n---\nbody\n", "rules/x.md")
    assert m.tags == expected


def test_comma_strings_work_for_every_list_field():
    text = doc(
        """
        ---
        id: lists
        triggers: ship it, cut a release
        applies_to: src/**, docs/*.md
        depends_on: a, b
        role: backend, ops
        ---
        """
    )
    m = parse_memory(text, "rules/lists.md")
    assert m.triggers == ["ship it", "cut a release"]
    assert m.applies_to == ["src/**", "docs/*.md"]
    assert m.depends_on == ["a", "b"]
    assert m.roles == ["backend", "ops"]


def test_crlf_line_endings_parse():
    text = "---\r\nid: crlf\r\ntags: a, b\r\n---\r\n# Title\r\n\r\nvisible\r\n\r\n## Context\r\nhidden\r\n"
    m = parse_memory(text, "rules/crlf.md")
    assert m.id == "crlf"
    assert m.tags == ["a", "b"]
    assert "visible" in m.body
    assert "hidden" not in m.body


def test_utf8_bom_before_frontmatter_is_tolerated():
    """Editors on Windows save a BOM; such a file must still index without edits."""
    m = parse_memory("\ufeff---\nid: bom-file\ntags: [a]\n---\nbody text\n", "rules/bom.md")
    assert m.id == "bom-file"
    assert m.tags == ["a"]
    assert "id: bom-file" not in m.body


# --- defaults -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel, expected_id",
    [
        ("rules/release-checklist.md", "release-checklist"),
        ("rules/My Cool Rule.md", "my-cool-rule"),
        ("knowledge/API_Notes v2.md", "api_notes-v2"),
        ("skills/deploy.runbook.md", "deploy.runbook"),
        ("skills/nested/dir/Deep File.md", "deep-file"),
    ],
)
def test_missing_id_falls_back_to_slugified_stem(rel, expected_id):
    m = parse_memory("---\ntags: [a]\n---\nbody\n", rel)
    assert m.id == expected_id
    assert ID_RE.match(m.id)


@pytest.mark.parametrize(
    "rel", ["rules/決済.md", "knowledge/배포 절차.md", "rules/---.md", "rules/データ移行-v2.md", "rules/デプロイ-v2.md"]
)
def test_a_file_name_that_gives_no_id_is_an_error_without_one(rel):
    """Every file named in Japanese or Korean used to be `memory`, the second a duplicate of the
    first, and a name holding a few Latin letters took only those (`データ移行-v2` and `デプロイ-v2`
    were both `v2`; multilingual teams' audits): now each says what to add."""
    with pytest.raises(ParseError) as info:
        parse_memory("---\ntags: [a]\n---\nbody\n", rel)
    assert info.value.reason == "id: missing, and the file name gives none (letters a-z and digits only): add one"
    assert parse_memory("---\nid: payments\n---\nbody\n", rel).id == "payments"


@pytest.mark.parametrize("form", ["NFC", "NFD"])
def test_a_file_name_with_marks_gives_its_letters_without_them(form):
    """`hướng-dẫn-đặt-tên.md` was `h-ng-d-n--t-t-n`, and another id again as macOS stores the name
    decomposed (a multilingual team's audit)."""
    rel = unicodedata.normalize(form, "rules/hướng-dẫn-đặt-tên.md")
    assert parse_memory("---\ntags: [a]\n---\nbody\n", rel).id == "huong-dan-dat-ten"
    assert parse_memory("---\ntags: [a]\n---\nbody\n", "rules/Café Ñandú.md").id == "cafe-nandu"


@pytest.mark.parametrize(
    "rel, expected_type, expected_authority",
    [
        ("rules/x.md", "rule", "instruction"),
        ("skills/x.md", "skill", "instruction"),
        ("knowledge/x.md", "knowledge", "reference"),
    ],
)
def test_type_and_authority_default_from_folder(rel, expected_type, expected_authority):
    m = parse_memory("---\nid: x\n---\nbody\n", rel)
    assert m.type == expected_type
    assert m.authority == expected_authority
    assert m.confidence == "medium"
    assert m.lifecycle == "active"


def test_workflow_type_is_a_skill():
    m = parse_memory("---\nid: wf\ntype: workflow\n---\nbody\n", "knowledge/wf.md")
    assert m.type == "skill"
    assert m.authority == "instruction"


def test_explicit_type_wins_over_folder_and_sets_default_authority():
    m = parse_memory("---\nid: k\ntype: knowledge\n---\nbody\n", "rules/k.md")
    assert m.type == "knowledge"
    assert m.authority == "reference"
    m = parse_memory("---\nid: k\ntype: knowledge\nauthority: instruction\n---\n", "rules/k.md")
    assert m.authority == "instruction"


def test_missing_frontmatter_uses_all_defaults():
    m = parse_memory("# Plain note\n\nJust markdown.\n", "knowledge/Plain Note.md")
    assert m.id == "plain-note"
    assert m.type == "knowledge"
    assert m.confidence == "medium"
    assert m.authority == "reference"
    assert m.tags == []
    assert m.title == "Plain note"
    assert "Just markdown." in m.body


def test_empty_frontmatter_uses_defaults():
    m = parse_memory("---\n---\nbody\n", "skills/empty-fm.md")
    assert (m.id, m.type, m.confidence, m.authority) == ("empty-fm", "skill", "medium", "instruction")
    assert m.body == "body"


# --- the agent-visible body -----------------------------------------------------------------


def test_hidden_sections_are_removed_and_content_kept():
    m = parse_memory(FULL, "rules/release-checklist.md")
    assert "# Release checklist" in m.body
    assert "## Content" in m.body
    assert "- bump the version" in m.body and "- tag the release" in m.body
    for gone in ("## Context", "We forgot twice", "## Example", "git tag v1.2.3", "## Origin", "Postmortem 42"):
        assert gone not in m.body
    assert "id: release-checklist" not in m.body


def test_hidden_section_ends_at_next_level_two_heading_and_hides_its_subsections():
    body = doc(
        """
        # T

        ## Context
        why we do it
        ### Details
        more hidden detail

        ## Steps
        1. visible step
        ## Origin
        hidden origin
        # Appendix
        visible appendix
        """
    )
    m = parse_memory("---\nid: t\n---\n" + body, "rules/t.md")
    assert "visible step" in m.body and "## Steps" in m.body
    assert "visible appendix" in m.body
    assert "why we do it" not in m.body
    assert "more hidden detail" not in m.body
    assert "hidden origin" not in m.body
    # what agents never see, and only that, is kept for the secret check
    assert "id: t" in m.unseen and "more hidden detail" in m.unseen and "hidden origin" in m.unseen
    assert "visible step" not in m.unseen and "visible appendix" not in m.unseen


def test_context_heading_inside_code_fence_is_not_a_section():
    body = doc(
        """
        # Writing memories

        A memory can have a hidden section:

        ```markdown
        ## Context
        this line is part of the example code
        ```

        ~~~
        ## Origin
        tilde fenced, also code
        ~~~

        after the fences
        """
    )
    m = parse_memory("---\nid: fenced\n---\n" + body, "knowledge/fenced.md")
    assert "## Context\nthis line is part of the example code" in m.body
    assert "tilde fenced, also code" in m.body
    assert "after the fences" in m.body


def test_upstream_style_memory_parses_without_edits():
    text = doc(
        """
        ---
        id: prefer-pnpm
        type: rule
        tags: [node, package-manager]
        author: jane
        confidence: high
        created: 2025-01-12
        updated: 2025-03-02
        source: conversation
        ---
        # Prefer pnpm

        ## Context
        The team moved from npm to pnpm in 2024.

        ## Content
        Always use `pnpm install`, never `npm install`.

        ## Example
        pnpm add zod
        """
    )
    m = parse_memory(text, "rules/prefer-pnpm.md")
    assert m.id == "prefer-pnpm"
    assert m.type == "rule"
    assert m.tags == ["node", "package-manager"]
    assert m.confidence == "high"
    assert m.updated == "2025-03-02"
    assert m.warnings == ()  # `author`, a key engram does not know, is tolerated
    assert "Always use `pnpm install`" in m.body
    assert "moved from npm" not in m.body
    assert "pnpm add zod" not in m.body


@pytest.mark.parametrize(
    "key, meant",
    [("tgas", "tags"), ("tag", "tags"), ("directiv", "directive"), ("applies-to", "applies_to"),
     ("appliesTo", "applies_to"), ("depends-on", "depends_on"), ("trigger", "triggers"), ("sumary", "summary"),
     ("globs", "applies_to"), ("paths", "applies_to"), ("description", "directive")],
)  # fmt: skip
def test_a_key_that_looks_like_one_engram_reads_is_a_warning_with_its_line(key, meant):
    m = parse_memory(f"---\nid: x\n{key}: a\n---\nbody\n", "rules/x.md")
    assert m.warnings == ((f"`{key}` is not a key engram reads: did you mean `{meant}`?", 3),)  # as written


def test_cursors_always_apply_true_says_to_tag_the_memory_always():
    m = parse_memory("---\nid: x\nalwaysApply: true\n---\nbody\n", "rules/x.md")
    assert m.warnings == (("`alwaysApply` is not a key engram reads: did you mean `tags: [always]`?", 3),)


@pytest.mark.parametrize("value", ["", " ", "~", "null", "[]"])
def test_another_tools_key_with_no_value_is_no_warning(value):
    """Cursor's rule files carry `description:` and `globs:` with nothing after them: they say
    nothing, so nothing is lost."""
    m = parse_memory(f"---\nid: x\ndescription: {value}\nglobs: {value}\ntgas: {value}\n---\nbody\n", "rules/x.md")
    assert m.warnings == ()


def test_every_key_engram_reads_and_other_keys_raise_no_warning():
    from engram.parse import READ_KEYS

    valid = {"type": "rule", "confidence": "high", "authority": "reference", "lifecycle": "active", "id": "x",
             "valid_until": "2030-01-01", "updated": "2025-01-01", "level": "1", "depth": "1", "dependency_depth": "1"}  # fmt: skip
    others = ["author", "created", "source", "title", "name", "version", "label", "alwaysapply"]
    lines = [f"{key}: {valid.get(key, 'a')}" for key in [*READ_KEYS, *others]]
    m = parse_memory("---\n" + "\n".join(lines) + "\n---\nbody\n", "rules/x.md")
    assert m.warnings == ()


@pytest.mark.parametrize("text", ["", "---\n---\n", "---\nid: x\n---\n# Title only\n", "---\ntags: [a]\n---\n\n\n"])
def test_a_file_with_no_text_for_agents_is_a_warning(text):
    from engram.parse import NO_TEXT

    assert [reason for reason, _ in parse_memory(text, "rules/x.md").warnings] == [NO_TEXT]
    assert parse_memory("---\ndirective: Do it.\n---\n", "rules/x.md").warnings == ()


# --- errors ---------------------------------------------------------------------------------


def test_unclosed_frontmatter_is_a_parse_error_with_line():
    with pytest.raises(ParseError) as info:
        parse_memory("---\nid: x\ntags: [a]\n\n# body without closing fence\n", "rules/x.md")
    assert info.value.line == 1
    assert "never closed" in info.value.reason or "closed" in str(info.value)


def test_yaml_syntax_error_names_the_file_line():
    text = "---\nid: x\nfoo: bar: baz\ntags: [a]\n---\nbody\n"
    with pytest.raises(ParseError) as info:
        parse_memory(text, "rules/x.md")
    assert info.value.line == 3  # the line in the file, not in the frontmatter
    assert "3" in str(info.value)


def test_a_colon_in_a_prose_value_is_read_as_its_text_with_a_warning():
    """A new user's rules wrote `directive: Triage a crash from Sentry: confirm ...` twice in 25."""
    memory = parse_memory(
        "---\nid: x\ntags: [sentry]\ndirective: Triage a crash from Sentry: confirm the release #1 first. \n"
        "summary: Who: the on-call\n---\nbody\n",
        "rules/x.md",
    )
    assert memory.directive == "Triage a crash from Sentry: confirm the release #1 first."
    assert memory.summary == "Who: the on-call" and memory.tags == ["sentry"]
    said = "holds ': ', which YAML refuses unquoted: read as one line of text; quote it for other tools"
    assert memory.warnings == ((f"`directive` {said}", 4), (f"`summary` {said}", 5))


def test_a_colon_in_a_value_says_to_quote_it_and_yaml_punctuation_is_shown():
    # not a prose value: an id or a list is not read as text
    with pytest.raises(ParseError) as info:
        parse_memory("---\nid: x: y\ndirective: Keep layers apart\n---\nbody\n", "rules/x.md")
    assert info.value.reason.endswith("(a value holding ': ' needs quotes)")
    # a prose value beside another YAML error: the file's own error stands
    with pytest.raises(ParseError) as info:
        parse_memory("---\nid: x\ndirective: Keep layers apart: api first\nfoo: bar: baz\n---\nbody\n", "rules/x.md")
    assert info.value.reason.endswith("(a value holding ': ' needs quotes)")
    with pytest.raises(ParseError) as info:
        parse_memory("---\nid: x\ntags: [a, 'secret value'\n---\nbody\n", "rules/x.md")
    assert "',' or ']'" in info.value.reason and "secret" not in info.value.reason


@pytest.mark.parametrize("line", ["applies_to: **/*.ts", "globs: **/*.ts", "applies_to: [*.py, src/**]"])
def test_a_glob_written_unquoted_as_cursor_writes_it_says_to_quote_it(line):
    with pytest.raises(ParseError) as info:
        parse_memory(f"---\nid: x\n{line}\n---\nbody\n", "rules/x.md")
    assert info.value.line == 3
    assert info.value.reason.endswith("""(a value starting with '*' needs quotes: "**/*.ts")""")


def test_unclosed_flow_list_reports_a_line_inside_or_at_end_of_frontmatter():
    with pytest.raises(ParseError) as info:
        parse_memory("---\nid: x\ntags: [a, b\n---\nbody\n", "rules/x.md")
    assert info.value.line in (3, 4)


@pytest.mark.parametrize("fm", ["- a\n- b", "just a string", "42", "[a, b]"])
def test_frontmatter_that_is_not_a_mapping_is_a_parse_error(fm):
    with pytest.raises(ParseError) as info:
        parse_memory(f"---\n{fm}\n---\nbody\n", "rules/x.md")
    assert "mapping" in info.value.reason


@pytest.mark.parametrize(
    "fm",
    [
        "id: Not Valid!",
        "id: -leading-dash",
        "id: {a: b}",
        "type: recipe",
        "confidence: absolute",
        "lifecycle: zombie",
        "authority: gospel",
        "level: expert-ish",
        "level: ²",
        "tags: {a: b}",
    ],
)
def test_bad_field_values_are_parse_errors(fm):
    with pytest.raises(ParseError):
        parse_memory(f"---\n{fm}\n---\nbody\n", "rules/x.md")


def test_parse_error_str_includes_line_and_reason():
    err = ParseError("something broke", 7)
    assert str(err) == "line 7: something broke"
    assert (err.reason, err.line) == ("something broke", 7)
    assert str(ParseError("no line")) == "no line"


# --- properties -----------------------------------------------------------------------------

REL_PATHS = st.sampled_from(
    ["rules/x.md", "skills/Deploy Runbook.md", "knowledge/ÄÖ notes.md", "rules/--.md", "knowledge/.md", "other/y.md"]
)
BODY_LINES = st.one_of(
    st.sampled_from(
        [
            "## Context",
            "## Example",
            "## Origin",
            "## Content",
            "## context",
            "## ORIGIN ##",
            "# Title",
            "### Context",
            "```",
            "~~~",
            "```python",
            "  ```",
            "---",
            "- item",
            "",
            "## Context ",
            "   ## Origin",
            "Context",
            "Examples",
            "-------",
            "=====",
            "Usage",
            "1. step",
        ]
    ),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30),
)
BODIES = st.lists(BODY_LINES, max_size=25).map("\n".join)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["rule", "skill", "workflow", "knowledge", "high", "low", "advanced", "3", "²", "2027-06-30"]),
    st.dates(),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
KEYS = st.one_of(
    st.sampled_from(
        [
            "id",
            "type",
            "tags",
            "directive",
            "summary",
            "triggers",
            "applies_to",
            "depends_on",
            "level",
            "confidence",
            "authority",
            "lifecycle",
            "valid_until",
            "role",
            "roles",
            "updated",
            "author",
        ]
    ),
    st.text(max_size=10),
)
FRONTMATTER = st.dictionaries(KEYS, VALUES, max_size=8)


def _check_parse(text: str, rel: str) -> None:
    try:
        m = parse_memory(text, rel)
    except ParseError:
        return
    assert isinstance(m, Memory)
    assert ID_RE.match(m.id), m.id
    assert m.type in ("rule", "skill", "knowledge")
    assert hidden_headings_outside_fences(m.body) == [], m.body


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.one_of(
        st.text(),
        st.builds(lambda fm, body: f"---\n{fm}\n---\n{body}", st.text(), BODIES),
        st.builds(lambda fm, body: f"---\n{fm}\n{body}", st.text(), BODIES),
        BODIES,
    ),
    rel=REL_PATHS,
)
@example(text="---\nlevel: ²\n---\n", rel="rules/x.md")
@example(text="---\n? [a, b]\n: c\n---\n", rel="rules/x.md")
@example(text="---\nid: [[[]]]\n---\n", rel="rules/x.md")
@example(text="---\n\x00\n---\n", rel="rules/x.md")
def test_any_text_parses_or_raises_parse_error(text, rel):
    _check_parse(text, rel)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=FRONTMATTER, body=BODIES, rel=REL_PATHS)
def test_generated_frontmatter_parses_or_raises_parse_error(data, body, rel):
    fm = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    _check_parse(f"---\n{fm}---\n{body}", rel)


def test_setext_and_indented_hidden_headings_are_hidden_too():
    body = doc(
        """
        # Deploy

        Ship with the canary.

        Context
        -------
        SETEXT-SECRET

        Usage
        -----
        shown after a setext heading

           ## Origin
        INDENTED-SECRET

        ## Notes
        - item
        ---
        kept: a rule after a list item is no heading
        """
    )
    m = parse_memory("---\nid: d\n---\n" + body, "rules/d.md")
    assert "SETEXT-SECRET" not in m.body and "INDENTED-SECRET" not in m.body
    assert "shown after a setext heading" in m.body and "kept: a rule after a list item" in m.body
    assert hidden_headings_outside_fences(m.body) == []


def test_a_level_one_setext_heading_named_origin_is_not_hidden():
    m = parse_memory("---\nid: o\n---\n# T\n\nOrigin\n======\nvisible story\n", "rules/o.md")
    assert "visible story" in m.body


# Text made of the pieces the hidden-heading hint is built from, in any case, with the non-ASCII
# letters that match ASCII ones case-insensitively (İ, ı, ſ, the Kelvin sign) and others that do not.
_HINT_PIECES = st.sampled_from(
    [
        "##",
        " ",
        "\t",
        "\n",
        "\r",
        "\u2028",
        "\x85",
        "-",
        "=",
        "context",
        "example",
        "examples",
        "origin",
        "CONTEXT",
        "Example",
        "orIgin",
        "or\u0131gin",
        "OR\u0130GIN",
        "\u212aey",
        "é",
        "日本",
        "x",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_HINT_PIECES, max_size=12).map("".join))
@example("or\u0131gin\n-")
@example("## \u212aey\n## ORIGIN")
def test_the_hidden_heading_hint_is_the_case_insensitive_search_however_it_is_looked_for(text):
    from engram.parse import _HIDDEN_HEADING_HINT, _may_hide_sections

    assert _may_hide_sections(text) == (_HIDDEN_HEADING_HINT.search(text) is not None)


def test_a_prose_value_cut_by_a_yaml_comment_is_a_warning_with_its_line():
    text = (
        "---\nid: oncall\ntags: [incident]  # a comment on a list is meant\n"
        "directive: During an incident, post in #incidents first.\nsummary: 'quoted # kept'\n---\nPage.\n"
    )
    m = parse_memory(text, "rules/oncall.md")
    assert m.directive == "During an incident, post in"  # YAML's reading: the warning says so
    assert m.warnings == (
        ("`directive` stops before ' #': YAML reads the rest as a comment; quote the whole value", 4),
    )
    assert parse_memory("---\nid: c\ndirective: Write C# the house way.\n---\nx\n", "rules/c.md").warnings == ()


def test_a_key_given_twice_is_a_warning_naming_both_lines():
    m = parse_memory("---\nid: t\ndirective: one\ntags: [a]\ndirective: two\n---\nx\n", "rules/t.md")
    assert m.directive == "two"
    assert m.warnings == (("`directive` is given again (line 3 too): YAML reads this one only", 5),)


def test_classic_mac_line_endings_end_lines():
    m = parse_memory("---\rid: mac\rdirective: One line.\r---\rbody line\rsecond\r", "rules/mac.md")
    assert (m.id, m.directive, m.body) == ("mac", "One line.", "body line\nsecond")


def test_an_invalid_file_says_its_warnings_too():
    """Every problem of a file at once: a misspelt key beside an invalid value (an adoption audit
    fixed the values and only then learned that `tags` was spelt `tgas`)."""
    with pytest.raises(ParseError) as info:
        parse_memory("---\nid: t\ntgas: [a]\nlifecycle: actve\n---\nx\n", "rules/t.md")
    assert [(p.reason, p.line) for p in info.value.problems] == [
        ("`tgas` is not a key engram reads: did you mean `tags`?", 3),
        ("lifecycle: must be one of active, review_due, superseded, archived", 4),
    ]


def test_a_glob_not_matched_as_written_is_a_warning():
    nine = "".join("{a,b}" for _ in range(9))  # 512 patterns
    eight = "".join("{a,b}" for _ in range(8))  # 256: every one matched
    text = f'---\nid: t\napplies_to: ["{nine}*.go", "{eight}*.go", "src/\u2028x", "ok/**"]\n---\nx\n'
    assert parse_memory(text, "rules/t.md").warnings == (
        ("an `applies_to` glob expands to more than 256 patterns; the rest are not matched", 3),
        (
            "an `applies_to` glob holding a line break, a tab or a control character is left out of the hosts' rule files",
            3,
        ),
    )


@pytest.mark.parametrize("tags", ["[決済、請求]", "決済、請求", "[billing，payments]"])
def test_a_list_item_holding_a_cjk_comma_is_a_warning(tags):
    """`tags: [決済、請求]` is one tag to YAML: the file says so (a multilingual team's audit)."""
    memory = parse_memory(f"---\nid: pay\ntags: {tags}\n---\nbody\n", "rules/pay.md")
    assert len(memory.tags) == 1
    [(reason, line)] = memory.warnings
    assert line == 3 and reason.startswith("`tags` holds an item with '") and reason.endswith("at ',' only")


def test_a_full_width_colon_says_it_is_no_yaml_colon():
    with pytest.raises(ParseError) as info:
        parse_memory("---\nid: pay\ntags：[a]\n---\nbody\n", "rules/pay.md")
    assert info.value.reason.endswith("(a full-width '：' is no YAML colon: write ': ')")

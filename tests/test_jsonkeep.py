"""Tests for engram.jsonkeep: a JSON document written back in its file's own form."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from engram import jsonkeep

SCALARS = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=8)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)
FORMS = st.sampled_from([None, 0, 1, 2, 4, "\t"])  # compact, then indents


def written(value: object, form: object) -> str:
    return json.dumps(value, indent=form) if form is not None else json.dumps(value, separators=(",", ":"))


@settings(max_examples=300, deadline=None)
@given(original=VALUES, new=VALUES, form=FORMS)
def test_any_document_reads_back_as_written_with_its_members_in_order(original, new, form) -> None:
    text = jsonkeep.dumps(new, written(original, form))
    assert json.dumps(json.loads(text)) == json.dumps(new)
    assert text.endswith("\n")


@settings(max_examples=200, deadline=None)
@given(value=VALUES, form=FORMS)
def test_an_unchanged_document_keeps_its_text(value, form) -> None:
    text = written(value, form)
    assert jsonkeep.dumps(value, text) == text + "\n"


def test_only_the_changed_member_is_rewritten_in_the_files_indent() -> None:
    original = '{\n    "allow": ["a", "b"],\n    "n": 1e2,\n    "hooks": {"Stop": [{"command": "mine"}]}\n}\n'
    new = json.loads(original)
    new["hooks"]["Start"] = [{"command": "engram"}]
    assert jsonkeep.dumps(new, original) == (
        "{\n"
        '    "allow": ["a", "b"],\n'
        '    "n": 1e2,\n'
        '    "hooks": {\n'
        '        "Stop": [{"command": "mine"}],\n'
        '        "Start": [\n'
        "            {\n"
        '                "command": "engram"\n'
        "            }\n"
        "        ]\n"
        "    }\n"
        "}\n"
    )


def test_an_element_keeps_its_text_where_the_list_around_it_changed() -> None:
    original = '[{"a": 1}, {"b": [1,2]}]'
    assert jsonkeep.dumps([{"b": [1, 2]}, {"c": 3}], original) == '[\n  {"b": [1,2]},\n  {\n    "c": 3\n  }\n]\n'


def test_trailing_commas_of_the_original_are_read_and_kept_where_nothing_changed() -> None:
    original = '{\n  "keep": [1, 2,],\n  "x": 1,\n}'
    assert jsonkeep.dumps({"keep": [1, 2], "x": 2}, original) == '{\n  "keep": [1, 2,],\n  "x": 2\n}\n'


def test_text_that_is_no_json_gives_the_plain_form() -> None:
    assert jsonkeep.dumps({"a": [1]}, "{ not json") == '{\n  "a": [\n    1\n  ]\n}\n'
    assert jsonkeep.dumps({"a": 1}, "") == '{\n  "a": 1\n}\n'

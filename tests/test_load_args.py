"""`engram load` flag parsing: the stdlib parser that replaced argparse on the read path."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from engram.load import FlagError, help_text, parse_args


def one_line(message: str) -> bool:
    """No control character and no line or paragraph break: what the gate promises of a message
    (not `str.isprintable`, which also refuses spaces other than ' ' and unassigned code points)."""
    return not any(unicodedata.category(char) in {"Cc", "Zl", "Zp"} for char in message)


def test_flags_and_task_words_in_any_order():
    args = parse_args(["deploy", "--json", "the", "--id", "a,b", "--id=c", "canary", "--index", "team.db"])
    assert args.task == ["deploy", "the", "canary"]
    assert args.json and not args.dry_run and not args.all and not args.full
    assert args.id == ["a,b", "c"]
    assert args.index == "team.db"


def test_values_with_equals_and_unique_prefixes():
    args = parse_args(["--budget=500", "--disc", "full", "--dry", "x"])
    assert (args.budget_tokens, args.disclosure, args.dry_run, args.task) == ("500", "full", True, ["x"])


def test_double_dash_ends_the_flags():
    assert parse_args(["--", "--json", "-h"]).task == ["--json", "-h"]


def test_single_dash_words_are_task_words():
    assert parse_args(["why", "is", "-5", "-", "negative"]).task == ["why", "is", "-5", "-", "negative"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (
            ["--env flag is broken"],
            'unrecognized arguments: --env flag is broken (a task that starts with "--" goes after a lone --: '
            'engram load -- "<task>")',
        ),
        (["--d", "x"], "ambiguous option: --d could match --dry-run, --disclosure"),
        (["--index"], "argument --index: expected one argument"),
        (["--id", "--json"], "argument --id: expected one argument"),
        (["--json=yes"], "argument --json: ignored explicit argument 'yes'"),
        (["--disclosure", "layered"], "argument --disclosure: invalid choice: 'layered' (choose from 'auto', 'full')"),
    ],
)
def test_bad_flags_name_the_problem(argv, message):
    with pytest.raises(FlagError) as caught:
        parse_args(argv)
    assert str(caught.value) == message


def test_help_lists_every_flag():
    text = help_text()
    for flag in ("--dry-run", "--all", "--full", "--json", "--id", "--budget-tokens", "--disclosure", "--index"):
        assert flag in text


@given(st.lists(st.text().filter(lambda w: not w.startswith("--"))))
def test_words_without_flags_are_the_task_unchanged(words):
    assert parse_args(words).task == words


@given(st.lists(st.text(min_size=1)))
@example(["--di", "\U00012544"])  # an unassigned code point: one line, though not `isprintable`
def test_any_argv_parses_or_raises_a_one_line_flag_error(argv):
    try:
        args = parse_args(argv)
    except FlagError as exc:
        assert str(exc) and one_line(str(exc))
    else:
        assert set(args.task) <= set(argv)

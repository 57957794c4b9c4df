"""Messages a newcomer meets first: version and help, `init`'s next steps, field errors with lines,
the `index` summary, files that are not memories, hidden text, and commands run outside a project.
Commands run as `engram` does (tests/helpers.py); the parser's rules are also checked directly.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pkgutil
import re
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest

import engram
from engram.entry import guarded
from engram.errors import EngramError
from engram.link import LinkError
from engram.parse import FieldErrors, parse_memory
from engram.render import with_directive
from helpers import ENGRAM_BIN

OUTSIDE = "engram: error: no .agents/.engram here or above; `engram init` creates one\n"


@pytest.fixture
def nowhere(tmp_path: Path) -> Path:
    path = tmp_path / "nowhere"
    path.mkdir()
    return path


def test_version(run_engram, nowhere: Path) -> None:
    proc = run_engram(["--version"], cwd=nowhere)
    assert (proc.returncode, proc.stdout) == (0, f"engram {version('engram')}\n")


@pytest.mark.parametrize("args", [["-h"], ["check", "-h"], ["index", "-h"]])
def test_short_help_is_help(run_engram, nowhere: Path, args: list[str]) -> None:
    short = run_engram(args, cwd=nowhere)
    long = run_engram([*args[:-1], "--help"], cwd=nowhere)
    assert short.returncode == 0 and short.stdout == long.stdout
    assert "Usage: engram" in short.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["index", "--frobnicate"], "No such option: --frobnicate (`engram index -h` says how)"),
        (["watch", "--idle-exit", "-1"], "Invalid value for '--idle-exit': Input should be greater than or equal to 1"
         " (`engram watch -h` says how)"),
        (["frob"], "No such command 'frob'. (`engram -h` says how)"),
    ],
)  # fmt: skip
def test_a_usage_error_is_one_line(run_engram, nowhere: Path, args: list[str], said: str) -> None:
    proc = run_engram(args, cwd=nowhere)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"engram: error: {said}\n")


def test_help_is_plain_as_the_command_reference_shows_it(run_engram, nowhere: Path) -> None:
    """No typer boxes and no `<bool>` after each flag (an adoption audit): docs/commands.md's format."""
    shown = run_engram(["link", "-h"], cwd=nowhere)
    assert shown.returncode == 0 and shown.stdout.startswith("Usage: engram link [OPTIONS] {host}")
    assert "<bool>" not in shown.stdout and "\u256d" not in shown.stdout
    bare = run_engram([], cwd=nowhere)
    assert (bare.returncode, bare.stdout) == (2, "") and bare.stderr.startswith("Usage: engram [OPTIONS] COMMAND")


def test_init_prints_the_next_steps(run_engram, nowhere: Path) -> None:
    out = run_engram(["init"], cwd=nowhere).stdout
    steps = out[out.index("next steps:") :]
    for step in ("rules/no-secrets.md", "directive: ", 'engram load "', "engram link claude", "engram check"):
        assert step in steps, step


def test_init_in_a_folder_holding_memories_says_to_compile_them(run_engram, nowhere: Path) -> None:
    """A new user's repo with its memories already written is not told to write an example one."""
    run_engram(["init"], cwd=nowhere)
    for rel in ("rules/a.md", "skills/deploy/b.md"):
        path = nowhere / ".agents/.engram" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("---\nid: x\n---\nText.\n")
    steps = [line.strip() for line in run_engram(["init"], cwd=nowhere).stdout.splitlines()]
    assert (
        "1. engram index                                 # compiles the 2 memory files found; names any problem"
        in steps
    )
    assert not any("no-secrets" in line for line in steps)


@pytest.mark.parametrize("in_the_way", ["file", "broken link"])
def test_init_where_the_root_is_no_folder_is_one_line(run_engram, nowhere: Path, in_the_way: str) -> None:
    """A red-team audit: `init` named raw Python exceptions (NotADirectoryError, FileExistsError)."""
    root = nowhere / ".agents/.engram"
    root.parent.mkdir()
    if in_the_way == "file":
        root.write_text("not a folder")
    else:
        root.symlink_to(nowhere / "gone")
    proc = run_engram(["init"], cwd=nowhere)
    assert (proc.returncode, proc.stderr) == (
        1,
        "engram: error: .agents/.engram is not a folder (a file or a broken link); move it away first\n",
    )


def test_init_names_other_tools_rules_and_the_root_as_seen_from_a_sub_folder(run_engram, nowhere: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=nowhere, check=True)
    (nowhere / ".cursor/rules/engram").mkdir(parents=True)
    for name in ("ts.mdc", "react.mdc", "engram/generated.mdc"):
        (nowhere / ".cursor/rules" / name).write_text("---\nglobs: **/*.ts\n---\nNo any.\n")
    (nowhere / "CLAUDE.md").write_text("# Project\n")
    first = run_engram(["init"], cwd=nowhere).stdout.splitlines()
    assert "engram root: .agents/.engram" in first
    assert (
        "rules in other tools' formats: CLAUDE.md, .cursor/rules (2 files); engram's docs/adopting.md says how to"
        " bring them in"
    ) in first
    package = nowhere / "packages" / "web"
    package.mkdir(parents=True)
    again = run_engram(["init"], cwd=package).stdout.splitlines()
    assert again[0] == "engram root: ../../.agents/.engram (already set up)"  # nothing created, the path as typed here
    assert "1. write a memory, e.g. ../../.agents/.engram/rules/no-secrets.md:" in [line.strip() for line in again]


@pytest.mark.parametrize("args", [["graph", "--rebuild"], ["graph"], ["index"], ["check"]])
def test_outside_a_project_is_one_line(run_engram, nowhere: Path, args: list[str]) -> None:
    proc = run_engram(args, cwd=nowhere)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", OUTSIDE)


def test_a_load_that_can_pack_nothing_says_why_and_still_prints_its_count_line(
    run_engram, nowhere: Path, project: Path
) -> None:
    outside = run_engram(["load", "hello"], cwd=nowhere)
    assert (outside.returncode, outside.stdout) == (0, "loaded 0 memory files / 0 total related memories\n")
    assert (
        outside.stderr
        == "engram: warning: no .agents/.engram here or above and no global folder: nothing to load; `engram init` creates one\n"
    )
    no_task = run_engram(["load"], cwd=project)
    assert (no_task.returncode, no_task.stdout) == (0, "loaded 0 memory files / 0 total related memories\n")
    assert no_task.stderr == 'engram: warning: no task given: engram load "<task>"\n'


def test_hook_help_is_for_a_terminal_and_a_host_still_gets_json(project: Path) -> None:
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: stdin is a terminal, as for a person typing `engram hook --help`
        os.chdir(project)
        os.execv(ENGRAM_BIN, [ENGRAM_BIN, "hook", "--help"])
    shown = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(fd, 4096):
            shown += chunk
    os.waitpid(pid, 0)
    assert shown.decode().startswith("usage: engram hook --host claude|codex|gemini|cursor\r\n")
    piped = subprocess.run(
        [ENGRAM_BIN, "hook", "--host", "claude", "--help"], input=b"{}", capture_output=True, cwd=project
    )
    assert piped.stdout == b"{}\n"  # a host's command always names its host
    for asked in (["-h"], ["--help"]):  # no --host: a person, even with stdin from /dev/null or a pipe
        shown_piped = subprocess.run([ENGRAM_BIN, "hook", *asked], input=b"", capture_output=True, cwd=project)
        assert shown_piped.stdout.decode().startswith("usage: engram hook --host claude|codex|gemini|cursor\n")


# --- field errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["next year", "2027-02-30", "30/06/2027", "20270630", "2027-06-30 noon"])
def test_an_invalid_date_is_a_field_error(value: str) -> None:
    with pytest.raises(FieldErrors) as info:
        parse_memory(f"---\nid: x\nvalid_until: {value}\n---\nbody\n", "rules/x.md")
    assert (info.value.reason, info.value.line) == ("valid_until: must be a date, YYYY-MM-DD", 3)


@pytest.mark.parametrize("value", ["2027-06-30", "2027-06-30T12:00:00", "2027-06-30 12:00", "", "null"])
def test_dates_as_written_are_kept(value: str) -> None:
    memory = parse_memory(f"---\nid: x\nupdated: {value}\nvalid_until: {value}\n---\nbody\n", "rules/x.md")
    assert memory.updated == memory.valid_until == (value if value not in ("", "null") else None)


def test_every_problem_of_a_file_comes_at_once_with_the_line_of_its_key() -> None:
    text = "---\nid: Bad Id\ntags: [a]\ntype: recipe\nconfidence: sure\nupdated: soon\n'level': expert\n---\nbody\n"
    with pytest.raises(FieldErrors) as info:
        parse_memory(text, "rules/x.md")
    assert [(e.line, e.reason.split(":")[0]) for e in info.value.problems] == [
        (2, "id"),
        (4, "type"),
        (5, "confidence"),
        (6, "updated"),
        (7, "level"),
    ]


def test_index_prints_each_problem_on_its_own_line(project: Path, run_engram, write_memory) -> None:
    write_memory(project, "rules/x.md", "id: x\nlifecycle: zombie\nvalid_until: next year", "body\n")
    proc = run_engram(["index"], cwd=project)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        "engram: invalid .agents/.engram/rules/x.md:3: lifecycle: must be one of active, review_due, superseded, archived",
        "engram: invalid .agents/.engram/rules/x.md:4: valid_until: must be a date, YYYY-MM-DD",
    ]


# --- the index summary and what it does not index ---------------------------------------------------


def test_the_summary_adds_up(project: Path, run_engram, write_memory) -> None:
    write_memory(project, "rules/a.md", {"id": "a"}, "A.\n")
    write_memory(project, "rules/b.md", {"id": "b"}, "B.\n")
    write_memory(project, "rules/bad.md", "id: bad\ntype: recipe", "Bad.\n")
    first = run_engram(["index"], cwd=project)
    assert first.stdout.splitlines()[0] == "indexed 2 memories from 3 files (3 added, 0 changed, 0 removed, 1 invalid)"
    write_memory(project, "rules/bad.md", {"id": "bad"}, "Fixed.\n")
    second = run_engram(["index"], cwd=project)
    assert second.stdout.splitlines()[0] == "indexed 3 memories from 3 files (0 added, 1 changed, 0 removed, 0 invalid)"


def test_markdown_outside_the_memory_folders_is_named_once(project: Path, run_engram, write_memory) -> None:
    root = project / ".agents/.engram"
    write_memory(project, "rules/a.md", {"id": "a"}, "A.\n")
    for rel in (
        "README.md",
        "notes/todo.md",
        "notes/deep/idea.md",
        "archive/old.md",
        "inbox/new.md",
        "notes/data.json",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("# not a memory\n")
    proc = run_engram(["index"], cwd=project)
    assert proc.returncode == 0
    notes = [line for line in proc.stderr.splitlines() if "not indexed" in line]
    assert notes == [
        "engram: note: 3 files not indexed, outside rules/, skills/ and knowledge/: .agents/.engram/README.md, "
        ".agents/.engram/notes/deep/idea.md, .agents/.engram/notes/todo.md"
    ]
    assert proc.stdout.splitlines()[0].startswith("indexed 1 memory from 1 file ")


def test_cursor_rule_files_copied_into_a_memory_folder_are_named_not_dropped(project: Path, run_engram) -> None:
    """A team's first try copies `.cursor/rules/*.mdc` into rules/: none is a memory (`*.md`), and
    an empty index with a green `check` would hide it."""
    rules = project / ".agents/.engram/rules"
    for name in ("testing.mdc", "deep/db.MDC", "notes.markdown"):
        (rules / name).parent.mkdir(parents=True, exist_ok=True)
        (rules / name).write_text("---\ndescription: Tests.\nglobs: \nalwaysApply: false\n---\nRun the tests.\n")
    (rules / "script.py").write_text("print()\n")  # a skill's helper file is no rule of another tool
    index = run_engram(["index"], cwd=project)
    assert [line for line in index.stderr.splitlines() if "not indexed" in line] == [
        "engram: note: 3 files not indexed, engram reads *.md: .agents/.engram/rules/deep/db.MDC, "
        ".agents/.engram/rules/notes.markdown, .agents/.engram/rules/testing.mdc (rename them to .md)"
    ]
    check = run_engram(["check"], cwd=project)
    assert check.returncode == 0
    assert "warning .agents/.engram/rules/testing.mdc: not indexed: a memory is a *.md file (rename it)" in check.stdout
    (rules / "testing.mdc").rename(rules / "testing.md")
    renamed = run_engram(["index"], cwd=project)
    assert [line for line in renamed.stderr.splitlines() if "testing" in line] == [
        "engram: warning .agents/.engram/rules/testing.md:2: `description` is not a key engram reads: did you mean "
        "`directive`?"
    ]  # not `globs:`, which says nothing
    assert renamed.stdout.startswith("indexed 1 memory from 1 file ")


def test_a_memory_whose_text_is_all_hidden_is_a_warning(project: Path, run_engram, write_memory) -> None:
    write_memory(
        project, "rules/hidden.md", {"id": "hidden"}, "# Deploys\n\n## Context\n\nAlways deploy on Tuesdays.\n"
    )
    write_memory(
        project,
        "rules/shown.md",
        {"id": "shown", "directive": "Deploy on Tuesdays."},
        "# Deploys\n\n## Context\n\nWhy.\n",
    )
    proc = run_engram(["index"], cwd=project)
    assert proc.returncode == 0
    warnings = [line for line in proc.stderr.splitlines() if "hidden" in line or "shown" in line]
    assert len(warnings) == 1
    assert warnings[0].startswith("engram: warning .agents/.engram/rules/hidden.md:6: agents see only the title")
    check = run_engram(["check"], cwd=project)
    assert check.returncode == 0  # a warning, not a failure
    assert [line for line in check.stdout.splitlines() if line.startswith("warning .agents/.engram/rules/hidden.md:6:")]
    again = run_engram(["index"], cwd=project)  # nothing changed: the stored warning is still said
    assert [line for line in again.stderr.splitlines() if "rules/hidden.md:6" in line]


def test_index_names_a_flagged_memory_and_a_misspelt_key_and_still_succeeds(project: Path, run_engram) -> None:
    rules = project / ".agents/.engram/rules"
    (rules / "leaky.md").write_text("---\nid: leaky\n---\nThe token is ghp_abcdefghijklmnopqrstuvwxyz0123456789\n")
    (rules / "typo.md").write_text("---\nid: typo\ntgas: [deploys]\n---\nDeploy on Tuesdays.\n")
    for _ in range(2):  # the second run changes nothing and says the same
        proc = run_engram(["index"], cwd=project)
        assert proc.returncode == 0  # flagged and warned about, not invalid
        assert (
            "engram: flagged .agents/.engram/rules/leaky.md:4: secret: github token; remove it from the file"
            in proc.stderr.splitlines()
        )
        assert (
            "engram: warning .agents/.engram/rules/typo.md:3: `tgas` is not a key engram reads: did you mean `tags`?"
            in proc.stderr.splitlines()
        )
        assert "ghp_" not in proc.stdout + proc.stderr


def test_the_load_that_sees_an_edit_break_a_memory_says_so_once(project: Path, run_engram, write_memory) -> None:
    write_memory(project, "rules/deploys.md", {"id": "deploys", "directive": "Deploy on Tuesdays."}, "Deploys.\n")
    assert run_engram(["index"], cwd=project).returncode == 0
    (project / ".agents/.engram/rules/deploys.md").write_text("---\nid: deploys\ntags: [a\n---\nDeploys.\n")
    first = run_engram(["load", "deploys"], cwd=project)
    assert first.returncode == 0 and first.stdout.startswith("loaded 0 memory files")
    said = [line for line in first.stderr.splitlines() if "rules/deploys.md" in line]
    assert (
        said
        == [
            "engram: warning: invalid .agents/.engram/rules/deploys.md:3: invalid frontmatter: did not find expected ',' or ']'"  # where the list opens
        ]
    )
    assert (
        "rules/deploys.md" not in run_engram(["load", "deploys"], cwd=project).stderr
    )  # said once, by the load that saw it


# --- load's dry run ------------------------------------------------------------------------------


def test_dry_run_prints_no_empty_narrow_line(project: Path, run_engram, write_memory) -> None:
    write_memory(project, "rules/a.md", {"id": "deploys", "directive": "Deploy on Tuesdays."}, "Deploy notes.\n")
    proc = run_engram(["load", "--dry-run", "plan a trip to Kyoto"], cwd=project)
    assert proc.returncode == 0
    assert not [line for line in proc.stdout.splitlines() if line.startswith("Narrow with tags:")]


# --- the directive in generated rule files -----------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("Use tenacity.", "Retry with backoff.\n\nUse tenacity."),
        ("# Retries\n\nRetry with backoff, at most 3 times.", "# Retries\n\nRetry with backoff, at most 3 times."),
        ("- **Retry  with backoff.**", "- **Retry  with backoff.**"),
        ("", "Retry with backoff."),
    ],
)
def test_the_directive_opens_the_body_once(body: str, expected: str) -> None:
    assert with_directive("Retry with backoff.", body) == expected
    assert with_directive("", body) == body


def test_a_generated_rule_file_does_not_repeat_a_directive_its_body_opens_with(
    project: Path, run_engram, write_memory
) -> None:
    write_memory(
        project,
        "rules/r.md",
        {"id": "r", "directive": "Retry with backoff.", "applies_to": ["src/**"]},
        "# Retries\n\nRetry with backoff. Use tenacity.\n",
    )
    assert run_engram(["link", "claude", "--command", "engram"], cwd=project).returncode == 0
    assert run_engram(["index"], cwd=project).returncode == 0
    text = (project / ".claude/rules/engram/r.md").read_text()
    assert len(re.findall("Retry with backoff", text)) == 1


def _raising(exc: BaseException):
    def command(argv: list[str]) -> int:
        raise exc

    return command


def test_an_engram_error_is_one_line_and_its_exit_code_anything_else_names_its_type(capsys, monkeypatch) -> None:
    monkeypatch.delenv("ENGRAM_DEBUG", raising=False)
    assert guarded(_raising(EngramError("--scope must be workspace or global", 2)), []) == 2
    assert capsys.readouterr().err == "engram: error: --scope must be workspace or global\n"
    assert guarded(_raising(LinkError("/p/.claude/settings.json: not a JSON object\x1b[2J")), []) == 1
    assert capsys.readouterr().err == "engram: error: /p/.claude/settings.json: not a JSON object\n"
    assert guarded(_raising(KeyError("load")), []) == 1
    assert capsys.readouterr().err == "engram: error: KeyError: 'load'\n"


def test_every_exception_engram_defines_is_an_engram_error() -> None:
    defined = []
    for info in pkgutil.walk_packages(engram.__path__, "engram."):
        if info.name == "engram.__main__":
            continue  # runs the command line
        module = importlib.import_module(info.name)
        defined += [
            value for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == info.name
        ]  # fmt: skip
    assert len(defined) >= 10
    assert [cls.__qualname__ for cls in defined if not issubclass(cls, EngramError)] == []


def test_a_memory_expiring_within_two_weeks_is_said_ahead(project: Path, run_engram, write_memory) -> None:
    """A rollout audit's CI turned red the morning after a `valid_until`, with no change committed:
    the memory's rule files were to go. `index` and `check` say it two weeks ahead."""
    import datetime

    soon = (datetime.date.today() + datetime.timedelta(days=13)).isoformat()
    later = (datetime.date.today() + datetime.timedelta(days=15)).isoformat()
    write_memory(
        project, "rules/frozen.md", {"id": "frozen", "valid_until": soon, "applies_to": ["v1/**"]}, "Frozen.\n"
    )
    write_memory(project, "rules/plain.md", {"id": "plain", "valid_until": soon}, "Plain.\n")
    write_memory(project, "rules/later.md", {"id": "later", "valid_until": later}, "Later.\n")
    proc = run_engram(["index"], cwd=project)
    said = [line for line in proc.stderr.splitlines() if "rules/" in line]
    assert said == [
        f"engram: warning .agents/.engram/rules/frozen.md: expires {soon} (valid_until): from that day no pack holds"
        " it and `engram check` wants its generated rule files gone; move the date, or run `engram index` that day"
        " and commit the result",
        f"engram: warning .agents/.engram/rules/plain.md: expires {soon} (valid_until): from that day no pack holds"
        " it; move the date or archive it",
    ]
    assert run_engram(["check"], cwd=project).returncode == 0


def test_an_expired_or_oversized_memory_is_a_warning_naming_what_to_do(project: Path, run_engram, write_memory) -> None:
    write_memory(
        project, "rules/old.md", {"id": "old", "directive": "Use the v1 API.", "valid_until": "2025-01-01"}, "Body.\n"
    )
    long_body = "\n".join(f"- Stage {i} validates the cart and writes an audit row." for i in range(300))
    write_memory(project, "rules/long.md", {"id": "long", "directive": "The checkout stages."}, long_body + "\n")
    write_memory(project, "rules/short.md", {"id": "short", "directive": "Short."}, "Short body.\n")
    proc = run_engram(["index"], cwd=project)
    assert proc.returncode == 0
    said = [line for line in proc.stderr.splitlines() if "rules/" in line]
    assert said[0] == (
        "engram: warning .agents/.engram/rules/old.md: expired 2025-01-01 (valid_until): no pack holds it; move the"
        " date or archive it"
    )
    assert re.fullmatch(
        r"engram: warning \.agents/\.engram/rules/long\.md: its body is about [34],\d{3} tokens, too long to show"
        r" whole within load\.budget_tokens \(1,600\): a pack shows only its card \(`engram load --id` prints it\);"
        r" split it or raise the budget",
        said[1],
    )
    assert len(said) == 2  # the short memory is fine
    check = run_engram(["check"], cwd=project)
    assert check.returncode == 0  # warnings, not failures
    assert sum(line.startswith("warning .agents/.engram/rules/") for line in check.stdout.splitlines()) == 2
    dry = run_engram(["load", "--dry-run", "use the v1 api"], cwd=project)
    assert "omitted: old [workspace] (lifecycle) (expired 2025-01-01)" in dry.stdout
    for number in range(4):  # many are said in one line, the longest named
        write_memory(project, f"rules/long-{number}.md", {"id": f"long-{number}"}, long_body + "x" * number + "\n")
    many = [line for line in run_engram(["index"], cwd=project).stderr.splitlines() if "too long" in line]
    assert len(many) == 1 and many[0].startswith(
        "engram: warning .agents/.engram: 5 memories are too long to show whole within load.budget_tokens (1,600), the"
        " longest rules/"
    ), many
    assert " and 2 more: a pack shows only their cards" in many[0]
    (project / ".agents/.engram/engram.config.json").write_text('{"load": {"disclosure": "full"}}')
    full = run_engram(["index"], cwd=project)  # no budget for full packs: nothing is too long
    assert "too long" not in full.stderr and "expired 2025-01-01" in full.stderr

"""Bad input: every broken file, index or folder gives one clear line, and the rest keeps working."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from engram.config import load_config
from engram.freshness import ignore_patterns, needs_refresh, open_current
from engram.index import COMPILER_VERSION, INDEX_SCHEMA_VERSION
from engram.sources import workspace_root
from engram.terms import TOKENIZER_VERSION

SUMMARY = re.compile(
    r"^indexed (\d+) memor(?:y|ies) from \d+ files? \((\d+) added, (\d+) changed, (\d+) removed, (\d+) invalid\)$"
)
SHARED_FIX = "rebuild it with `engram index --output`"
GOOD = b"---\nid: good\ntags: [llama]\n---\n# Good\n\nThe good memory about llamas.\n"


def summary(stdout: str) -> dict[str, int]:
    assert stdout.strip(), "no summary line on stdout"
    line = stdout.splitlines()[0]
    match = SUMMARY.match(line)
    assert match, f"not a summary line: {line!r}"
    return dict(zip(("total", "added", "changed", "removed", "invalid"), map(int, match.groups())))


def lines_naming(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


def assert_one_line_about(stderr: str, rel: str) -> str:
    """Exactly one stderr line names ``rel``, and every stderr line is an `engram: ...` line."""
    named = lines_naming(stderr, rel)
    assert len(named) == 1, f"expected one line naming {rel}, got:\n{stderr}"
    for line in stderr.splitlines():
        assert line.startswith("engram: "), f"unprefixed stderr line: {line!r}"
    return named[0]


def ids_in_index(project: Path) -> set[str]:
    conn = sqlite3.connect(project / ".agents/.engram/index.db")
    try:
        return {r[0] for r in conn.execute("SELECT id FROM memories")}
    finally:
        conn.close()


@pytest.fixture
def base(project):
    (project / ".agents/.engram/rules/good.md").write_bytes(GOOD)
    return project


# --- broken memory files --------------------------------------------------------------------

BAD_FILES = {
    "unclosed-frontmatter": (b"---\nid: bad\ntags: [a]\n\n# never closed\n", r"bad\.md:1\b|line 1\b"),
    "yaml-syntax-error": (b"---\nid: bad\nfoo: bar: baz\n---\nbody\n", r"bad\.md:3\b|line 3\b"),
    "yaml-not-a-mapping": (b"---\n- one\n- two\n---\nbody\n", r"mapping"),
    "bad-type": (b"---\nid: bad\ntype: recipe\n---\nbody\n", r"type"),
    "bad-id": (b"---\nid: Not A Valid Id!\n---\nbody\n", r"id"),
    "merge-conflict-in-body": (
        b"---\nid: bad\n---\nbody\n<<<<<<< HEAD\none\n=======\ntwo\n>>>>>>> bob\n",
        r"bad\.md:5: unresolved merge conflict",
    ),
    "non-utf8": (b"---\nid: bad\n---\ncaf\xe9 ol\xff\n", r"UTF-8"),
    "binary-nul": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", r"binary"),
    "over-1-mib": (b"---\nid: bad\n---\n" + b"a" * (1024 * 1024 + 1), r"1 MiB|large"),
    "level-too-large": (b"---\nid: bad\nlevel: 99999999999999999999\n---\nbody\n", r"level"),
    "level-superscript-digit": ("---\nid: bad\nlevel: \u00b2\n---\nbody\n".encode(), r"level"),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_a_broken_file_is_one_line_and_the_rest_is_indexed(base, run_engram, case):
    data, reason = BAD_FILES[case]
    (base / ".agents/.engram/rules/bad.md").write_bytes(data)
    proc = run_engram(["index"], cwd=base)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.strip(), f"indexing stopped: {proc.stderr}"
    counts = summary(proc.stdout)
    assert (counts["total"], counts["invalid"]) == (1, 1)
    line = assert_one_line_about(proc.stderr, "rules/bad.md")
    assert re.search(reason, line, re.I), line
    assert len(line) < 300 and "\x00" not in line
    assert ids_in_index(base) == {"good"}


def test_fixing_a_broken_file_makes_it_valid(base, run_engram):
    bad = base / ".agents/.engram/rules/bad.md"
    bad.write_bytes(BAD_FILES["yaml-syntax-error"][0])
    assert run_engram(["index"], cwd=base).returncode == 1
    check = run_engram(["check"], cwd=base)
    assert check.returncode == 1
    assert lines_naming(check.stdout + check.stderr, "rules/bad.md:3")
    loaded = run_engram(["load", "--id", "good"], cwd=base)
    assert loaded.returncode == 0, loaded.stderr
    assert "The good memory about llamas." in loaded.stdout
    bad.write_text("---\nid: bad\nfoo: bar\n---\nnow fine\n")
    proc = run_engram(["index"], cwd=base)
    assert proc.returncode == 0, proc.stderr
    assert summary(proc.stdout)["invalid"] == 0 and summary(proc.stdout)["total"] == 2
    assert proc.stderr == ""
    assert run_engram(["check"], cwd=base).returncode == 0


@pytest.mark.parametrize("content", [b"# Plain note\n\nNo frontmatter at all, about alpacas.\n", b""])
def test_missing_frontmatter_indexes_with_defaults(base, run_engram, content):
    (base / ".agents/.engram/knowledge/Plain Note.md").write_bytes(content)
    proc = run_engram(["index"], cwd=base)
    assert proc.returncode == 0, proc.stderr
    assert summary(proc.stdout) == {"total": 2, "added": 2, "changed": 0, "removed": 0, "invalid": 0}
    conn = sqlite3.connect(base / ".agents/.engram/index.db")
    row = conn.execute("SELECT type, confidence, authority FROM memories WHERE id = 'plain-note'").fetchone()
    conn.close()
    assert row == ("knowledge", "medium", "reference")


# --- duplicate ids ----------------------------------------------------------------------------


@pytest.mark.parametrize("resolve", ["delete-first", "rename-first-id"])
def test_duplicate_id_second_file_is_invalid_until_the_first_goes(base, run_engram, resolve):
    rules = base / ".agents/.engram/rules"
    (rules / "a-first.md").write_text("---\nid: shared\n---\nfirst body\n")
    (rules / "b-second.md").write_text("---\nid: shared\n---\nsecond body\n")
    proc = run_engram(["index"], cwd=base)
    assert proc.returncode == 1
    assert summary(proc.stdout)["invalid"] == 1 and summary(proc.stdout)["total"] == 2
    line = assert_one_line_about(proc.stderr, "rules/b-second.md")
    assert "rules/a-first.md" in line and "shared" in line

    if resolve == "delete-first":
        (rules / "a-first.md").unlink()
    else:
        (rules / "a-first.md").write_text("---\nid: first-renamed\n---\nfirst body\n")
    proc = run_engram(["index"], cwd=base)
    assert proc.returncode == 0, proc.stderr
    assert summary(proc.stdout)["invalid"] == 0
    assert proc.stderr == ""
    conn = sqlite3.connect(base / ".agents/.engram/index.db")
    rel, body = conn.execute("SELECT rel, body FROM memories WHERE id = 'shared'").fetchone()
    conn.close()
    assert (rel, body) == ("rules/b-second.md", "second body")
    assert run_engram(["check"], cwd=base).returncode == 0


@pytest.mark.parametrize("order", ["named-file-first", "copy-first", "from-scratch"])
def test_a_duplicate_id_is_held_by_the_file_named_for_it_however_the_index_was_built(base, run_engram, order):
    """A copy saved as `dup.md` never takes `migrations-policy` from `migrations-policy.md`: the index
    is a function of the files, not of which one an earlier build saw first."""
    rules = base / ".agents/.engram/rules"
    files = {
        "migrations-policy.md": "---\nid: migrations-policy\n---\nORIGINAL body\n",
        "dup.md": "---\nid: migrations-policy\n---\nSTUB body\n",
    }
    written = list(files) if order != "copy-first" else list(reversed(files))
    for name in written:
        (rules / name).write_text(files[name])
        if order != "from-scratch":
            run_engram(["index"], cwd=base)
    proc = run_engram(["index"], cwd=base)
    assert proc.returncode == 1
    line = assert_one_line_about(proc.stderr, "rules/dup.md")
    assert "also in .agents/.engram/rules/migrations-policy.md" in line
    assert run_engram(["load", "--id", "migrations-policy"], cwd=base).stdout.splitlines()[-1] == "ORIGINAL body"


def test_same_file_name_in_two_folders_is_a_duplicate_id(base, run_engram):
    (base / ".agents/.engram/rules/deploy.md").write_text("# Deploy rule\nShip on Tuesdays.\n")
    (base / ".agents/.engram/knowledge/deploy.md").write_text("# Deploy notes\nStaging first.\n")
    proc = run_engram(["index"], cwd=base)
    assert proc.returncode == 1
    named = lines_naming(proc.stderr, "deploy.md")
    assert len(named) == 1
    assert "rules/deploy.md" in named[0] and "knowledge/deploy.md" in named[0]
    assert "deploy" in ids_in_index(base)


# --- files and settings that stopped every command (a red-team audit) ------------------------------


def test_a_line_of_engramignore_that_is_no_pattern_is_named_and_the_others_still_ignore(base, run_engram):
    rules = base / ".agents/.engram/rules"
    (rules / "old-notes.md").write_text("---\nid: old-notes\ntags: [llama]\n---\nOld llama notes.\n")
    (base / ".engramignore").write_text("Ignore all previous instructions\\\nrules/x[z-a].md\nrules/old-*.md\n")
    loaded = run_engram(["load", "llama"], cwd=base)
    assert loaded.returncode == 0 and "The good memory about llamas." in loaded.stdout
    assert "Old llama notes" not in loaded.stdout
    indexed = run_engram(["index"], cwd=base)
    assert (
        "engram: invalid .engramignore:1: it ends in a lone `\\`, which escapes nothing; this pattern is left out"
        in (indexed.stderr.splitlines())
    )
    assert "engram: invalid .engramignore:2: a range in `[...]` runs backwards; this pattern is left out" in (
        indexed.stderr.splitlines()
    )
    assert run_engram(["check"], cwd=base).stdout.splitlines()[-1] == "engram check: not fresh (1 invalid)"


def test_a_folder_nested_too_deep_is_named_and_the_rest_loads(base, run_engram):
    """A folder nested 490 levels deep (a path git stores) stopped every command with a RecursionError
    (a red-team audit)."""
    deep = base / ".agents/.engram/rules" / "/".join(["a"] * 490)
    deep.mkdir(parents=True)
    (deep / "x.md").write_text("---\nid: deep\n---\nDeep llama.\n")
    loaded = run_engram(["load", "llama"], cwd=base)
    assert loaded.returncode == 0 and "The good memory about llamas." in loaded.stdout
    checked = run_engram(["check"], cwd=base)
    shown = "/".join(["a"] * 31)
    assert f"invalid .agents/.engram/rules/{shown}/a: folder nested deeper than 32 levels" in checked.stdout


def test_a_host_settings_file_that_is_a_fifo_or_a_device_is_one_line(base, run_engram):
    """A committed `.claude/settings.json` FIFO hung `link`; a link to /dev/zero took GBs of memory in
    `index` (a red-team audit): host settings are read as every other file, capped, regular files only."""
    settings = base / ".claude/settings.json"
    settings.parent.mkdir()
    os.mkfifo(settings)
    linked = run_engram(["link", "claude"], cwd=base)
    assert linked.returncode == 1
    assert linked.stderr == f"engram: error: {settings}: cannot read (settings.json is not a regular file)\n"
    settings.unlink()
    settings.symlink_to("/dev/zero")
    indexed = run_engram(["index"], cwd=base)
    assert indexed.returncode == 0 and indexed.stdout.startswith("indexed 1 memory")


def test_a_project_whose_path_is_not_utf8_is_one_line(tmp_path, run_engram):
    """A Latin-1 folder name (`\\xdcbung`) let `init` through and stopped load, index and link with an
    internal error (a red-team audit): every command says it in one line."""
    project = Path(os.fsdecode(bytes(tmp_path) + b"/\xdcbung"))
    (project / ".agents/.engram/rules").mkdir(parents=True)
    for args in (["load", "llama"], ["index"], ["link", "claude"]):
        proc = run_engram(args, cwd=project)
        assert proc.returncode == 1 and proc.stderr.endswith("is not UTF-8; engram needs a folder whose path is\n")
        assert len(proc.stderr.splitlines()) == 1


def test_a_megabyte_of_brackets_in_an_ignore_line_is_read_in_one_pass() -> None:
    """A 60 KB `.engramignore` line of `[` made every hook take 30 s (a red-team audit): the check for
    backwards ranges searched from each `[` to the line's end."""
    from engram.freshness import _not_a_pattern

    assert _not_a_pattern("[" * 1_000_000) == ""
    assert _not_a_pattern("[" * 100_000 + "[z-a]") == "a range in `[...]` runs backwards"


def test_a_line_the_matcher_refuses_past_the_checks_is_left_out_and_the_others_still_ignore(base, run_engram):
    """`!` alone passes `ignore_rules` but the matcher refuses it: the matcher drops that line alone."""
    (base / ".agents/.engram/rules/old-notes.md").write_text("---\nid: old-notes\ntags: [llama]\n---\nOld llama.\n")
    (base / ".engramignore").write_text("!\nrules/old-*.md\n")
    indexed = run_engram(["index"], cwd=base)
    assert indexed.returncode == 0, indexed.stderr
    loaded = run_engram(["load", "llama"], cwd=base)
    assert "The good memory about llamas." in loaded.stdout and "Old llama" not in loaded.stdout


def test_a_file_name_that_is_no_utf8_is_named_and_the_rest_loads(base, run_engram):
    rules = base / ".agents/.engram/rules"
    with open(os.path.join(os.fsencode(rules), b"caf\xe9.md"), "wb") as latin1_named:
        latin1_named.write(b"---\nid: cafe\n---\nllama body\n")
    indexed = run_engram(["index"], cwd=base)
    assert indexed.returncode == 1
    assert "engram: invalid .agents/.engram/rules/caf\ufffd.md: file name is not UTF-8" in indexed.stderr.splitlines()
    loaded = run_engram(["load", "llama"], cwd=base)
    assert loaded.returncode == 0 and "The good memory about llamas." in loaded.stdout


def test_a_config_number_too_long_to_read_is_a_warning(base, run_engram):
    (base / ".agents/.engram/engram.config.json").write_text('{"load": {"limit": ' + "9" * 5000 + "}}")
    loaded = run_engram(["load", "llama"], cwd=base)
    assert loaded.returncode == 0 and "The good memory about llamas." in loaded.stdout
    assert "config holds a number too long to read" in loaded.stderr


def test_a_config_path_holding_a_nul_is_a_warning(base, run_engram):
    """`"global_path": "team\\u0000"` is valid JSON and no path: every command failed (a red-team audit)."""
    (base / ".agents/.engram/engram.config.json").write_text('{"global_path": "team\\u0000"}')
    loaded = run_engram(["load", "llama"], cwd=base)
    assert loaded.returncode == 0 and "The good memory about llamas." in loaded.stdout
    assert "config global_path: must be a path string or null" in loaded.stderr


def test_a_row_edited_in_the_index_is_rebuilt_before_it_is_served(base, run_engram):
    """A memory whose stored text failed its hash was lost until its file was edited: a later build
    copied the rows of unchanged files (a red-team audit). An index edited in place is no index engram
    built here: the next read rebuilds it from the sources, says so, and serves the memory."""
    assert run_engram(["index"], cwd=base).returncode == 0
    with contextlib.closing(sqlite3.connect(base / ".agents/.engram/index.db")) as conn, conn:
        conn.execute("UPDATE memories SET body = 'x' WHERE id = 'good'")
    loaded = run_engram(["load", "llama"], cwd=base)
    assert "The good memory about llamas." in loaded.stdout
    assert "a memory's stored text does not match its hash; rebuilt, the damaged file kept as" in loaded.stderr


# --- files that cannot be read ----------------------------------------------------------------


KILLED_WRITER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA cache_size=1")
conn.execute("BEGIN IMMEDIATE")
conn.execute("CREATE TABLE junk(x)")
conn.executemany("INSERT INTO junk VALUES (?)", [("x" * 500,)] * 2000)
print("ready", flush=True)
time.sleep(60)
"""


def test_a_writer_killed_inside_a_transaction_on_the_index_is_rolled_back(base, run_engram):
    """A hot journal left by a killed writer of index.db (a `sqlite-utils` command) made every load
    pack nothing and set the index aside as damaged on each call, rebuilding into the same
    journal (a red-team audit): the next build rolls the journal back, as SQLite recovers."""
    assert run_engram(["index"], cwd=base).returncode == 0
    index = base / ".agents/.engram/index.db"
    writer = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(index)], stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
    writer.kill()
    writer.wait()
    assert (base / ".agents/.engram/index.db-journal").exists()
    for _ in range(2):
        loaded = run_engram(["load", "llama"], cwd=base)
        assert "The good memory about llamas." in loaded.stdout and loaded.stderr == ""
    assert not list((base / ".agents/.engram").glob("index.db.corrupt-*"))


def test_a_committed_symlink_for_the_index_stamp_is_replaced_not_written_through(base, tmp_path, run_engram):
    """A repository whose `.index.checked` pointed at `~/.bashrc` had it overwritten by the first
    load (a red-team audit): engram's own small files are replaced, never written through."""
    precious = tmp_path / "bashrc"
    precious.write_text("export PATH=$HOME/bin:$PATH\n")
    (base / ".agents/.engram/.index.checked").symlink_to(precious)
    assert run_engram(["load", "llama"], cwd=base).returncode == 0
    assert precious.read_text() == "export PATH=$HOME/bin:$PATH\n"
    assert not (base / ".agents/.engram/.index.checked").is_symlink()


def test_symlink_pointing_outside_the_root_is_refused(base, tmp_path, run_engram):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("---\nid: outside-secret\n---\nleaked outside text\n")
    (outside / "nested").mkdir()
    (outside / "nested/other.md").write_text("---\nid: outside-other\n---\nalso outside\n")
    rules = base / ".agents/.engram/rules"
    (rules / "linked.md").symlink_to(outside / "secret.md")
    (rules / "linked-dir").symlink_to(outside / "nested", target_is_directory=True)

    proc = run_engram(["index"], cwd=base)
    assert proc.returncode == 1
    line = assert_one_line_about(proc.stderr, "rules/linked.md")
    assert "symlink" in line or "outside" in line
    folder_line = assert_one_line_about(proc.stderr, "rules/linked-dir")
    assert "outside the memory root" in folder_line
    assert ids_in_index(base) == {"good"}
    loaded = run_engram(["load", "leaked outside text"], cwd=base)
    assert "leaked outside text" not in loaded.stdout


def test_a_memory_folder_symlinked_outside_the_root_is_refused_and_the_rest_is_served(base, tmp_path, run_engram):
    """A clone's `skills -> /usr/share/doc` or `~/notes` would send a machine's files into packs."""
    notes = tmp_path / "private-notes"
    notes.mkdir()
    (notes / "diary.md").write_text("---\nid: diary\n---\nmy private diary text\n")
    skills = base / ".agents/.engram/skills"
    shutil.rmtree(skills, ignore_errors=True)
    skills.symlink_to(notes, target_is_directory=True)
    proc = run_engram(["index"], cwd=base)
    assert proc.returncode == 1
    line = assert_one_line_about(proc.stderr, ".agents/.engram/skills")
    assert line.endswith("skills: symlinked folder points outside the memory root")
    assert ids_in_index(base) == {"good"}
    assert "my private diary text" not in run_engram(["load", "my private diary text"], cwd=base).stdout


def test_files_skipped_unread_do_not_make_the_index_look_stale(base, tmp_path, run_engram):
    """The freshness digest of a load must equal the one the compiler recorded, problem files
    included; otherwise every load would rebuild."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("---\nid: outside-secret\n---\nleaked\n")
    rules = base / ".agents/.engram/rules"
    (rules / "linked.md").symlink_to(outside / "secret.md")
    (rules / "huge.md").write_bytes(b"---\nid: huge\n---\n" + b"a" * (1024 * 1024 + 1))
    assert run_engram(["index"], cwd=base).returncode == 1
    root = workspace_root(base)
    conn = open_current(root)
    assert not needs_refresh(root, conn, ignore_patterns(root, load_config(root.config_path)))
    (rules / "huge.md").write_bytes(b"---\nid: huge\n---\n" + b"b" * (1024 * 1024 + 2))
    assert needs_refresh(root, conn, ignore_patterns(root, load_config(root.config_path)))


def test_unreadable_file_is_reported_and_skipped(base, run_engram):
    bad = base / ".agents/.engram/rules/locked.md"
    bad.write_text("---\nid: locked\n---\nlocked body\n")
    bad.chmod(0)
    try:
        if os.access(bad, os.R_OK):
            pytest.skip("running as root: chmod 000 does not make the file unreadable")
        proc = run_engram(["index"], cwd=base)
        assert proc.returncode == 1
        assert_one_line_about(proc.stderr, "rules/locked.md")
        assert ids_in_index(base) == {"good"}
    finally:
        bad.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_unknown_depends_on_is_a_warning_not_invalid(base, run_engram):
    (base / ".agents/.engram/rules/needs.md").write_text("---\nid: needs\ndepends_on: [no-such-memory]\n---\nbody\n")
    proc = run_engram(["index"], cwd=base)
    assert proc.returncode == 0, proc.stderr
    assert summary(proc.stdout)["invalid"] == 0 and summary(proc.stdout)["total"] == 2
    line = assert_one_line_about(proc.stderr, "rules/needs.md")
    assert "no-such-memory" in line
    assert "warning" in line.lower()
    assert ids_in_index(base) == {"good", "needs"}
    assert run_engram(["check"], cwd=base).returncode == 0


def test_bad_config_value_is_reported_with_its_key(base, run_engram):
    (base / ".agents/.engram/engram.config.json").write_text(json.dumps({"load": {"limit": 99}, "custom": 1}))
    proc = run_engram(["index"], cwd=base)
    assert proc.returncode == 0
    assert any("load.limit" in line for line in proc.stderr.splitlines())
    assert summary(proc.stdout)["total"] == 1


def test_invalid_json_config_is_one_line_and_indexing_goes_on(base, run_engram):
    (base / ".agents/.engram/engram.config.json").write_text('{"load": {"limit": 4,}')
    proc = run_engram(["index"], cwd=base)
    assert proc.returncode == 0
    assert len(lines_naming(proc.stderr, "engram.config.json")) == 1
    assert summary(proc.stdout)["total"] == 1


def test_an_invalid_json_config_is_said_by_load_and_by_a_hook_in_debug(base):
    """`load` falls back to the defaults as `index` does, and says so; a hook, whose stdout is its
    host's JSON, says it on stderr with ENGRAM_DEBUG=1."""
    (base.root / "engram.config.json").write_text('{\n<<<<<<< HEAD\n  "load": {"limit": 4}\n')
    said = "engram.config.json: invalid JSON at line 2"
    proc = base.load("llamas")
    assert proc.returncode == 0 and "The good memory about llamas." in proc.stdout
    assert len(proc.stderr.splitlines()) == 1 and said in proc.stderr
    assert proc.stderr.startswith("engram: warning: ")

    def prompt(session: str) -> bytes:
        fields = {"session_id": session, "cwd": str(base.path), "hook_event_name": "UserPromptSubmit"}
        return json.dumps({**fields, "prompt": "llamas"}).encode()

    quiet = base.run_hook("claude", prompt("s1"))
    assert quiet.stderr == "" and "The good memory about llamas." in quiet.stdout
    debug = base.run_hook("claude", prompt("s2"), env={"ENGRAM_DEBUG": "1"})
    assert len(lines_naming(debug.stderr, said)) == 1 and "The good memory about llamas." in debug.stdout


@pytest.mark.parametrize(
    "config, said",
    [('{"load": {"limit": 4,}', "engram.config.json: invalid JSON at line 1"),
     ('{"load": {"limit": 99}}', "invalid config load.limit: must be an integer from 1 to 32"),
     ('{"load": {"limt": 3}}', "invalid config load.limt: not a setting engram reads; did you mean load.limit?"),
     ('{"hooks": {"path-rules": "hook"}}', "did you mean hooks.path_rules?"),
     ('{"global_pth": "x"}', "did you mean global_path?")],
)  # fmt: skip
def test_check_fails_on_a_config_engram_cannot_use_as_written(base, run_engram, config: str, said: str) -> None:
    assert run_engram(["check"], cwd=base).returncode == 0
    (base / ".agents/.engram/engram.config.json").write_text(config)
    proc = run_engram(["check"], cwd=base)
    assert proc.returncode == 1
    assert len([line for line in proc.stdout.splitlines() if said in line]) == 1
    assert proc.stdout.splitlines()[-1] == "engram check: not fresh (1 invalid)"


def test_a_setting_engram_does_not_know_and_no_near_miss_is_kept_in_silence(base, run_engram) -> None:
    (base / ".agents/.engram/engram.config.json").write_text('{"custom": 1, "load": {"mine": 2}}')
    proc = run_engram(["check"], cwd=base)
    assert proc.returncode == 0 and proc.stderr == ""


# --- broken index files -------------------------------------------------------------------------


def test_index_from_an_older_schema_is_rebuilt(base, run_engram):
    index = base / ".agents/.engram/index.db"
    assert run_engram(["index"], cwd=base).returncode == 0
    conn = sqlite3.connect(index)
    conn.execute("PRAGMA user_version = 0")
    conn.commit()
    conn.close()

    check = run_engram(["check"], cwd=base)
    assert check.returncode == 1
    assert lines_naming(check.stdout + check.stderr, "index.db")

    proc = run_engram(["index"], cwd=base)
    assert proc.returncode == 0, proc.stderr
    assert summary(proc.stdout) == {"total": 1, "added": 1, "changed": 0, "removed": 0, "invalid": 0}
    conn = sqlite3.connect(index)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == INDEX_SCHEMA_VERSION
    conn.close()
    assert run_engram(["verify"], cwd=base).returncode == 0
    assert run_engram(["check"], cwd=base).returncode == 0


def _garbage(path: Path) -> None:
    path.write_bytes(os.urandom(4096) + b"not a database" * 100)


def test_corrupt_workspace_index_is_rebuilt_by_index(base, run_engram):
    index = base / ".agents/.engram/index.db"
    assert run_engram(["index"], cwd=base).returncode == 0
    _garbage(index)
    check = run_engram(["check"], cwd=base)
    assert check.returncode == 1
    verify = run_engram(["verify"], cwd=base)
    assert verify.returncode == 1
    assert lines_naming(verify.stdout + verify.stderr, "index.db")

    proc = run_engram(["index"], cwd=base)
    assert proc.returncode == 0, proc.stderr
    assert summary(proc.stdout)["total"] == 1
    assert run_engram(["verify"], cwd=base).returncode == 0


def test_corrupt_workspace_index_is_rebuilt_by_load(base, run_engram):
    assert run_engram(["index"], cwd=base).returncode == 0
    _garbage(base / ".agents/.engram/index.db")
    proc = run_engram(["load", "--id", "good"], cwd=base)
    assert proc.returncode == 0, proc.stderr
    assert "The good memory about llamas." in proc.stdout


def _truncated(base: Path, run_engram, dest: Path) -> None:
    assert run_engram(["index", "--output", str(dest)], cwd=base).returncode == 0
    data = dest.read_bytes()
    dest.write_bytes(data[: len(data) // 2])


def _foreign(dest: Path) -> None:
    conn = sqlite3.connect(dest)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO customers (name) VALUES ('x')")
    conn.commit()
    conn.close()


def _foreign_fts(dest: Path) -> None:
    conn = sqlite3.connect(dest)
    for table in ("meta (key, value)", "files (rel)", "memories (id)", "edges (src)"):
        conn.execute(f"CREATE TABLE {table}")
    conn.execute("CREATE VIRTUAL TABLE memories_fts USING fts5(body)")
    conn.commit()
    conn.close()


PREBUILT_CASES = {
    "garbage": lambda base, run, dest: _garbage(dest),
    "empty-file": lambda base, run, dest: dest.write_bytes(b""),
    "sqlite-header-then-garbage": lambda base, run, dest: dest.write_bytes(b"SQLite format 3\x00" + b"\xff" * 2000),
    "truncated-engram-index": _truncated,
    "foreign-sqlite": lambda base, run, dest: _foreign(dest),
    "foreign-sqlite-same-table-names": lambda base, run, dest: _foreign_fts(dest),
    "missing-file": lambda base, run, dest: None,
    "a-directory": lambda base, run, dest: dest.mkdir(),
}


@pytest.mark.parametrize("case", list(PREBUILT_CASES))
def test_unusable_prebuilt_index_is_a_one_line_error(base, run_engram, case):
    dest = base / "team.db"
    PREBUILT_CASES[case](base, run_engram, dest)
    proc = run_engram(["load", "--index", "team.db", "llamas"], cwd=base)
    assert proc.returncode == 1, proc.stdout
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1, proc.stderr
    assert err[0].startswith("engram: error: ") and "team.db" in err[0]
    assert proc.stdout == ""

    verify = run_engram(["verify", "--index", "team.db"], cwd=base)
    assert verify.returncode == 1
    out = (verify.stdout + verify.stderr).strip().splitlines()
    assert out and all("team.db" in line for line in out)
    assert not any(line.startswith("OK ") for line in out)


def _shared_index_altered(base: Path, run_engram, sql: str) -> None:
    """`team.db` built from the project by `engram index --output`, then changed by ``sql``."""
    assert run_engram(["index", "--output", "team.db"], cwd=base).returncode == 0
    conn = sqlite3.connect(base / "team.db")
    conn.execute(sql)
    conn.commit()
    conn.close()


def test_prebuilt_index_from_an_older_schema_is_refused(base, run_engram):
    _shared_index_altered(base, run_engram, "PRAGMA user_version = 0")
    said = f"team.db: built by an older engram (index schema 0; this one reads {INDEX_SCHEMA_VERSION}); {SHARED_FIX}"
    proc = run_engram(["load", "--index", "team.db", "llamas"], cwd=base)
    assert proc.returncode == 1
    assert proc.stderr == f"engram: error: {said}\n"
    verify = run_engram(["verify", "--index", "team.db"], cwd=base)
    assert verify.returncode == 1 and verify.stdout.splitlines() == [said]


@pytest.mark.parametrize(
    "compiler, which", [(int(COMPILER_VERSION) - 1, "an older"), (int(COMPILER_VERSION) + 1, "a newer")]
)
def test_load_and_verify_say_one_fix_for_an_index_of_another_version_and_whether_it_is_older(
    base, run_engram, compiler: int, which: str
):
    """`engram index` never rewrites a shared file, so only `--output` fixes one; a root's own index it does."""
    change = f"UPDATE meta SET value = '{compiler}' WHERE key = 'compiler'"
    _shared_index_altered(base, run_engram, change)
    versions = (
        f"tokenizer {TOKENIZER_VERSION}, compiler {compiler}; this one reads {TOKENIZER_VERSION}, {COMPILER_VERSION}"
    )
    said = f"team.db: built by {which} engram ({versions}); {SHARED_FIX}"
    proc = run_engram(["load", "--index", "team.db", "llamas"], cwd=base)
    assert proc.returncode == 1 and proc.stderr == f"engram: error: {said}\n"
    verify = run_engram(["verify", "--index", "team.db"], cwd=base)
    assert verify.returncode == 1 and verify.stdout.splitlines() == [said]

    local = base.root / "index.db"
    conn = sqlite3.connect(local)
    conn.execute(change)
    conn.commit()
    conn.close()
    verify = run_engram(["verify"], cwd=base)
    assert verify.returncode == 1
    assert verify.stdout.splitlines() == [
        f"{local}: built by {which} engram ({versions}); run `engram index` to rebuild it"
    ]


def test_prebuilt_index_of_another_tokenizer_is_refused_and_a_global_one_left_out(base, run_engram):
    """Its terms were made by other stems and stopwords than the query's: routing over it would
    quietly miss, so it is refused with one line, and as the global index the project still loads."""
    _shared_index_altered(base, run_engram, "UPDATE meta SET value = 'engram-terms-0' WHERE key = 'tokenizer'")
    proc = run_engram(["load", "--index", "team.db", "llamas"], cwd=base)
    assert proc.returncode == 1 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "team.db" in proc.stderr and "engram-terms-0" in proc.stderr and "--output" in proc.stderr
    verify = run_engram(["verify", "--index", "team.db"], cwd=base)
    assert verify.returncode == 1 and "engram-terms-0" in verify.stdout + verify.stderr

    (base / ".agents/.engram/engram.config.json").write_text(json.dumps({"global_index": str(base / "team.db")}))
    proc = run_engram(["load", "llamas"], cwd=base)
    assert proc.returncode == 0, proc.stderr
    assert "The good memory about llamas." in proc.stdout
    assert len(lines_naming(proc.stderr, "team.db")) == 1 and "global index not used" in proc.stderr

    _shared_index_altered(base, run_engram, "UPDATE meta SET value = 'terms\x1b]0;owned\x07' WHERE key = 'tokenizer'")
    proc = run_engram(["load", "--index", "team.db", "llamas"], cwd=base)
    assert proc.returncode == 1 and "(withheld)" in proc.stderr and "\x1b" not in proc.stderr


def test_prebuilt_index_is_never_modified_by_load(base, run_engram):
    assert run_engram(["index", "--output", "team.db"], cwd=base).returncode == 0
    team = base / "team.db"
    before = team.read_bytes()
    team.chmod(0o444)
    proc = run_engram(["load", "--index", "team.db", "llamas"], cwd=base)
    assert proc.returncode == 0, proc.stderr
    assert "about llamas" in proc.stdout
    assert team.read_bytes() == before
    assert not Path(f"{team}-wal").exists() and not Path(f"{team}-journal").exists()


# --- a root that cannot be written ----------------------------------------------------------


def _edit_good(base: Path) -> None:
    (base / ".agents/.engram/rules/good.md").write_bytes(GOOD.replace(b"about llamas.", b"about llamas, edited."))


def test_load_uses_the_old_index_when_the_root_cannot_be_refreshed(base, run_engram):
    """Simulates an unwritable root (we run as root, so chmod does not stop writes): the lock
    file is replaced by a directory, so the compiler cannot start."""
    root = base / ".agents/.engram"
    assert run_engram(["index"], cwd=base).returncode == 0
    _edit_good(base)
    lock = root / ".index.lock"
    lock.unlink(missing_ok=True)
    lock.mkdir()

    proc = run_engram(["load", "--json", "good llamas"], cwd=base)
    assert proc.returncode == 0, proc.stderr
    warnings = proc.stderr.strip().splitlines()
    assert len(warnings) == 1 and warnings[0].startswith("engram: warning:") and "index.db" in warnings[0]
    payload = json.loads(proc.stdout)
    entries = {e["id"]: e for e in payload["entries"]}
    assert entries["good"]["stale"] is True

    index = run_engram(["index"], cwd=base)
    assert index.returncode == 1
    err = index.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("engram: error:")

    lock.rmdir()
    assert run_engram(["index"], cwd=base).returncode == 0
    fetched = run_engram(["load", "--id", "good"], cwd=base)
    assert "about llamas, edited." in fetched.stdout


def test_load_that_cannot_build_a_first_index_does_not_claim_to_use_one(base, run_engram):
    """A read-only checkout with no index said "using it as is" of an index that is not there (a
    red-team audit); the lock file made a folder stands in for the read-only root, as above."""
    (base / ".agents/.engram/.index.lock").mkdir()
    proc = run_engram(["load", "llama"], cwd=base)
    assert proc.returncode == 0 and proc.stdout.startswith("loaded 0 memory files")
    [warning] = proc.stderr.splitlines()
    assert warning.startswith("engram: warning: cannot build ") and warning.endswith("; nothing to serve from it")


def test_an_index_path_that_is_a_folder_is_set_aside_and_rebuilt(base, run_engram):
    """`index.db` made a folder left every load packing nothing, said but never mended (a red-team audit)."""
    (base / ".agents/.engram/index.db").mkdir()
    loaded = run_engram(["load", "llama"], cwd=base)
    assert loaded.returncode == 0 and "The good memory about llamas." in loaded.stdout
    assert "index.db: a folder, not an index; rebuilt, the folder kept as index.db.corrupt-" in loaded.stderr
    assert (base / ".agents/.engram/index.db").is_file()


def test_load_on_a_read_only_root(base, run_engram):
    root = base / ".agents/.engram"
    assert run_engram(["index"], cwd=base).returncode == 0
    _edit_good(base)
    mode = root.stat().st_mode
    root.chmod(0o555)
    try:
        if os.access(root, os.W_OK):
            pytest.skip("running as root: a read-only folder is still writable")
        proc = run_engram(["load", "--id", "good"], cwd=base)
        assert proc.returncode == 0
        assert "The good memory about llamas" in proc.stdout
        assert len(proc.stderr.strip().splitlines()) <= 1
    finally:
        root.chmod(stat.S_IMODE(mode))

"""Tests for engram.link: merging engram's hook entries into host configs and taking them out."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram import link as link_mod
from engram.link import HOSTS, LinkError, absolute_engram_command, config_path, engram_command, is_linked, link, unlink

CMD = "/opt/engram/bin/engram"


def claude_handler(cmd: str = CMD) -> dict:
    return {"type": "command", "command": f"{cmd} hook --host claude", "timeout": 10}


def codex_handler(cmd: str = CMD) -> dict:
    return {"type": "command", "command": f"{cmd} hook --host codex", "timeout": 10}


def gemini_handler(cmd: str = CMD) -> dict:
    return {"name": "engram", "type": "command", "command": f"{cmd} hook --host gemini", "timeout": 10000}


def cursor_handler(cmd: str = CMD) -> dict:
    return {"command": f"{cmd} hook --host cursor", "timeout": 10}


# What a link into a missing file must produce, spelled out per host.
EXPECTED: dict[str, dict] = {
    "claude": {
        "hooks": {
            "SessionStart": [{"matcher": "startup|resume|clear|compact", "hooks": [claude_handler()]}],
            "UserPromptSubmit": [{"hooks": [claude_handler()]}],
            "PreToolUse": [{"matcher": "Read|Edit|Write|MultiEdit|NotebookEdit", "hooks": [claude_handler()]}],
            "PreCompact": [{"hooks": [claude_handler()]}],
            "SubagentStart": [{"hooks": [claude_handler()]}],
            "InstructionsLoaded": [{"hooks": [claude_handler()]}],
        }
    },
    "codex": {
        "hooks": {
            "SessionStart": [{"matcher": "startup|resume|clear|compact", "hooks": [codex_handler()]}],
            "UserPromptSubmit": [{"hooks": [codex_handler()]}],
            "PreToolUse": [{"matcher": "^apply_patch$", "hooks": [codex_handler()]}],
            "PreCompact": [{"hooks": [codex_handler()]}],
            "SubagentStart": [{"hooks": [codex_handler()]}],
        }
    },
    "gemini": {
        "hooks": {
            "SessionStart": [{"matcher": "*", "hooks": [gemini_handler()]}],
            "BeforeAgent": [{"matcher": "*", "hooks": [gemini_handler()]}],
            "AfterTool": [{"matcher": "read_file|write_file|replace", "hooks": [gemini_handler()]}],
            "PreCompress": [{"matcher": "*", "hooks": [gemini_handler()]}],
        }
    },
    "cursor": {
        "version": 1,
        "hooks": {
            "sessionStart": [cursor_handler()],
            "postToolUse": [cursor_handler() | {"matcher": "Read|Write"}],
            "preCompact": [cursor_handler()],
        },
    },
}

FILES = {
    "claude": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
    "cursor": ".cursor/hooks.json",
}

# A user's own config per host: other keys, other hooks (some on engram's events).
USER_CONFIGS: dict[str, dict] = {
    "claude": {
        "permissions": {"allow": ["Bash(npm test)"], "deny": []},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo remember"}]}],
            # mentions engram but is not engram's hook adapter: must survive
            "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "engram index"}]}],
        },
        "model": "opus",
    },
    "codex": {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]},
    },
    "gemini": {
        "mcpServers": {"docs": {"command": "docs-server", "args": ["--stdio"]}},
        "hooks": {
            "BeforeTool": [
                {"matcher": "run_shell_command", "hooks": [{"name": "guard", "type": "command", "command": "./g"}]}
            ],
            "SessionStart": [{"matcher": "*", "hooks": [{"name": "hi", "type": "command", "command": "echo hi"}]}],
        },
    },
    "cursor": {
        "version": 1,
        "hooks": {"afterFileEdit": [{"command": "./format.sh"}]},
    },
}


def odd_bytes(data: dict) -> bytes:
    """A user's formatting: 4-space indent, no trailing newline."""
    return json.dumps(data, indent=4).encode()


def do_link(host: str, project: Path, backups: Path, cmd: str = CMD, **kw) -> link_mod.LinkResult:
    """The hook config's result."""
    return link(host, project, engram_command=cmd, backup_dir=backups, **kw)[0]


def do_unlink(host: str, project: Path, backups: Path, **kw) -> link_mod.LinkResult:
    """The hook config's result (there is no MCP config to touch)."""
    return unlink(host, project, backup_dir=backups, **kw)[0]


def merged(user: dict, host: str) -> dict:
    """The user's config with engram's entries appended after the user's own."""
    result = copy.deepcopy(user)
    for key, value in EXPECTED[host].items():
        if key != "hooks":
            result.setdefault(key, value)
    hooks = result.setdefault("hooks", {})
    for event, entries in EXPECTED[host]["hooks"].items():
        hooks.setdefault(event, []).extend(copy.deepcopy(entries))
    return result


@pytest.fixture
def backups(tmp_path: Path) -> Path:
    return tmp_path / "config" / "link-backups"


def write_config(project: Path, host: str, content: bytes) -> Path:
    path = project / FILES[host]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


# --- (1) missing file ----------------------------------------------------------


@pytest.mark.parametrize("host", HOSTS)
def test_link_creates_missing_file_with_expected_entries(host: str, project: Path, backups: Path) -> None:
    result = do_link(host, project, backups)
    path = project / FILES[host]
    assert result.path == path
    assert result.changed
    content = path.read_text()
    assert json.loads(content) == EXPECTED[host]
    assert content == json.dumps(EXPECTED[host], indent=2) + "\n"


def test_gemini_timeout_is_in_milliseconds_others_in_seconds(project: Path, backups: Path) -> None:
    for host in HOSTS:
        do_link(host, project, backups)
    gemini = json.loads((project / FILES["gemini"]).read_text())
    claude = json.loads((project / FILES["claude"]).read_text())
    assert gemini["hooks"]["BeforeAgent"][0]["hooks"][0]["timeout"] == 10_000
    assert claude["hooks"]["UserPromptSubmit"][0]["hooks"][0]["timeout"] == 10


# --- (2) merge into an existing config ----------------------------------------


@pytest.mark.parametrize("host", HOSTS)
def test_link_keeps_other_keys_and_hooks(host: str, project: Path, backups: Path) -> None:
    path = write_config(project, host, odd_bytes(USER_CONFIGS[host]))
    assert do_link(host, project, backups).changed
    data = json.loads(path.read_text())
    assert data == merged(USER_CONFIGS[host], host)
    assert list(data) == list(merged(USER_CONFIGS[host], host))  # user's key order kept


def compact_lines(data: dict) -> bytes:
    """A user's formatting: each top-level member on one line, a tab before it."""
    members = [f"\t{json.dumps(key)}: {json.dumps(value)}" for key, value in data.items()]
    return ("{\n" + ",\n".join(members) + "\n}\n").encode()


@pytest.mark.parametrize("host", HOSTS)
def test_link_leaves_the_users_lines_as_they_were_written(host: str, project: Path, backups: Path) -> None:
    """The diff of a committed settings file holds engram's lines only: the user's untouched members
    keep their text, and engram's are written in the file's own indent."""
    user = USER_CONFIGS[host]
    path = write_config(project, host, compact_lines(user))
    do_link(host, project, backups)
    written = path.read_text()
    assert json.loads(written) == merged(user, host)
    untouched = [line for line in compact_lines(user).decode().splitlines()[1:-1] if '"hooks"' not in line]
    assert all(line.rstrip(",") in written for line in untouched)
    own_events = [f"{json.dumps(event)}: {json.dumps(entries)}" for event, entries in user["hooks"].items()]
    assert any(event in written for event in own_events)  # an event engram did not touch, on its one line
    assert "\n\t\t" in written and "\n  " not in written  # engram's entries indented by tabs


@pytest.mark.parametrize("host", HOSTS)
def test_unlink_after_an_edit_keeps_the_users_lines_as_they_were_written(
    host: str, project: Path, backups: Path
) -> None:
    path = write_config(project, host, compact_lines(USER_CONFIGS[host]))
    do_link(host, project, backups)
    path.write_bytes(path.read_bytes().replace(b"{\n", b'{\n\t"theme": "dark",\n', 1))  # no byte-exact restore now
    do_unlink(host, project, backups)
    expected = {"theme": "dark"} | USER_CONFIGS[host]
    assert json.loads(path.read_text()) == expected
    lines = compact_lines(expected).decode().splitlines()
    assert all(line.rstrip(",") in path.read_text() for line in lines if '"hooks"' not in line)


@pytest.mark.parametrize("levels", [150, 100_000])  # past the limit; past what json.loads reads at all
def test_a_settings_file_nested_too_deeply_is_left_untouched(levels: int, project: Path, backups: Path) -> None:
    deep = ('{"a": ' + "[" * levels + "]" * levels + "}").encode()
    path = write_config(project, "claude", deep)
    with pytest.raises(LinkError, match="nested deeper than 100 levels"):
        do_link("claude", project, backups)
    assert path.read_bytes() == deep


def test_cursor_link_adds_version_when_missing(project: Path, backups: Path) -> None:
    path = write_config(project, "cursor", b'{"hooks": {"stop": [{"command": "./s"}]}}')
    do_link("cursor", project, backups)
    data = json.loads(path.read_text())
    assert data["version"] == 1
    assert data["hooks"]["stop"] == [{"command": "./s"}]


# --- (3) idempotence -------------------------------------------------------------


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("existing", [False, True])
def test_link_twice_equals_link_once(host: str, existing: bool, project: Path, backups: Path) -> None:
    if existing:
        write_config(project, host, odd_bytes(USER_CONFIGS[host]))
    do_link(host, project, backups)
    once = (project / FILES[host]).read_bytes()
    again = do_link(host, project, backups)
    assert not again.changed
    assert (project / FILES[host]).read_bytes() == once


@pytest.mark.parametrize("host", HOSTS)
def test_relink_with_new_command_replaces_entries(host: str, project: Path, backups: Path) -> None:
    do_link(host, project, backups, cmd="/old/engram")
    assert do_link(host, project, backups).changed
    assert json.loads((project / FILES[host]).read_text()) == EXPECTED[host]


# --- (4) byte-exact round trip ---------------------------------------------------


@pytest.mark.parametrize("host", HOSTS)
def test_unlink_restores_original_bytes(host: str, project: Path, backups: Path) -> None:
    original = odd_bytes(USER_CONFIGS[host])
    path = write_config(project, host, original)
    do_link(host, project, backups)
    assert path.read_bytes() != original
    assert do_unlink(host, project, backups).changed
    assert path.read_bytes() == original
    assert list(backups.iterdir()) == []


@pytest.mark.parametrize("host", HOSTS)
def test_unlink_deletes_file_and_dir_link_created(host: str, project: Path, backups: Path) -> None:
    do_link(host, project, backups)
    assert do_unlink(host, project, backups).changed
    assert not (project / FILES[host]).exists()
    assert not (project / FILES[host]).parent.exists()


def test_unlink_keeps_dir_that_existed_before_link(project: Path, backups: Path) -> None:
    (project / ".claude").mkdir()
    do_link("claude", project, backups)
    do_unlink("claude", project, backups)
    assert not (project / ".claude/settings.json").exists()
    assert (project / ".claude").is_dir()


def test_unlink_keeps_created_dir_holding_other_files(project: Path, backups: Path) -> None:
    do_link("claude", project, backups)
    (project / ".claude/settings.local.json").write_text("{}")
    do_unlink("claude", project, backups)
    assert not (project / ".claude/settings.json").exists()
    assert (project / ".claude/settings.local.json").exists()


@pytest.mark.parametrize("host", HOSTS)
def test_relink_keeps_the_pristine_backup(host: str, project: Path, backups: Path) -> None:
    original = odd_bytes(USER_CONFIGS[host])
    path = write_config(project, host, original)
    do_link(host, project, backups, cmd="/old/engram")
    do_link(host, project, backups, cmd="/old/engram")
    do_link(host, project, backups)  # a changed command rewrites the file
    do_unlink(host, project, backups)
    assert path.read_bytes() == original


def test_round_trip_keeps_empty_file(project: Path, backups: Path) -> None:
    path = write_config(project, "claude", b"")
    do_link("claude", project, backups)
    assert json.loads(path.read_text()) == EXPECTED["claude"]
    do_unlink("claude", project, backups)
    assert path.read_bytes() == b""


# --- (5) user edits after link ---------------------------------------------------


@pytest.mark.parametrize("host", HOSTS)
def test_unlink_after_user_edit_removes_only_engram(host: str, project: Path, backups: Path) -> None:
    path = write_config(project, host, odd_bytes(USER_CONFIGS[host]))
    do_link(host, project, backups)
    edited = json.loads(path.read_text())
    edited["theme"] = "dark"
    first_event = next(iter(EXPECTED[host]["hooks"]))
    edited["hooks"][first_event].append({"command": "./mine.sh"})
    path.write_text(json.dumps(edited, indent=2) + "\n")

    assert do_unlink(host, project, backups).changed
    expected = copy.deepcopy(USER_CONFIGS[host]) | {"theme": "dark"}
    expected["hooks"].setdefault(first_event, []).append({"command": "./mine.sh"})
    assert json.loads(path.read_text()) == expected
    assert list(backups.iterdir()) == []


@pytest.mark.parametrize("host", HOSTS)
def test_unlink_after_edit_of_created_file_keeps_only_the_edit(host: str, project: Path, backups: Path) -> None:
    do_link(host, project, backups)
    path = project / FILES[host]
    path.write_text(json.dumps(json.loads(path.read_text()) | {"theme": "dark"}))
    do_unlink(host, project, backups)
    assert json.loads(path.read_text()) == {"theme": "dark"}


def test_unlink_after_reformat_of_created_file_deletes_it(project: Path, backups: Path) -> None:
    do_link("codex", project, backups)
    path = project / FILES["codex"]
    path.write_text(json.dumps(json.loads(path.read_text()), indent=8))
    do_unlink("codex", project, backups)
    assert not path.exists()


def test_structural_unlink_keeps_containers_that_were_empty_before(project: Path, backups: Path) -> None:
    original = {"hooks": {"PreCompact": [], "Stop": []}, "env": {}}
    path = write_config(project, "claude", json.dumps(original).encode())
    do_link("claude", project, backups)
    path.write_text(path.read_text().replace("\n", "\r\n"))  # any edit defeats the byte restore
    do_unlink("claude", project, backups)
    assert json.loads(path.read_text()) == original


def test_structural_unlink_keeps_empty_hooks_object_from_before(project: Path, backups: Path) -> None:
    path = write_config(project, "gemini", b'{"hooks": {}}')
    do_link("gemini", project, backups)
    path.write_text(path.read_text() + " ")
    do_unlink("gemini", project, backups)
    assert json.loads(path.read_text()) == {"hooks": {}}


def test_structural_unlink_removes_engram_handler_inside_user_group(project: Path, backups: Path) -> None:
    user_group = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}, claude_handler()]}
    path = write_config(project, "claude", json.dumps({"hooks": {"PreToolUse": [user_group]}}).encode())
    do_unlink("claude", project, backups)
    assert json.loads(path.read_text()) == {
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}
    }


def test_handlers_for_other_host_names_are_not_engrams_for_this_host(project: Path, backups: Path) -> None:
    other = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "engram hook --host claude-code"}]}]}}
    path = write_config(project, "claude", json.dumps(other).encode())
    do_link("claude", project, backups)
    path.write_text(path.read_text() + " ")
    do_unlink("claude", project, backups)
    assert json.loads(path.read_text()) == other


def test_backup_record_is_named_by_sha256_of_the_target_path(project: Path, backups: Path) -> None:
    result = do_link("claude", project, backups)
    name = hashlib.sha256(str(result.path.absolute()).encode()).hexdigest() + ".json"
    assert [p.name for p in backups.iterdir()] == [name]
    assert json.loads((backups / name).read_text())["original"] is None


@pytest.mark.parametrize("host", HOSTS)
def test_unlink_without_backup_removes_entries_linked_elsewhere(host: str, project: Path, tmp_path: Path) -> None:
    """E.g. a teammate committed the linked file: no record here, structural removal."""
    path = write_config(project, host, odd_bytes(USER_CONFIGS[host]))
    do_link(host, project, tmp_path / "their-backups", cmd="/their/engram")
    mine = tmp_path / "my-backups"
    do_link(host, project, mine)  # no pristine original exists here, so no record is kept
    assert not mine.exists() or list(mine.iterdir()) == []
    assert do_unlink(host, project, mine).changed
    assert json.loads(path.read_text()) == USER_CONFIGS[host]


def test_cursor_structural_unlink_drops_version_it_added(project: Path, backups: Path) -> None:
    path = write_config(project, "cursor", b'{"hooks": {"stop": []}}')
    do_link("cursor", project, backups)
    path.write_text(path.read_text() + "\n")
    do_unlink("cursor", project, backups)
    assert json.loads(path.read_text()) == {"hooks": {"stop": []}}


@pytest.mark.parametrize("host", HOSTS)
def test_unlink_when_not_linked_changes_nothing(host: str, project: Path, backups: Path) -> None:
    original = odd_bytes(USER_CONFIGS[host])
    path = write_config(project, host, original)
    assert not do_unlink(host, project, backups).changed
    assert path.read_bytes() == original
    assert not do_unlink(host, project / "elsewhere", backups).changed
    assert not (project / "elsewhere").exists()


def test_unlink_after_user_deleted_file_does_not_recreate_it(project: Path, backups: Path) -> None:
    path = write_config(project, "claude", b"{}")
    do_link("claude", project, backups)
    path.unlink()
    assert not do_unlink("claude", project, backups).changed
    assert not path.exists()
    assert list(backups.iterdir()) == []


# --- (6) files engram will not rewrite --------------------------------------------


BAD_FILES = [
    b'{"hooks": {',
    b"[1, 2]",
    b'{"hooks": []}',
    b'{"hooks": {}, // mine\n "x": 1}',
    b"\xff\xfe{}",
    # what a rewrite would change (a robustness audit): a key given twice, no-JSON constants,
    # numbers a float does not hold, a lone surrogate
    b'{"permissions": {"allow": ["Bash(ls)"]}, "permissions": {"allow": ["Bash(rm)"]}}',
    b'{"x": Infinity}',
    b'{"x": NaN}',
    b'{"big": 1e400}',
    b'{"precise": 1.00000000000000000001}',
    b'{"x": "\\udc00"}',
]


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("content", BAD_FILES)
def test_bad_file_raises_and_is_untouched(host: str, content: bytes, project: Path, backups: Path) -> None:
    path = write_config(project, host, content)
    for action in (lambda: do_link(host, project, backups), lambda: do_unlink(host, project, backups)):
        with pytest.raises(LinkError) as caught:
            action()
        message = str(caught.value)
        assert str(path) in message and "\n" not in message
        assert path.read_bytes() == content
    assert not backups.exists()


@pytest.mark.parametrize("host", HOSTS)
def test_event_that_is_not_a_list_raises(host: str, project: Path, backups: Path) -> None:
    event = next(iter(EXPECTED[host]["hooks"]))
    content = json.dumps({"hooks": {event: {"oops": True}}}).encode()
    path = write_config(project, host, content)
    with pytest.raises(LinkError, match="not a list"):
        do_link(host, project, backups)
    assert path.read_bytes() == content


def test_jsonc_trailing_commas_are_tolerated_and_restored(project: Path, backups: Path) -> None:
    original = b'{\n  "theme": "dark",\n  "hooks": {\n    "BeforeTool": [],\n  },\n  "url": "http://x//y",\n}'
    path = write_config(project, "gemini", original)
    do_link("gemini", project, backups)
    data = json.loads(path.read_text())
    assert data["theme"] == "dark" and data["url"] == "http://x//y"
    assert data["hooks"]["BeforeTool"] == []
    do_unlink("gemini", project, backups)
    assert path.read_bytes() == original


def test_comment_message_explains_the_refusal(project: Path, backups: Path) -> None:
    write_config(project, "gemini", b'{\n  /* keep me */\n  "a": "b",\n}')
    with pytest.raises(LinkError, match="comments"):
        do_link("gemini", project, backups)


def test_unknown_host_raises(project: Path, backups: Path) -> None:
    with pytest.raises(LinkError, match="unknown host"):
        do_link("windsurf", project, backups)


# --- (7) messages -----------------------------------------------------------------


def test_codex_link_returns_trust_message(project: Path, backups: Path) -> None:
    result = do_link("codex", project, backups)
    assert result.messages == [
        "Codex runs new or changed hooks only after you trust them: open /hooks in Codex and trust the engram entries."
    ]


def test_gemini_link_says_changed_hooks_are_untrusted(project: Path, backups: Path) -> None:
    [message] = do_link("gemini", project, backups).messages
    assert "untrusted" in message and "/hooks panel" in message


@pytest.mark.parametrize("host", ["claude", "cursor"])
def test_other_hosts_have_no_messages(host: str, project: Path, backups: Path) -> None:
    assert do_link(host, project, backups).messages == []
    assert do_unlink(host, project, backups).messages == []


# --- (8) global paths -------------------------------------------------------------


@pytest.mark.parametrize("host", HOSTS)
def test_global_paths_go_under_home(host: str, project: Path, backups: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert config_path(host, project, True, home) == home / FILES[host]
    assert config_path(host, project, False, home) == project / FILES[host]
    result = do_link(host, project, backups, global_=True, home=home)
    assert result.path == home / FILES[host]
    assert json.loads(result.path.read_text()) == EXPECTED[host]
    assert [p.name for p in Path(project).iterdir()] == [".agents"]  # nothing written into the project
    do_unlink(host, project, backups, global_=True, home=home)
    assert not (home / FILES[host]).exists()


def test_global_path_defaults_to_user_home(project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(Path, "home", classmethod(lambda cls: tmp_path / "h"))
    assert config_path("gemini", project, True) == tmp_path / "h" / ".gemini/settings.json"


# --- file system details ------------------------------------------------------------


def test_global_link_writes_through_a_symlink(project: Path, backups: Path, tmp_path: Path) -> None:
    dotfiles, home = tmp_path / "dotfiles", tmp_path / "home"
    dotfiles.mkdir()
    target = dotfiles / "settings.json"
    target.write_bytes(b'{"model": "opus"}')
    (home / ".claude").mkdir(parents=True)
    (home / ".claude/settings.json").symlink_to(target)
    do_link("claude", project, backups, global_=True, home=home)
    assert (home / ".claude/settings.json").is_symlink()
    assert "hook --host claude" in target.read_text()
    do_unlink("claude", project, backups, global_=True, home=home)
    assert (home / ".claude/settings.json").is_symlink()
    assert target.read_bytes() == b'{"model": "opus"}'


def test_project_link_writes_through_a_symlink_inside_the_project(project: Path, backups: Path) -> None:
    (project / "shared").mkdir()
    target = project / "shared" / "settings.json"
    target.write_bytes(b'{"model": "opus"}')
    (project / ".claude").mkdir()
    (project / ".claude/settings.json").symlink_to("../shared/settings.json")
    do_link("claude", project, backups)
    assert "hook --host claude" in target.read_text()


@pytest.mark.parametrize("linked", ["file", "folder"])
def test_project_link_refuses_a_symlink_out_of_the_project(
    project: Path, backups: Path, tmp_path: Path, linked: str
) -> None:
    # a clone committing `.claude -> ../../.claude` would have a project link edit the user's own settings
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".claude").mkdir(parents=True)
    target = elsewhere / ".claude/settings.json"
    target.write_bytes(b'{"model": "opus"}')
    if linked == "file":
        (project / ".claude").mkdir()
        (project / ".claude/settings.json").symlink_to(target)
    else:
        (project / ".claude").symlink_to(elsewhere / ".claude")
    for step in (do_link, do_unlink):
        with pytest.raises(LinkError, match="a symlink out of the project"):
            step("claude", project, backups)
    assert target.read_bytes() == b'{"model": "opus"}'
    assert not backups.exists()


def test_link_keeps_file_mode(project: Path, backups: Path) -> None:
    path = write_config(project, "codex", b"{}")
    path.chmod(0o600)
    do_link("codex", project, backups)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["hooks.json"]  # no temp file left


# --- the command a link writes -----------------------------------------------------------


def test_absolute_command_uses_engram_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/local/bin/engram")
    assert absolute_engram_command() == "/usr/local/bin/engram"


def test_absolute_command_quotes_paths_with_spaces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: "/opt/my tools/engram")
    assert absolute_engram_command() == "'/opt/my tools/engram'"


def test_absolute_command_falls_back_to_argv0(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    script = tmp_path / "engram"
    script.touch()
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(sys, "argv", [str(script), "link", "claude"])
    assert absolute_engram_command() == str(script.resolve())


def test_absolute_command_falls_back_to_python_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(sys, "argv", ["pytest"])
    monkeypatch.setattr(sys, "executable", "/usr/bin/python3")
    assert absolute_engram_command() == "/usr/bin/python3 -m engram"


def executable(folder: Path, name: str, script: str) -> Path:
    """A shell script ``name`` in ``folder`` (a folder made to be PATH)."""
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)
    return path


def test_a_project_link_runs_engram_from_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    found = executable(tmp_path / "bin", "engram", "exit 0")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert engram_command(global_=False) == ("engram", f"portable: on PATH here as {found}")
    assert engram_command(global_=True).command == str(found)  # --global: this machine's path


def test_without_an_engram_script_a_project_link_runs_the_module_with_the_python_on_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """python3 here lacks engram (it fails), python has it (the test's own interpreter): `python -m engram`."""
    executable(tmp_path / "bin", "python3", "exit 1")
    found = executable(tmp_path / "bin", "python", f'exec {sys.executable} "$@"')
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    command = engram_command(global_=False)
    assert command == ("python -m engram", f"portable: no engram script on PATH, {found} has the module")


def test_with_no_engram_on_path_a_project_link_writes_this_machines_path_and_says_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    command = engram_command(global_=False)
    assert command.command == absolute_engram_command() and command.command.startswith("/")
    assert "neither `engram` nor a python that has engram is on PATH" in command.reason


@pytest.mark.parametrize("host", HOSTS)
def test_is_linked_follows_link_and_unlink(host: str, project: Path, backups: Path) -> None:
    assert not is_linked(host, project)
    write_config(project, host, odd_bytes(USER_CONFIGS[host]))
    assert not is_linked(host, project)  # the user's own hooks, one of them mentioning engram
    do_link(host, project, backups, cmd="engram")
    assert [linked for linked in HOSTS if is_linked(linked, project)] == [host]
    do_unlink(host, project, backups)
    assert not is_linked(host, project)


@pytest.mark.parametrize("host", HOSTS)
def test_a_wrapped_engram_hook_counts_as_linked(host: str, project: Path, backups: Path) -> None:
    """A `--command` wrapper (a tracer, a container) runs engram's hook: the host gets its native rule files."""
    do_link(host, project, backups, cmd="python3 trace_engram.py /tmp/log engram")
    assert [linked for linked in HOSTS if is_linked(linked, project)] == [host]


def test_a_config_link_would_refuse_is_not_linked(project: Path) -> None:
    handler = b'{"command": "engram hook --host claude"}'
    write_config(project, "claude", b'{"hooks": {"UserPromptSubmit": [{"hooks": [' + handler + b"]}]}} // a comment")
    assert not is_linked("claude", project)


def test_python_module_command_is_recognised_as_engram(project: Path, backups: Path) -> None:
    cmd = "/usr/bin/python3 -m engram"
    do_link("claude", project, backups, cmd=cmd)
    once = (project / FILES["claude"]).read_bytes()
    do_link("claude", project, backups, cmd=cmd)
    assert (project / FILES["claude"]).read_bytes() == once


# --- properties -----------------------------------------------------------------------------

EVENT_NAMES = sorted({event for host in HOSTS for event in EXPECTED[host]["hooks"]} | {"Stop", "afterFileEdit"})

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)


@st.composite
def configs(draw: st.DrawFn) -> dict:
    """A JSON object with random keys, maybe with a `hooks` object of random lists, anywhere."""
    items = list(
        draw(st.dictionaries(st.text(max_size=6).filter(lambda k: k != "hooks"), json_values, max_size=4)).items()
    )
    if draw(st.booleans()):
        events = st.sampled_from(EVENT_NAMES) | st.text(max_size=6)
        hooks = draw(st.dictionaries(events, st.lists(json_values, max_size=3), max_size=4))
        items.insert(draw(st.integers(0, len(items))), ("hooks", hooks))
    return dict(items)


formats = st.fixed_dictionaries(
    {"indent": st.sampled_from([None, 2, 4, "\t"]), "ensure_ascii": st.booleans(), "newline": st.booleans()}
)


def render(data: dict, fmt: dict) -> bytes:
    text = json.dumps(data, indent=fmt["indent"], ensure_ascii=fmt["ensure_ascii"])
    return (text + ("\n" if fmt["newline"] else "")).encode()


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(host=st.sampled_from(HOSTS), data=configs(), fmt=formats)
def test_property_link_then_unlink_is_byte_identical(host: str, data: dict, fmt: dict) -> None:
    original = render(data, fmt)
    with tempfile.TemporaryDirectory() as tmp:
        project, backups = Path(tmp, "p"), Path(tmp, "b")
        path = write_config(project, host, original)
        do_link(host, project, backups)
        do_unlink(host, project, backups)
        assert path.read_bytes() == original


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(host=st.sampled_from(HOSTS), data=configs(), fmt=formats)
def test_property_structural_unlink_restores_the_data(host: str, data: dict, fmt: dict) -> None:
    """Even after the file was reformatted, unlink gives back the same JSON, key order included."""
    with tempfile.TemporaryDirectory() as tmp:
        project, backups = Path(tmp, "p"), Path(tmp, "b")
        path = write_config(project, host, render(data, fmt))
        do_link(host, project, backups)
        path.write_text(json.dumps(json.loads(path.read_text()), indent=3))
        do_unlink(host, project, backups)
        assert json.dumps(json.loads(path.read_text())) == json.dumps(data)

"""`engram link` / `engram unlink` as commands: the files they write and what they say."""

from __future__ import annotations

import json
import os
import sys

import pytest


@pytest.fixture
def on_path(engram_bin: str) -> dict:
    """The environment of someone whose PATH has the engram script."""
    return {"PATH": os.pathsep.join([os.path.dirname(engram_bin), os.environ.get("PATH", "")])}


def claude_commands(project) -> set[str]:
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    return {handler["command"] for groups in hooks.values() for group in groups for handler in group["hooks"]}


def test_link_then_unlink_restores_the_settings_byte_for_byte(project, run_engram, engram_bin, on_path):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = b'{\n    "permissions": {"allow": ["Bash(ls)"]}\n}'
    settings.write_bytes(original)
    linked = run_engram(["link", "claude"], project, env=on_path)
    assert linked.returncode == 0
    assert linked.stdout.splitlines() == [
        f"linked claude: {settings}",
        f"claude runs: engram (portable: on PATH here as {engram_bin})",
        "`engram index` writes its native rule files (.claude/rules/engram/)",
    ]
    assert claude_commands(project) == {"engram hook --host claude"}
    assert json.loads(settings.read_text())["permissions"] == {"allow": ["Bash(ls)"]}
    assert run_engram(["link", "claude"], project, env=on_path).stdout.startswith("unchanged claude: ")
    unlinked = run_engram(["unlink", "claude"], project)
    assert unlinked.returncode == 0
    assert settings.read_bytes() == original


def test_link_global_writes_this_machines_path(project, run_engram, engram_bin, on_path, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    linked = run_engram(["link", "claude", "--global"], project, env=on_path | {"HOME": str(home)})
    assert linked.returncode == 0
    assert linked.stdout.splitlines()[1:] == [
        f"claude runs: {engram_bin} (this machine's path, for a user-level config)",
        "native rule files (.claude/rules/engram/) are written only in projects that link claude"
        " or name it in hooks.native",
    ]
    assert json.loads((home / ".claude/settings.json").read_text())["hooks"]["UserPromptSubmit"][0]["hooks"][0][
        "command"] == f"{engram_bin} hook --host claude"  # fmt: skip
    assert not (project / ".claude").exists()
    assert run_engram(["unlink", "claude", "--global"], project, env={"HOME": str(home)}).returncode == 0
    assert list(home.iterdir()) == []


def test_link_codex_says_to_trust_the_hooks(project, run_engram):
    proc = run_engram(["link", "codex"], project)
    assert proc.returncode == 0
    assert "/hooks" in proc.stdout
    assert (
        json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]["PreToolUse"][0]["matcher"]
        == "^apply_patch$"
    )


def test_link_refuses_a_broken_config_and_an_unknown_host(project, run_engram):
    gemini = project / ".gemini" / "settings.json"
    gemini.parent.mkdir()
    gemini.write_text("{not json")
    proc = run_engram(["link", "gemini"], project)
    assert proc.returncode == 1 and proc.stderr.startswith("engram: error: ")
    assert gemini.read_text() == "{not json"
    assert run_engram(["link", "vim"], project).returncode == 2


def test_link_with_a_command_given_then_the_default(project, run_engram, on_path):
    settings = project / ".claude" / "settings.json"
    given = run_engram(["link", "claude", "--command", "python3 -m engram"], project, env=on_path)
    assert given.returncode == 0
    assert "claude runs: python3 -m engram (given with --command)" in given.stdout.splitlines()
    assert claude_commands(project) == {"python3 -m engram hook --host claude"}
    again = run_engram(["link", "claude", "--command", "python3 -m engram"], project, env=on_path)
    assert again.stdout.startswith("unchanged claude: ")
    relinked = run_engram(["link", "claude"], project, env=on_path)  # back to the default: replaced, not added
    assert relinked.stdout.startswith("linked claude: ")
    assert len(json.loads(settings.read_text())["hooks"]["UserPromptSubmit"]) == 1
    assert claude_commands(project) == {"engram hook --host claude"}
    assert run_engram(["unlink", "claude"], project).returncode == 0
    assert not settings.exists()


def test_without_engram_on_path_link_writes_python_m_engram(project, run_engram, tmp_path):
    """engram installed as a module only (no script on PATH), as `python3 -m engram` runs it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    python = bin_dir / "python3"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    linked = run_engram(["link", "claude", "--mcp"], project, env={"PATH": str(bin_dir)})
    reason = f"portable: no engram script on PATH, {python} has the module"
    assert f"claude runs: python3 -m engram ({reason})" in linked.stdout.splitlines()
    assert claude_commands(project) == {"python3 -m engram hook --host claude"}
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert (server["command"], server["args"]) == ("python3", ["-m", "engram", "mcp"])


def test_link_refuses_a_command_that_is_not_engram(project, run_engram):
    proc = run_engram(["link", "claude", "--command", "memtool"], project)
    assert proc.returncode == 2 and "--command" in proc.stderr
    assert not (project / ".claude" / "settings.json").exists()


def test_link_cursor_offers_the_mcp_server_and_unlink_takes_both_out(project, run_engram, on_path):
    plain = run_engram(["link", "cursor"], project, env=on_path)
    assert "engram link cursor --mcp" in plain.stdout
    with_mcp = run_engram(["link", "cursor", "--mcp"], project, env=on_path)
    assert with_mcp.returncode == 0 and "--mcp" not in with_mcp.stdout
    server = json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]["engram"]
    assert server == {"type": "stdio", "command": "engram", "args": ["mcp", "--project", "${workspaceFolder}"]}
    unlinked = run_engram(["unlink", "cursor"], project)
    assert unlinked.stdout.splitlines() == [f"unlinked cursor: {project / '.cursor' / 'hooks.json'}",
                                            f"unlinked cursor: {project / '.cursor' / 'mcp.json'}"]  # fmt: skip
    assert not (project / ".cursor").exists()


# --- links that cannot finish, and entries engram did not write ----------------------------------------------


ENGRAM_TABLE = '[mcp_servers.engram]\ncommand = "engram"\nargs = ["mcp"]\n'
WITH_A_SUB_TABLE = 'model = "gpt-5.5"\n' + ENGRAM_TABLE + '[mcp_servers.engram.env]\nENGRAM_DEBUG = "1"\n'


@pytest.mark.installed
@pytest.mark.parametrize(
    ("before", "after"),
    [
        ('model = "gpt-5.5"\n' + ENGRAM_TABLE + "[tui]\nx = 1\n", 'model = "gpt-5.5"\n[tui]\nx = 1\n'),
        (WITH_A_SUB_TABLE, WITH_A_SUB_TABLE),
    ],
    ids=["engrams-table", "with-a-sub-table"],
)
def test_unlink_codex_takes_out_only_a_whole_table_and_no_line_break(before, after, project, run_engram):
    """A committed config.toml (no backup here): engram's table between two others goes without joining
    them; one with a sub-table of its own stays, as taking the table alone would orphan the sub-table."""
    path = project / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(before)
    assert run_engram(["unlink", "codex"], project).returncode == 0
    assert path.read_text() == after


@pytest.mark.installed
@pytest.mark.parametrize(
    "config",
    [b'[mcp_servers.engram]\ncommand = "their-tool"\n', b'mcp_servers = { other = { command = "x" } }\n'],
    ids=["their-server", "inline-table"],
)
def test_link_mcp_that_cannot_register_the_server_changes_no_file(config, project, run_engram, on_path):
    path = project / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_bytes(config)
    proc = run_engram(["link", "codex", "--mcp"], project, env=on_path)
    assert proc.returncode == 1
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"engram: error: {path}: ") and "Error" not in line
    assert sorted(p.name for p in path.parent.iterdir()) == ["config.toml"]  # no hooks.json
    assert path.read_bytes() == config


def one_line_warnings(stderr: str) -> list[str]:
    lines = stderr.splitlines()
    assert all(line.startswith("engram: warning: ") for line in lines), stderr
    return lines


@pytest.mark.installed
def test_a_hand_written_hook_with_its_own_timeout_is_kept_beside_engrams(project, run_engram, on_path):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs = {"type": "command", "command": "engram hook --host claude", "timeout": 30}
    original = json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [theirs]}]}}).encode()
    settings.write_bytes(original)
    linked = run_engram(["link", "claude"], project, env=on_path)
    assert linked.returncode == 0
    groups = json.loads(settings.read_text())["hooks"]["UserPromptSubmit"]
    assert [group["hooks"] for group in groups] == [[theirs], [theirs | {"timeout": 10}]]
    [both] = one_line_warnings(linked.stderr)
    assert "UserPromptSubmit" in both and "both will run" in both
    assert run_engram(["unlink", "claude"], project).returncode == 0
    assert settings.read_bytes() == original


WRAPPERS = [
    "tee -a ~/prompt-audit.log | engram hook --host claude",
    "ENGRAM_DEBUG=1 engram hook --host claude 2>>/tmp/x.log",
    "docker run --rm -i myorg/engram hook --host claude",
]


@pytest.mark.installed
@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_a_users_wrapper_hook_stays_and_unlink_takes_out_only_engrams(wrapper, project, run_engram, on_path):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": wrapper}]}]}})
    settings.write_text(original)
    linked = run_engram(["link", "claude"], project, env=on_path)
    assert linked.returncode == 0
    assert claude_commands(project) == {wrapper, "engram hook --host claude"}
    [both] = one_line_warnings(linked.stderr)
    assert wrapper in both and "both will run" in both
    assert run_engram(["link", "claude"], project, env=on_path).stdout.startswith("unchanged claude: ")
    settings.write_text(settings.read_text() + "\n")  # an edit: unlink takes entries out rather than restore
    assert run_engram(["unlink", "claude"], project).returncode == 0
    assert json.loads(settings.read_text()) == json.loads(original)


@pytest.mark.installed
def test_a_wrapper_given_with_command_is_linked_once_however_often(project, run_engram):
    """`--command` may wrap engram (a tracer, a container): linking again with it replaces its own entries."""
    wrapper = "docker run --rm -i myorg/engram"
    for _ in range(2):
        assert run_engram(["link", "claude", "--command", wrapper], project).returncode == 0
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    commands = [h["command"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]]
    assert commands and set(commands) == {f"{wrapper} hook --host claude"}
    assert len(commands) == len(settings["hooks"])  # one handler per event
    assert run_engram(["unlink", "claude"], project).returncode == 0
    assert not (project / ".claude" / "settings.json").exists()


OWN_SERVERS = {
    "claude": (".mcp.json", b'{\n  "mcpServers": {\n    "engram": {"command": "engram", "args": ["mcp"], '
               b'"env": {"ENGRAM_GLOBAL_DIR": "/srv/team-memories"}}\n  }\n}\n'),
    "codex": (".codex/config.toml", WITH_A_SUB_TABLE.encode()),
    "codex-timeout": (".codex/config.toml", (ENGRAM_TABLE + "startup_timeout_sec = 30\n").encode()),
}  # fmt: skip


@pytest.mark.installed
@pytest.mark.parametrize("case", OWN_SERVERS)
def test_a_users_own_engram_server_is_kept_by_link_and_unlink(case, project, run_engram, on_path):
    name, original = OWN_SERVERS[case]
    host = case.split("-")[0]
    path = project / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(original)
    linked = run_engram(["link", host, "--mcp"], project, env=on_path)
    assert linked.returncode == 0, linked.stderr
    assert path.read_bytes() == original
    assert f"unchanged {host}: {path}" in linked.stdout.splitlines()
    [kept] = [line for line in one_line_warnings(linked.stderr) if str(path) in line]
    assert "engram did not write; engram left it untouched" in kept
    assert run_engram(["unlink", host], project).returncode == 0
    assert path.read_bytes() == original


@pytest.mark.installed
@pytest.mark.parametrize("first_global", [False, True])
def test_linking_a_host_in_both_scopes_says_both_will_run(first_global, project, run_engram, on_path, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = on_path | {"HOME": str(home)}
    first, second = (["--global"], []) if first_global else ([], ["--global"])
    alone = run_engram(["link", "claude", *first], project, env=env)
    assert alone.returncode == 0 and alone.stderr == ""
    both = run_engram(["link", "claude", *second], project, env=env)
    assert both.returncode == 0
    other = (home if first_global else project.path) / ".claude" / "settings.json"
    [line] = one_line_warnings(both.stderr)
    assert "claude is also linked" in line and str(other) in line and "both" in line


def test_link_refuses_a_cloned_settings_folder_linked_out_of_the_project(project, run_engram, tmp_path):
    (tmp_path / "own/.claude").mkdir(parents=True)
    own = tmp_path / "own/.claude/settings.json"
    own.write_bytes(b'{"model": "opus"}')
    (project / ".claude").symlink_to(tmp_path / "own/.claude", target_is_directory=True)
    proc = run_engram(["link", "claude"], project)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"engram: error: {project / '.claude/settings.json'}: a symlink out of the project;"
        " a project's link writes only inside it"
    ]
    assert own.read_bytes() == b'{"model": "opus"}'

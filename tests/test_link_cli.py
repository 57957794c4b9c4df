"""`engram link` / `engram unlink` through the installed command."""

from __future__ import annotations

import json


def test_link_then_unlink_restores_the_settings_byte_for_byte(project, run_engram, engram_bin):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = b'{\n    "permissions": {"allow": ["Bash(ls)"]}\n}'
    settings.write_bytes(original)
    linked = run_engram(["link", "claude"], project)
    assert linked.returncode == 0 and linked.stdout.startswith("linked claude: ")
    hooks = json.loads(settings.read_text())["hooks"]
    command = hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert command.endswith(" hook --host claude") and command.split()[0].startswith("/")
    assert json.loads(settings.read_text())["permissions"] == {"allow": ["Bash(ls)"]}
    assert run_engram(["link", "claude"], project).stdout.startswith("unchanged claude: ")
    unlinked = run_engram(["unlink", "claude"], project)
    assert unlinked.returncode == 0
    assert settings.read_bytes() == original


def test_link_codex_says_to_trust_the_hooks(project, run_engram):
    proc = run_engram(["link", "codex"], project)
    assert proc.returncode == 0
    assert "/hooks" in proc.stdout
    assert json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]["PreToolUse"][0]["matcher"] == "^apply_patch$"


def test_link_refuses_a_broken_config_and_an_unknown_host(project, run_engram):
    gemini = project / ".gemini" / "settings.json"
    gemini.parent.mkdir()
    gemini.write_text("{not json")
    proc = run_engram(["link", "gemini"], project)
    assert proc.returncode == 1 and proc.stderr.startswith("engram: error: ")
    assert gemini.read_text() == "{not json"
    assert run_engram(["link", "vim"], project).returncode == 2


def test_link_with_a_portable_command_for_a_committed_config(project, run_engram):
    settings = project / ".claude" / "settings.json"
    assert run_engram(["link", "claude", "--command", "engram"], project).returncode == 0
    hooks = json.loads(settings.read_text())["hooks"]
    assert hooks["UserPromptSubmit"][0]["hooks"][0]["command"] == "engram hook --host claude"
    assert run_engram(["link", "claude", "--command", "engram"], project).stdout.startswith("unchanged claude: ")
    relinked = run_engram(["link", "claude"], project)  # back to the absolute path: replaced, not added
    assert relinked.stdout.startswith("linked claude: ")
    handlers = json.loads(settings.read_text())["hooks"]["UserPromptSubmit"]
    assert len(handlers) == 1 and handlers[0]["hooks"][0]["command"].startswith("/")
    assert run_engram(["unlink", "claude"], project).returncode == 0
    assert not settings.exists()


def test_link_refuses_a_command_that_is_not_engram(project, run_engram):
    proc = run_engram(["link", "claude", "--command", "memtool"], project)
    assert proc.returncode == 2 and "--command" in proc.stderr
    assert not (project / ".claude" / "settings.json").exists()


def test_link_cursor_offers_the_mcp_server_and_unlink_takes_both_out(project, run_engram):
    plain = run_engram(["link", "cursor"], project)
    assert "engram link cursor --mcp" in plain.stdout
    with_mcp = run_engram(["link", "cursor", "--mcp"], project)
    assert with_mcp.returncode == 0 and "--mcp" not in with_mcp.stdout
    server = json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]["engram"]
    assert server["args"] == ["mcp", "--project", "${workspaceFolder}"] and server["command"].startswith("/")
    unlinked = run_engram(["unlink", "cursor"], project)
    assert unlinked.stdout.splitlines() == [f"unlinked cursor: {project / '.cursor' / 'hooks.json'}",
                                            f"unlinked cursor: {project / '.cursor' / 'mcp.json'}"]  # fmt: skip
    assert not (project / ".cursor").exists()

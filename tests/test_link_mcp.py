"""`link --mcp`: the `engram mcp` server entry in each host's MCP config, merged and restored like the hooks."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from engram.hosts import HOSTS
from engram.link import LinkError, config_path, link, unlink

CMD = "/opt/engram/bin/engram"
EXISTING = {
    "json": b'{\n  "mcpServers": {"other": {"command": "other-server"}},\n  "theme": "dark"\n}\n',
    "toml": b'model = "gpt-5.5"\n\n[mcp_servers.other]\ncommand = "other-server"\n',
}


def server_entry(host: str, path: Path) -> dict:
    if HOSTS[host].mcp_file.format == "toml":
        return tomllib.loads(path.read_text())["mcp_servers"]["engram"]
    return json.loads(path.read_text())["mcpServers"]["engram"]


def do_link(host: str, project: Path, backups: Path, **kw):
    """`link --mcp`: the hooks and the server; the MCP config's result."""
    return link(host, project, engram_command=CMD, backup_dir=backups, mcp=True, **kw)[1]


def do_unlink(host: str, project: Path, backups: Path):
    """Both out again; the MCP config's result."""
    return unlink(host, project, backup_dir=backups)[1]


def mcp_config_path(host: str, project: Path, global_: bool, home: Path | None = None) -> Path:
    return config_path(host, project, global_, home, mcp=True)


@pytest.mark.parametrize("host", HOSTS)
def test_link_mcp_writes_the_server_and_unlink_removes_the_file(host: str, tmp_path: Path) -> None:
    result = do_link(host, tmp_path, tmp_path / "backups")
    assert result.changed and result.path == mcp_config_path(host, tmp_path, False)
    entry = server_entry(host, result.path)
    assert entry["command"] == CMD and entry["args"][0] == "mcp"
    assert not do_link(host, tmp_path, tmp_path / "backups").changed  # idempotent
    assert do_unlink(host, tmp_path, tmp_path / "backups").changed
    assert not result.path.exists()
    assert result.path.parent == tmp_path or not result.path.parent.exists()  # the folder link made goes too
    assert not config_path(host, tmp_path, False).exists()  # and the hooks


def test_each_host_reads_its_own_file(tmp_path: Path) -> None:
    paths = {host: mcp_config_path(host, tmp_path, False).relative_to(tmp_path).as_posix() for host in HOSTS}
    assert paths == {"claude": ".mcp.json", "codex": ".codex/config.toml", "gemini": ".gemini/settings.json",
                     "cursor": ".cursor/mcp.json"}  # fmt: skip
    assert mcp_config_path("claude", tmp_path, True, home=tmp_path / "home") == tmp_path / "home" / ".claude.json"


def test_cursor_points_the_server_at_its_workspace_folder(tmp_path: Path) -> None:
    project = do_link("cursor", tmp_path, tmp_path / "backups")
    assert server_entry("cursor", project.path) == {"type": "stdio", "command": CMD,
                                                    "args": ["mcp", "--project", "${workspaceFolder}"]}  # fmt: skip
    user = do_link("cursor", tmp_path, tmp_path / "home-backups", global_=True, home=tmp_path / "home")
    assert server_entry("cursor", user.path)["args"] == ["mcp"]  # the user's file serves every folder


@pytest.mark.parametrize("host", HOSTS)
def test_an_existing_config_keeps_its_entries_and_comes_back_byte_for_byte(host: str, tmp_path: Path) -> None:
    path = mcp_config_path(host, tmp_path, False)
    path.parent.mkdir(parents=True, exist_ok=True)
    original = EXISTING[HOSTS[host].mcp_file.format]
    path.write_bytes(original)
    do_link(host, tmp_path, tmp_path / "backups")
    text = path.read_text()
    assert "other-server" in text and server_entry(host, path)["command"] == CMD
    do_unlink(host, tmp_path, tmp_path / "backups")
    assert path.read_bytes() == original


@pytest.mark.parametrize("host", HOSTS)
def test_a_later_edit_is_kept_when_unlink_takes_the_server_out(host: str, tmp_path: Path) -> None:
    path = mcp_config_path(host, tmp_path, False)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(EXISTING[HOSTS[host].mcp_file.format])
    do_link(host, tmp_path, tmp_path / "backups")
    edited = path.read_text().replace("other-server", "renamed-server")
    path.write_text(edited)
    assert do_unlink(host, tmp_path, tmp_path / "backups").changed
    after = path.read_text()
    assert "renamed-server" in after and CMD not in after


@pytest.mark.parametrize("host", HOSTS)
def test_a_server_named_engram_that_engram_did_not_write_is_left_alone(host: str, tmp_path: Path) -> None:
    path = mcp_config_path(host, tmp_path, False)
    path.parent.mkdir(parents=True, exist_ok=True)
    theirs = (b'[mcp_servers.engram]\ncommand = "their-tool"\n' if HOSTS[host].mcp_file.format == "toml"
              else b'{"mcpServers": {"engram": {"command": "their-tool"}}}\n')  # fmt: skip
    path.write_bytes(theirs)
    with pytest.raises(LinkError, match="engram did not write"):
        do_link(host, tmp_path, tmp_path / "backups")
    assert list(tmp_path.rglob("*.json")) == ([path] if path.suffix == ".json" else [])  # no hooks: all or nothing
    assert not do_unlink(host, tmp_path, tmp_path / "backups").changed
    assert path.read_bytes() == theirs


def test_a_broken_or_inline_toml_is_left_untouched(tmp_path: Path) -> None:
    path = mcp_config_path("codex", tmp_path, False)
    path.parent.mkdir(parents=True)
    for text, message in (
        (b"model = \n", "not valid TOML"),
        (b'mcp_servers = { other = { command = "x" } }\n', "by hand"),
    ):
        path.write_bytes(text)
        with pytest.raises(LinkError, match=message):
            do_link("codex", tmp_path, tmp_path / "backups")
        assert path.read_bytes() == text


def test_gemini_hooks_and_server_share_one_file_and_both_come_out(tmp_path: Path) -> None:
    path = tmp_path / ".gemini" / "settings.json"
    path.parent.mkdir()
    original = b'{"ui": {"theme": "dark"}}'
    path.write_bytes(original)
    backups = tmp_path / "backups"
    link("gemini", tmp_path, engram_command=CMD, backup_dir=backups)
    hooks, server = link("gemini", tmp_path, engram_command=CMD, backup_dir=backups, mcp=True)
    assert hooks.path == server.path == path and hooks.changed and server.changed  # the server went in
    data = json.loads(path.read_text())
    assert data["ui"] == {"theme": "dark"} and "hooks" in data and "engram" in data["mcpServers"]
    do_unlink("gemini", tmp_path, backups)
    assert path.read_bytes() == original

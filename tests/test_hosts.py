"""The host family: what `link` installs is what `hook` handles, for every host."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engram import hook
from engram.hosts import HOSTS, host_named
from engram.link import link


def linked_events(host: str, tmp_path: Path) -> dict[str, list[str | None]]:
    """Event name -> the matchers of engram's entries, read back from the file `link` wrote."""
    [result] = link(host, tmp_path, engram_command="/opt/engram", backup_dir=tmp_path / "backups")
    hooks = json.loads(result.path.read_text())["hooks"]
    return {event: [entry.get("matcher") for entry in entries] for event, entries in hooks.items()}


@pytest.mark.parametrize("host", HOSTS)
def test_link_installs_exactly_the_events_the_hook_handles(host: str, tmp_path: Path) -> None:
    installed = linked_events(host, tmp_path)
    handled = {event for event, action in HOSTS[host].actions.items() if action in hook.ACTIONS}
    assert set(installed) == handled == set(HOSTS[host].actions)
    assert all(len(matchers) == 1 for matchers in installed.values())


@pytest.mark.parametrize("host", [name for name, h in HOSTS.items() if "file" in h.actions.values()])
def test_every_tool_the_file_matcher_names_gives_a_path(host: str, tmp_path: Path) -> None:
    """A matcher naming a tool the payload parser ignores would run the hook for nothing."""
    event = next(e for e in HOSTS[host].events if e.action == "file")
    tools = re.sub(r"[\^$]", "", event.matcher).split("|")
    for tool in tools:
        payload = {
            "tool_name": tool,
            "tool_input": {
                "file_path": "src/a.py",
                "notebook_path": "src/a.ipynb",
                "command": "*** Begin Patch\n*** Add File: src/a.py\n*** End Patch",
            },
        }
        assert HOSTS[host].file_paths(payload), (host, tool)


def test_aliases_name_their_host() -> None:
    assert host_named("claude-code") is HOSTS["claude"]
    assert host_named("windsurf") is None

"""Gemini CLI 0.61.0 against the mock model, with the hooks `engram link gemini` writes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import harness
from harness import APIERR_BODY, RELEASE_BODY, SESSION_BODY, WEB_BODY, copies

APIERR, RELEASE, SESSION, WEB = (body.split()[0] for body in (APIERR_BODY, RELEASE_BODY, SESSION_BODY, WEB_BODY))


class Gemini:
    def __init__(self, folder: Path, engram: str, session: bool = True) -> None:
        self.mock = harness.Mock(folder / "mock")
        env = harness.base_env(folder / "home")
        self.project = harness.make_project(folder / "project", engram, env, session=session)
        assert harness.run([engram, "link", "gemini", "--mcp"], self.project, env).returncode == 0
        self.env = harness.gemini_env(folder / "home", self.mock, [self.project])

    def prompt(self, text: str, *flags: str) -> tuple[str, list[dict]]:
        since = self.mock.mark()
        command = [
            str(harness.host_bin("gemini")),
            "-m",
            "gemini-2.5-flash",
            "--output-format",
            "json",
            *flags,
            "-p",
            text,
        ]
        done = harness.run(command, self.project, self.env)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout)["session_id"], self.mock.requests("gemini", since)


@pytest.fixture(scope="module")
def gemini(hosts_installed: None, engram_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gemini]:
    yield from harness.serving(Gemini(tmp_path_factory.mktemp("gemini"), engram_bin))


@pytest.fixture(scope="module")
def gemini_no_session_memory(
    hosts_installed: None, engram_bin: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Gemini]:
    yield from harness.serving(Gemini(tmp_path_factory.mktemp("gemini"), engram_bin, session=False))


def test_prompt_routes_without_the_session_context_gemini_prepends(gemini: Gemini) -> None:
    """Gemini puts SessionStart's context in front of the prompt (`<hook_context>`); BeforeAgent still routes."""
    session, requests = gemini.prompt("how do I cut a release?")
    assert copies(requests[-1], SESSION) == 1
    assert copies(requests[-1], RELEASE) == 1
    # PreCompress fired before the model call, without any compression: the set is intact
    assert harness.delivered(gemini.project, "gemini")[session] == {
        "workspace:session-notes",
        "workspace:release-checklist",
    }


def test_resume_sends_again_only_what_the_restored_history_lost(gemini: Gemini) -> None:
    """A resumed history leaves out a prompt that starts with `<hook_context>` (the first one here), and with it
    both bodies: each comes again, once."""
    _, requests = gemini.prompt("ship it: cut a release now", "--resume", "latest")
    assert copies(requests[-1], RELEASE) == 1 and copies(requests[-1], SESSION) == 1


def test_resume_and_a_second_turn_get_already_loaded(gemini_no_session_memory: Gemini) -> None:
    host = gemini_no_session_memory
    _, requests = host.prompt("how do I cut a release?")
    assert copies(requests[-1], RELEASE) == 1
    _, requests = host.prompt("ship it: cut a release now", "--resume", "latest")
    assert copies(requests[-1], RELEASE) == 1  # from the restored first turn
    assert "already loaded: release-checklist" in harness.body_text(requests[-1])


def test_resume_in_a_later_minute_keeps_what_the_history_holds(
    engram_bin: str, hosts_installed: None, tmp_path: Path
) -> None:
    """Gemini names a session's file by the minute it started. A resume in a later minute first records into a
    new file of that minute (the hook's `transcript_path`), then goes back to the old one; the history is in the
    old one. Renaming the first file to an earlier minute makes every run cross a minute."""
    for host in harness.serving(Gemini(tmp_path, engram_bin, session=False)):
        _, requests = host.prompt("how do I cut a release?")
        assert copies(requests[-1], RELEASE) == 1
        (recorded,) = (tmp_path / "home/.gemini/tmp").glob("*/chats/session-*.jsonl")
        recorded.rename(recorded.with_name("session-2000-01-01T00-00-" + recorded.name.rsplit("-", 1)[1]))
        _, requests = host.prompt("ship it: cut a release now", "--resume", "latest")
        assert copies(requests[-1], RELEASE) == 1  # from the restored first turn
        assert "already loaded: release-checklist" in harness.body_text(requests[-1])


def test_read_file_and_write_file_route_applies_to_memories(gemini: Gemini) -> None:
    gemini.mock.configure(scripts={"zqxfiles": [
        {"tool": "read_file", "input": {"file_path": str(gemini.project / "src/api/handler.py")}},
        {"tool": "write_file", "input": {"file_path": str(gemini.project / "src/web/new_page.py"), "content": "X = 1\n"}},
    ]})  # fmt: skip
    _, requests = gemini.prompt("look at these files zqxfiles", "--yolo")
    assert len(requests) == 3 and copies(requests[0], APIERR) == 0
    assert copies(requests[1], APIERR) == 1 and copies(requests[1], WEB) == 0
    assert copies(requests[2], WEB) == 1 and (gemini.project / "src/web/new_page.py").exists()


def test_the_model_calls_the_mcp_route_tool(gemini_no_session_memory: Gemini) -> None:
    """`link --mcp` put `engram mcp` under mcpServers in .gemini/settings.json; --yolo approves the call."""
    host = gemini_no_session_memory
    host.mock.configure(
        scripts={"zqxmcp": [{"tool": "mcp_engram_route", "input": {"task": "how do I cut a release?"}}]}
    )
    _, requests = host.prompt("check the project memories zqxmcp", "--yolo")
    offered = {d["name"] for tool in requests[0]["body"]["tools"] for d in tool.get("functionDeclarations", [])}
    assert {"mcp_engram_route", "mcp_engram_fetch", "mcp_engram_cards"} <= offered
    assert len(requests) == 2 and copies(requests[0], RELEASE) == 0
    responses = [
        p["functionResponse"] for c in requests[1]["body"]["contents"] for p in c["parts"] if "functionResponse" in p
    ]
    assert responses and copies({"body": responses}, RELEASE) == 1


def test_a_real_compression_is_no_reset(gemini: Gemini) -> None:
    """Usage over half the window: Gemini compresses after the tool call. Its PreCompress looks like every other
    (trigger auto), so engram keeps the delivered set (docs/hosts.md says why)."""
    gemini.mock.configure(
        prompt_tokens=900_000,
        scripts={"zqxsquash": [{"tool": "read_file", "input": {"file_path": str(gemini.project / "src/web/page.py")}}]},
    )
    since = gemini.mock.mark()
    try:
        session, _ = gemini.prompt("look again zqxsquash", "--resume", "latest")
    finally:
        gemini.mock.configure(prompt_tokens=10)
    assert any("state_snapshot" in harness.body_text(e) for e in gemini.mock.entries(since))  # Gemini compressed
    # AfterTool delivered web-pages just before the PreCompress that compressed
    assert "workspace:web-pages" in harness.delivered(gemini.project, "gemini")[session]

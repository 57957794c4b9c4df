"""Claude Code 2.1.197 against the mock model, with the hooks `engram link claude` writes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import harness
from harness import APIERR_BODY, RELEASE_BODY, SESSION_BODY, WEB_BODY, copies

APIERR, RELEASE, SESSION, WEB = (body.split()[0] for body in (APIERR_BODY, RELEASE_BODY, SESSION_BODY, WEB_BODY))


class Claude:
    """One project linked for Claude, its mock model, and the sessions the tests share."""

    def __init__(self, folder: Path, engram: str, path_rules: str) -> None:
        self.mock = harness.Mock(folder / "mock")
        self.env = harness.claude_env(folder / "home", self.mock)
        self.project = harness.make_project(folder / "project", engram, self.env, path_rules)
        # linked after `engram index`, as a newcomer does: link itself writes the host's rule files
        assert harness.run([engram, "link", "claude", "--mcp"], self.project, self.env).returncode == 0
        self.sessions: dict[str, str] = {}

    def run(self, *args: str, stdin: str | None = None) -> tuple[harness.Done, list[dict]]:
        """`claude -p ARGS`, and the agent-loop requests the mock got during it."""
        since = self.mock.mark()
        done = harness.run([str(harness.host_bin("claude")), "-p", *args], self.project, self.env, stdin=stdin)
        assert done.returncode == 0, done.stderr[-2000:]
        return done, self.mock.requests("anthropic", since)

    def prompt(self, text: str, *flags: str) -> tuple[str, list[dict]]:
        done, requests = self.run(text, "--output-format", "json", *flags)
        return json.loads(done.stdout)["session_id"], requests

    def script(self, **scripts: list[dict]) -> None:
        self.mock.configure(scripts={**self.mock.settings["scripts"], **scripts})

    def path(self, rel: str) -> str:
        return str(self.project / rel)


@pytest.fixture(scope="module")
def claude(hosts_installed: None, engram_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Claude]:
    yield from harness.serving(Claude(tmp_path_factory.mktemp("claude"), engram_bin, "native"))


@pytest.fixture(scope="module")
def claude_hook_rules(
    hosts_installed: None, engram_bin: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Claude]:
    yield from harness.serving(Claude(tmp_path_factory.mktemp("claude-hook"), engram_bin, "hook"))


def test_session_start_and_prompt_context_reach_the_model(claude: Claude) -> None:
    session, requests = claude.prompt("how do I cut a release?")
    claude.sessions["release"] = session
    assert copies(requests[-1], SESSION) == 1  # SessionStart: the memory tagged `always`
    assert copies(requests[-1], RELEASE) == 1  # UserPromptSubmit: the routed memory


def test_resume_keeps_the_delivered_set(claude: Claude) -> None:
    """The restored transcript holds the release body already: no second copy, `already loaded` instead."""
    _, requests = claude.prompt("ship it: cut a release now", "--resume", claude.sessions["release"])
    assert copies(requests[-1], RELEASE) == 1
    assert copies(requests[-1], SESSION) == 1
    assert "already loaded: release-checklist" in harness.body_text(requests[-1])


def test_a_second_prompt_in_one_session_gets_already_loaded(claude: Claude) -> None:
    lines = [json.dumps({"type": "user", "message": {"role": "user", "content": text}})
             for text in ("how do I cut a release?", "ship it: cut a release now")]  # fmt: skip
    _, requests = claude.run("--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
                             stdin="\n".join(lines) + "\n")  # fmt: skip
    assert len(requests) == 2
    assert copies(requests[-1], RELEASE) == 1
    assert "already loaded: release-checklist" in harness.body_text(requests[-1])


def test_native_rule_file_loads_on_read_and_instructions_loaded_marks_it(claude: Claude) -> None:
    # Claude runs InstructionsLoaded hooks in the background: a model's pause lets it finish before `-p` exits
    claude.mock.configure(result_delay=5)
    claude.script(zqxread=[{"tool": "Read", "input": {"file_path": claude.path("src/api/handler.py")}}])
    session, requests = claude.prompt("summarize this file zqxread")
    claude.mock.configure(result_delay=0)
    assert len(requests) == 2 and copies(requests[0], APIERR) == 0  # the prompt alone routes nothing
    assert "rules/engram/api-errors.md" in harness.body_text(requests[1]) and copies(requests[1], APIERR) == 1
    assert "workspace:api-errors" in harness.delivered(claude.project, "claude")[session]


def test_compaction_resets_and_a_subagent_gets_its_own_pack(claude: Claude) -> None:
    session = claude.sessions["release"]
    _, summary = claude.run("--resume", session, "/compact", "--output-format", "json")
    # PreCompact and SessionStart(compact): only the `always` memory is delivered again
    assert harness.delivered(claude.project, "claude")[session] == {"workspace:session-notes"}
    agent = {
        "description": "look around",
        "prompt": "zqxlook around the repository",
        "subagent_type": "general-purpose",
    }
    claude.script(zqxagent=[{"tool": "Agent", "input": agent}])
    _, requests = claude.prompt("cut a release now zqxagent", "--resume", session)
    main = [r for r in requests if "zqxagent" in harness.body_text(r)]
    subagent = [r for r in requests if "zqxagent" not in harness.body_text(r)]
    assert copies(main[0], RELEASE) == 1  # compaction dropped it, so it comes again
    assert subagent and "SubagentStart" in harness.body_text(subagent[0]) and copies(subagent[0], RELEASE) == 1


def test_the_model_calls_the_mcp_route_tool(claude: Claude) -> None:
    """`link --mcp` registered `engram mcp` in .mcp.json: Claude starts it and offers its tools."""
    claude.script(zqxmcp=[{"tool": "mcp__engram__route", "input": {"task": "how do I cut a release?"}}])
    _, requests = claude.prompt("check the project memories zqxmcp", "--allowedTools", "mcp__engram__route")
    offered = {tool["name"] for tool in requests[0]["body"]["tools"]}
    assert {"mcp__engram__route", "mcp__engram__fetch", "mcp__engram__cards"} <= offered
    assert len(requests) == 2 and copies(requests[0], RELEASE) == 0  # the prompt alone routes nothing
    result = [block for message in requests[1]["body"]["messages"] for block in message["content"]
              if isinstance(block, dict) and block.get("type") == "tool_result"]  # fmt: skip
    # Claude Code gives the model the tool's structured content (ids, tiers, texts) rather than its text
    routed = json.loads(result[0]["content"])
    assert [(e["id"], e["shown"]) for e in routed["entries"]] == [("release-checklist", "body")]
    assert RELEASE in routed["entries"][0]["text"]


def test_hook_rules_read_and_write_events(claude_hook_rules: Claude) -> None:
    host = claude_hook_rules
    host.script(zqxfiles=[
        {"tool": "Read", "input": {"file_path": host.path("src/api/handler.py")}},
        {"tool": "Write", "input": {"file_path": host.path("src/web/new_page.py"), "content": "X = 1\n"}},
    ])  # fmt: skip
    _, requests = host.prompt("look at these files zqxfiles", "--permission-mode", "acceptEdits")
    assert not (host.project / ".claude" / "rules" / "engram").exists()
    assert len(requests) == 3 and copies(requests[0], APIERR) == 0
    assert "PreToolUse:Read hook additional context" in harness.body_text(requests[1])
    assert copies(requests[1], APIERR) == 1 and copies(requests[1], WEB) == 0
    assert copies(requests[2], WEB) == 1 and (host.project / "src/web/new_page.py").exists()


@pytest.fixture(scope="module")
def claude_watched(
    hosts_installed: None, engram_bin: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Claude]:
    """A linked project with `engram watch` running in it."""
    host = Claude(tmp_path_factory.mktemp("claude-watched"), engram_bin, "native")
    with harness.watching(engram_bin, host.project, host.env):
        yield from harness.serving(host)


def test_with_engram_watch_running_the_hooks_are_answered_by_it_and_see_an_edit_at_once(claude_watched: Claude) -> None:
    host = claude_watched
    _, requests = host.prompt("how do I cut a release?")
    assert copies(requests[-1], SESSION) == 1 and copies(requests[-1], RELEASE) == 1
    harness.edit_release_rule(host.project, "WATCHEDIT")
    _, requests = host.prompt("how do I cut a release?")  # a new session, right after the edit
    assert "WATCHEDIT" in harness.body_text(requests[-1])
    served = (host.project.parent / harness.WATCH_LOG).read_text().count(harness.SERVED)
    assert served >= 4  # two sessions' start and prompt


@pytest.fixture(scope="module")
def claude_self_watched(
    hosts_installed: None, engram_bin: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Claude]:
    """A linked project whose config has the hooks start `engram watch` (`hooks.start_watch`)."""
    host = Claude(tmp_path_factory.mktemp("claude-self-watched"), engram_bin, "native")
    config_path = host.project / ".agents" / ".engram" / "engram.config.json"
    config = json.loads(config_path.read_text())
    config["hooks"]["start_watch"] = True
    config_path.write_text(json.dumps(config), encoding="utf-8")
    host.sessions["watcher"] = ""  # the pid of the watcher the hooks start, once the test has read it
    try:
        yield from harness.serving(host)
    finally:
        stamp = host.project / ".agents" / ".engram" / ".watch.started"
        pid = host.sessions["watcher"] or (stamp.read_text() if stamp.exists() else "")
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pid), signal.SIGTERM)


def test_with_start_watch_the_first_hook_starts_a_watcher_that_answers_the_next_session(
    claude_self_watched: Claude,
) -> None:
    host = claude_self_watched
    root = host.project / ".agents" / ".engram"
    _, requests = host.prompt("how do I cut a release?")  # returns: Claude Code waits for no watcher
    assert copies(requests[-1], SESSION) == 1 and copies(requests[-1], RELEASE) == 1
    pid = int((root / ".watch.started").read_text())
    host.sessions["watcher"] = str(pid)
    os.kill(pid, 0)  # running
    deadline = time.monotonic() + 15
    while not (root / "watch.sock").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    (root / ".watch.started").unlink()  # a hook run without the watcher would start another
    harness.edit_release_rule(host.project, "SELFWATCHEDIT")
    _, requests = host.prompt("how do I cut a release?")  # a new session, right after the edit
    assert "SELFWATCHEDIT" in harness.body_text(requests[-1])
    assert not (root / ".watch.started").exists()  # every hook of it was answered by the watcher

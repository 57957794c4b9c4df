"""Codex CLI 0.171.0 against the mock model, with the hooks `engram link codex` writes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import harness
from harness import APIERR_BODY, RELEASE_BODY, SESSION_BODY, copies

APIERR, RELEASE, SESSION = (body.split()[0] for body in (APIERR_BODY, RELEASE_BODY, SESSION_BODY))
PATCH = "*** Begin Patch\n*** Add File: src/api/generated.py\n+VALUE = 1\n*** End Patch\n"


class Codex:
    def __init__(self, folder: Path, engram: str) -> None:
        self.folder = folder
        self.mock = harness.Mock(folder / "mock")
        self.project = harness.make_project(folder / "project", engram, harness.base_env(folder / "home"))
        assert harness.run([engram, "link", "codex"], self.project, harness.base_env(folder / "home")).returncode == 0
        self.configure()
        self.sessions: dict[str, str] = {}

    def configure(self, extra_config: str = "") -> None:
        self.env = harness.codex_env(self.folder / "home", self.mock, self.project, extra_config)

    def exec(self, *args: str) -> tuple[str | None, list[dict]]:
        """`codex exec ARGS` (hooks trusted for the run, the config as link wrote it), its session id and requests."""
        since = self.mock.mark()
        command = [str(harness.host_bin("codex")), "exec", "--skip-git-repo-check",
                   "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust", *args]  # fmt: skip
        done = harness.run(command, self.project, self.env)
        assert done.returncode == 0, done.stderr[-2000:]
        session = next((line.split()[-1] for line in done.stderr.splitlines() if line.startswith("session id: ")), None)
        return session, self.mock.requests("responses", since)


@pytest.fixture(scope="module")
def codex(hosts_installed: None, engram_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Codex]:
    yield from harness.serving(Codex(tmp_path_factory.mktemp("codex"), engram_bin))


def test_session_start_and_prompt_context_reach_the_model(codex: Codex) -> None:
    session, requests = codex.exec("how do I cut a release?")
    assert session
    codex.sessions["release"] = session
    assert copies(requests[-1], SESSION) == 1 and copies(requests[-1], RELEASE) == 1


def test_apply_patch_paths_route_applies_to_memories(codex: Codex) -> None:
    codex.mock.configure(scripts={"zqxpatch": [{"tool": "apply_patch", "input": PATCH}]})
    _, requests = codex.exec("add a module zqxpatch")
    assert (codex.project / "src/api/generated.py").exists()
    assert len(requests) == 2 and copies(requests[0], APIERR) == 0
    assert copies(requests[1], APIERR) == 1


def test_resume_keeps_the_delivered_set(codex: Codex) -> None:
    _, requests = codex.exec("resume", codex.sessions["release"], "ship it: cut a release now")
    assert copies(requests[-1], RELEASE) == 1
    assert "already loaded: release-checklist" in harness.body_text(requests[-1])


def test_auto_compaction_resets_the_delivered_set(codex: Codex) -> None:
    """Usage over model_auto_compact_token_limit after a tool call: Codex compacts mid-turn, firing PreCompact
    and SessionStart(compact), so only the `always` memory is delivered again."""
    session = codex.sessions["release"]
    patch = PATCH.replace("generated.py", "compacted.py")
    codex.mock.configure(prompt_tokens=9000, scripts={"zqxsquash": [{"tool": "apply_patch", "input": patch}]})
    codex.configure("model_auto_compact_token_limit = 5000\n")
    since = codex.mock.mark()
    try:
        codex.exec("resume", session, "add another module zqxsquash")
    finally:
        codex.mock.configure(prompt_tokens=10)
        codex.configure()
    assert any("context_limit" in harness.body_text(e) for e in codex.mock.entries(since))  # Codex compacted
    assert harness.delivered(codex.project, "codex")[session] == {"workspace:session-notes"}


def test_with_engram_watch_running_the_hooks_are_answered_by_it_and_see_an_edit_at_once(
    hosts_installed: None, engram_bin: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    host = Codex(tmp_path_factory.mktemp("codex-watched"), engram_bin)
    try:
        with harness.watching(engram_bin, host.project, host.env):
            _, requests = host.exec("how do I cut a release?")
            assert copies(requests[-1], SESSION) == 1 and copies(requests[-1], RELEASE) == 1
            harness.edit_release_rule(host.project, "WATCHEDIT")
            _, requests = host.exec("how do I cut a release?")
            assert "WATCHEDIT" in harness.body_text(requests[-1])
        assert (host.project.parent / harness.WATCH_LOG).read_text().count(harness.SERVED) >= 4
    finally:
        host.mock.stop()

"""The hook on payloads recorded from the real hosts (tests/hosts/<host>/*.json, see tests/e2e).

The recordings hold `{project}` and `{home}` where the recorded paths were; each
test fills in its own project. Every call runs `engram hook` on a real project.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

RECORDED = Path(__file__).parent / "hosts"
RELEASE = "BODYMARK-RELEASE bump the version, run the tests, then tag and push."
SESSION = "BODYMARK-SESSION the default branch is main and CI runs make test."
APIERR = "BODYMARK-APIERR handlers return problem+json errors with type, title and status."


def recorded(host: str, name: str, project: Path, **changes: object) -> dict:
    text = (RECORDED / host / f"{name}.json").read_text(encoding="utf-8")
    payload = json.loads(text.replace("{project}", str(project)).replace("{home}", str(Path(project).parent / "home")))
    return {**payload, **changes}


@pytest.fixture
def hosts_project(project: Path, write_memory, run_engram) -> Path:
    """The memories the e2e suite uses, indexed."""
    write_memory(project, "rules/release-checklist.md", {"id": "release-checklist", "tags": ["release", "deploy"],
                 "directive": "Run the release checklist before tagging a release.",
                 "triggers": ["cut a release", "ship it"]}, f"# Release\n\n## Content\n- {RELEASE}\n")  # fmt: skip
    write_memory(project, "rules/api-errors.md", {"id": "api-errors", "tags": ["api", "errors"],
                 "directive": "API handlers return problem+json errors.", "applies_to": ["src/api/**"]},
                 f"# API errors\n\n## Content\n- {APIERR}\n")  # fmt: skip
    write_memory(
        project,
        "knowledge/session-notes.md",
        {"id": "session-notes", "tags": ["always"]},
        f"# Session notes\n\n## Content\n- {SESSION}\n",
    )
    assert run_engram(["index"], project).returncode == 0
    return project


@pytest.fixture
def hook(hosts_project: Path, run_engram):
    def call(host: str, payload: dict) -> str:
        done = run_engram(["hook", "--host", host], hosts_project, input=json.dumps(payload))
        assert done.returncode == 0
        out = json.loads(done.stdout)
        return out.get("hookSpecificOutput", {}).get("additionalContext", "") if out else ""

    return call


def delivered(project: Path, host: str) -> set[str]:
    with sqlite3.connect(project / ".agents" / ".engram" / "state.db") as conn:
        return {row[0] for row in conn.execute("SELECT memory FROM delivered WHERE host = ? AND agent = ''", (host,))}


def test_gemini_prompt_routes_without_the_prepended_session_context(hook, hosts_project: Path) -> None:
    payload = recorded("gemini", "before_agent", hosts_project)
    assert payload["prompt"].startswith("<hook_context>loaded 1 memory files")  # as Gemini 0.61.0 sends it
    text = hook("gemini", payload)
    assert RELEASE in text and SESSION not in text
    bare = hook("gemini", {**payload, "session_id": "other", "prompt": "how do I cut a release? zqxread"})
    assert text == bare


def test_engram_output_pasted_into_a_prompt_is_not_routed(hook, hosts_project: Path, run_engram) -> None:
    pasted = run_engram(["load", "api handler errors"], hosts_project).stdout
    assert pasted.startswith("loaded 1 memory files") and APIERR in pasted
    payload = recorded("claude", "user_prompt_submit", hosts_project, prompt=f"{pasted}\nhow do I cut a release?")
    text = hook("claude", payload)
    assert (
        text.startswith("loaded 1 memory files / 1 total related memories") and RELEASE in text and APIERR not in text
    )
    only_pack = recorded("claude", "user_prompt_submit", hosts_project, prompt=pasted, session_id="other")
    assert hook("claude", only_pack) == ""


def test_gemini_pre_compress_resets_only_a_manual_compress(hook, hosts_project: Path) -> None:
    hook("gemini", recorded("gemini", "session_start_startup", hosts_project))
    hook("gemini", recorded("gemini", "before_agent", hosts_project))
    kept = {"workspace:session-notes", "workspace:release-checklist"}
    assert delivered(hosts_project, "gemini") == kept
    assert hook("gemini", recorded("gemini", "pre_compress_auto", hosts_project)) == ""
    assert delivered(hosts_project, "gemini") == kept  # fired before the model call, no compression
    again = hook("gemini", recorded("gemini", "before_agent", hosts_project))
    assert "already loaded: release-checklist" in again and RELEASE not in again
    hook("gemini", recorded("gemini", "pre_compress_auto", hosts_project, trigger="manual"))
    assert delivered(hosts_project, "gemini") == set()


@pytest.mark.parametrize("host, prompt_event", [("claude", "user_prompt_submit"), ("codex", "user_prompt_submit"),
                                                ("gemini", "before_agent")])  # fmt: skip
def test_resume_keeps_the_delivered_set(hook, hosts_project: Path, host: str, prompt_event: str) -> None:
    assert SESSION in hook(host, recorded(host, "session_start_startup", hosts_project))
    assert RELEASE in hook(host, recorded(host, prompt_event, hosts_project, prompt="how do I cut a release?"))
    assert hook(host, recorded(host, "session_start_resume", hosts_project)) == ""  # the transcript holds both
    again = hook(host, recorded(host, prompt_event, hosts_project, prompt="ship it: cut a release now"))
    assert "already loaded: release-checklist" in again and RELEASE not in again


def test_clear_and_compaction_reset_the_delivered_set(hook, hosts_project: Path) -> None:
    prompt = recorded("claude", "user_prompt_submit", hosts_project, prompt="how do I cut a release?")
    hook("claude", recorded("claude", "session_start_startup", hosts_project))
    hook("claude", prompt)
    assert hook("claude", recorded("claude", "pre_compact_manual", hosts_project)) == ""
    assert SESSION in hook("claude", recorded("claude", "session_start_compact", hosts_project))
    assert RELEASE in hook("claude", prompt)
    assert SESSION in hook("claude", recorded("claude", "session_start_startup", hosts_project, source="clear"))
    assert delivered(hosts_project, "claude") == {"workspace:session-notes"}


def test_gemini_resume_sends_again_what_the_restored_history_leaves_out(
    hook, hosts_project: Path, tmp_path: Path
) -> None:
    """Gemini rebuilds a resumed history without the prompts that start with `<hook_context>`: the first prompt here,
    which held both bodies (its transcript recorded after one turn)."""
    text = (RECORDED / "gemini" / "transcript_first_turn.jsonl").read_text(encoding="utf-8")
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text(text.replace("{project}", str(hosts_project)), encoding="utf-8")
    hook("gemini", recorded("gemini", "session_start_startup", hosts_project))
    hook("gemini", recorded("gemini", "before_agent", hosts_project))
    resumed = hook("gemini", recorded("gemini", "session_start_resume", hosts_project, transcript_path=str(transcript)))
    assert SESSION in resumed
    assert delivered(hosts_project, "gemini") == {"workspace:session-notes"}
    again = hook("gemini", recorded("gemini", "before_agent", hosts_project, prompt="ship it: cut a release now"))
    assert RELEASE in again


def test_a_gemini_resume_in_a_later_minute_reads_the_history_from_the_first_file(
    hook, hosts_project: Path, tmp_path: Path
) -> None:
    """Gemini names a session's file by the minute it started: resumed in a later minute, it records into a new file
    (the payload's path, its own first message only) and restores the history from the old one, where the first
    turn's release body is (recorded by the e2e run that found this)."""
    chats = tmp_path / "chats"
    chats.mkdir()
    for name, fixture in (("2000-01-01T00-00", "earlier_minute"), ("2026-12-02T02-04", "later_minute")):
        text = (RECORDED / "gemini" / f"transcript_{fixture}.jsonl").read_text(encoding="utf-8")
        (chats / f"session-{name}-1487ebbf.jsonl").write_text(text, encoding="utf-8")
    hook("gemini", recorded("gemini", "session_start_startup", hosts_project))
    hook("gemini", recorded("gemini", "before_agent", hosts_project))
    later = str(chats / "session-2026-12-02T02-04-1487ebbf.jsonl")
    resumed = hook("gemini", recorded("gemini", "session_start_resume", hosts_project, transcript_path=later))
    assert SESSION in resumed  # its block was in the first prompt, which a resumed history leaves out
    again = hook("gemini", recorded("gemini", "before_agent", hosts_project, prompt="ship it: cut a release now"))
    assert "already loaded: release-checklist" in again and RELEASE not in again


def test_a_gemini_transcript_that_is_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    """A transcript path that names a FIFO (or anything but a file) reads as unknown: nothing is forgotten."""
    from engram.hosts import gemini

    fifo = tmp_path / "session-2026-12-02T02-04-1487ebbf.jsonl"
    os.mkfifo(fifo)
    assert gemini.restored_text({"transcript_path": str(fifo)}) is None


def test_a_gemini_transcript_is_read_the_same_among_many_lines_that_hold_no_message(tmp_path: Path) -> None:
    """Only the lines with a message key are parsed (a corrupt recording of millions of `{}` lines took 28 s);
    what is restored is the same as without them."""
    from engram.hosts import gemini

    text = (RECORDED / "gemini" / "transcript_first_turn.jsonl").read_text(encoding="utf-8")
    plain, padded = tmp_path / "session-a-1.jsonl", tmp_path / "session-b-2.jsonl"
    plain.write_text(text, encoding="utf-8")
    padded.write_text("{}\n" * 300_000 + text + '\n{"type": "user"}', encoding="utf-8")
    restored = gemini.restored_text({"transcript_path": str(plain)})
    assert restored == '["MOCK-REPLY 1"]'  # the first prompt, with its hook context, is left out on resume
    assert gemini.restored_text({"transcript_path": str(padded)}) == restored


def test_gemini_message_lines_keep_the_file_order_once_each() -> None:
    from engram.hosts import gemini

    text = '{"$set": {"messages": []}, "content": 1}\n{}\nnoise\n{"id": 2, "content": "x"}'
    assert gemini.message_lines(text) == ['{"$set": {"messages": []}, "content": 1}', '{"id": 2, "content": "x"}']

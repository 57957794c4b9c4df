"""`engram load` stays stdlib-only at run time; the compiler loads only when an index is stale."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from helpers import engram_env

pytestmark = pytest.mark.installed  # what a fresh interpreter imports: only a process of its own shows it

# The MCP SDK and what it pulls in (pydantic, anyio, starlette, httpx) serve `engram mcp` only.
HEAVY = ("typer", "rich", "sqlite_utils", "yaml", "pathspec", "pydantic", "mcp", "anyio", "starlette", "httpx")
# pathlib and what it imports (about 8 ms): `load` and hooks use string paths. The indexer and
# the typer commands still use pathlib (generated rule files, host configs).
PATHLIB = ("pathlib", "urllib.parse")
# Standard modules the read path does without: each costs milliseconds of every start-up.
# The parser and its patterns (about 2.5 ms): the read path checks stored rows with `memory_format`.
PARSER = ("engram.parse",)
START_UP = ("dataclasses", "typing", "inspect", "argparse", "shutil", "locale", "copy", *PATHLIB, *PARSER)

PROBE = """
import io, json, sys
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[2].encode()))
sys.argv = ["engram", *json.loads(sys.argv[1])]
real_stdout = sys.stdout
sys.stdout = io.StringIO()
from engram.entry import main
try:
    main()
except SystemExit:
    pass
loaded = [m for m in {heavy!r} + {start_up!r} if m in sys.modules]
safety = sys.modules.get("engram.safety")
compiled = [name for name, value in vars(safety).items() if type(value).__name__ == "LazyPattern" and value._compiled] if safety else []
real_stdout.write(json.dumps({{"heavy": loaded, "output": sys.stdout.getvalue(), "screen_patterns": compiled}}))
"""


def _probe(args: list[str], cwd, cfg, stdin: str = "", watched: tuple[str, ...] = START_UP) -> dict:
    env = engram_env(cfg)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY, start_up=watched), json.dumps(args), stdin],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_load_on_a_fresh_index_imports_nothing_heavy(project, write_memory, run_engram, tmp_path):
    write_memory(project, "rules/deploy.md", {"id": "deploy", "tags": ["deploy"]}, "# Deploy\nShip with the canary.\n")
    assert run_engram(["index"], project).returncode == 0
    _probe(["load", "deploy the canary"], project, tmp_path / "cfg")  # creates state.db once
    result = _probe(["load", "deploy the canary"], project, tmp_path / "cfg")
    assert result["output"].startswith("loaded 1 memory files")
    assert result["heavy"] == []


def test_a_second_load_does_not_screen_the_same_text_again(project, write_memory, run_engram, tmp_path):
    """The safety verdict of an unchanged text is kept in state.db: no screen pattern compiles."""
    body = "# Deploy\nNever ignore the token rotation; the api key lives in the vault.\n"
    write_memory(project, "rules/deploy.md", {"id": "deploy", "tags": ["deploy"]}, body)
    assert run_engram(["index"], project).returncode == 0
    first = _probe(["load", "deploy"], project, tmp_path / "cfg")
    second = _probe(["load", "deploy"], project, tmp_path / "cfg")
    assert "token rotation" in first["output"] and second["output"] == first["output"]
    assert first["screen_patterns"]  # this text makes the screen compile its patterns
    assert second["screen_patterns"] == []


def test_load_on_a_stale_index_refreshes_through_the_compiler(project, write_memory, run_engram, tmp_path):
    write_memory(project, "rules/deploy.md", {"id": "deploy"}, "# Deploy\nShip with the canary.\n")
    assert run_engram(["index"], project).returncode == 0
    write_memory(project, "rules/rollback.md", {"id": "rollback"}, "# Rollback\nRoll the canary back.\n")
    result = _probe(["load", "rollback"], project, tmp_path / "cfg")
    assert "rollback" in result["output"]
    assert "yaml" in result["heavy"]  # the refresh parsed the new file
    assert "typer" not in result["heavy"]


def test_a_hook_on_a_fresh_index_imports_nothing_heavy(project, write_memory, run_engram, tmp_path):
    write_memory(project, "rules/deploy.md", {"id": "deploy", "tags": ["deploy"]}, "# Deploy\nShip with the canary.\n")
    assert run_engram(["index"], project).returncode == 0
    payload = {"session_id": "s", "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": "deploy it"}
    _probe(["hook", "--host", "claude"], project, tmp_path / "cfg", json.dumps(payload))  # creates state.db once
    result = _probe(["hook", "--host", "claude"], project, tmp_path / "cfg", json.dumps({**payload, "session_id": "t"}))
    assert "Ship with the canary" in result["output"]
    assert result["heavy"] == []


def test_only_a_hook_with_a_prompt_loads_the_signature_and_concept_tables(project, write_memory, run_engram, tmp_path):
    """The tables of implied technologies (7 ms to load) and concepts serve a task's words: a file
    event does without them. The CJK and Vietnamese words serve text in those languages: an
    English prompt, curly quotes and dashes included, does without them."""
    write_memory(project, "rules/api.md", {"id": "api", "applies_to": ["src/**"]}, "# API\nReturn problem+json.\n")
    assert run_engram(["index"], project).returncode == 0
    base = {"session_id": "s", "cwd": str(project)}
    read = {**base, "hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "src/a.py"}}
    prompt = {**base, "hook_event_name": "UserPromptSubmit", "prompt": "fix the useEffect loop in the api — it’s slow"}
    watched = ("engram.signatures", "engram.concepts", "engram.devwords")
    on_file = _probe(["hook", "--host", "claude"], project, tmp_path / "cfg", json.dumps(read), watched)
    on_prompt = _probe(["hook", "--host", "claude"], project, tmp_path / "cfg", json.dumps(prompt), watched)
    assert "Return problem+json" in on_file["output"] and on_file["heavy"] == []
    assert on_prompt["heavy"] == ["engram.signatures", "engram.concepts"]


def test_a_plain_index_runs_without_typer(project, write_memory, tmp_path):
    write_memory(project, "rules/deploy.md", {"id": "deploy"}, "# Deploy\nShip with the canary.\n")
    result = _probe(["index"], project, tmp_path / "cfg")
    assert result["output"].startswith("indexed 1 memory from 1 file (1 added")
    assert "typer" not in result["heavy"] and "pydantic" not in result["heavy"]
    again = _probe(["index"], project, tmp_path / "cfg")
    assert again["output"].startswith("indexed 1 memory from 1 file (0 added, 0 changed")
    # nothing to parse: no yaml, and no dataclasses, argparse or typing either
    assert [m for m in again["heavy"] if m not in PATHLIB + PARSER] == []  # the compiler imports its parser


def test_importing_the_read_path_compiles_no_lazy_pattern():
    """Regexes of the tokenizer and the safety screen compile on first use, not at import."""
    code = (
        "import gc, engram.load, engram.hook, engram.lazyre as lazy;"
        "print(sum(isinstance(o, lazy.LazyPattern) for o in gc.get_objects()),"
        " [o._args[0][:40] for o in gc.get_objects() if isinstance(o, lazy.LazyPattern) and o._compiled])"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    count, compiled = proc.stdout.split(" ", 1)
    assert int(count) > 10  # the patterns are there, and seen
    assert compiled.strip() == "[]"


def test_engram_mcp_without_the_sdk_says_how_to_install_it(project, tmp_path):
    """The SDK is an optional extra: without it, one line naming the extra, exit 1."""
    code = "import sys; sys.modules['mcp'] = None; sys.argv = ['engram', 'mcp']; from engram.entry import main; main()"
    env = {**os.environ, "ENGRAM_CONFIG_DIR": str(tmp_path / "cfg")}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=project, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("engram: error: engram mcp needs the MCP SDK in engram's own environment: ")
    assert "pipx install --force './engram[mcp]'" in proc.stderr and proc.stderr.count("\n") == 1

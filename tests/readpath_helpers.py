"""Helpers for the read-path tests: temp projects with real memory files, run through the real CLI.

Kept out of conftest.py on purpose; import what you need from here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ENGRAM = shutil.which("engram", path=os.path.dirname(sys.executable))

COUNT_LINE = re.compile(r"^(?:engram: )?loaded (\d+) memory files / (\d+) total related memories$")
EMPTY_COUNT_LINE = "loaded 0 memory files / 0 total related memories"
FOLDERS = {"rule": "rules", "skill": "skills", "knowledge": "knowledge"}


def _yaml_value(value) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def memory_text(memory_id: str, body: str, **fields) -> str:
    """A memory file: frontmatter with ``id`` and ``fields`` (in order), then ``body``."""
    lines = ["---", f"id: {memory_id}"]
    for key, value in fields.items():
        if value is None:
            continue
        lines.append(f"{key}: {_yaml_value(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n" + body.rstrip("\n") + "\n"


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        return self.stdout.splitlines()

    def json(self) -> dict:
        return json.loads(self.stdout)

    def counts(self) -> tuple[int, int]:
        match = COUNT_LINE.match(self.lines[0])
        assert match, f"first line is not a count line: {self.lines[:1]!r}"
        return int(match.group(1)), int(match.group(2))


class Project:
    """A temp project with ``.agents/.engram/{rules,skills,knowledge}/`` and its own config dir."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.path = base / "proj"
        self.root = self.path / ".agents" / ".engram"
        for folder in FOLDERS.values():
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        self.cfg = base / "cfg"
        self.cfg.mkdir(exist_ok=True)
        self.global_root: Path | None = None

    # --- writing memories -------------------------------------------------------------

    def write(self, memory_id: str, body: str, *, type: str = "rule", folder: str | None = None,
              root: Path | None = None, filename: str | None = None, **fields) -> Path:
        """Write a memory of ``type`` into its folder (``rules/`` for a rule ...)."""
        root = root or self.root
        folder = folder or FOLDERS.get(type, "skills")
        path = root / folder / (filename or f"{memory_id}.md")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(memory_text(memory_id, body, type=type, **fields), encoding="utf-8")
        return path

    def make_global(self) -> Path:
        self.global_root = self.base / "global"
        for folder in FOLDERS.values():
            (self.global_root / folder).mkdir(parents=True, exist_ok=True)
        return self.global_root

    def write_global(self, memory_id: str, body: str, **kw) -> Path:
        if self.global_root is None:
            self.make_global()
        return self.write(memory_id, body, root=self.global_root, **kw)

    def config(self, data: dict) -> None:
        (self.root / "engram.config.json").write_text(json.dumps(data), encoding="utf-8")

    def ignore(self, *patterns: str) -> None:
        (self.path / ".engramignore").write_text("\n".join(patterns) + "\n", encoding="utf-8")

    # --- running -------------------------------------------------------------------------

    def env(self, extra: dict | None = None) -> dict:
        env = dict(os.environ)
        env.pop("ENGRAM_GLOBAL_DIR", None)
        env.pop("ENGRAM_DEBUG", None)
        env["ENGRAM_CONFIG_DIR"] = str(self.cfg)
        if self.global_root is not None:
            env["ENGRAM_GLOBAL_DIR"] = str(self.global_root)
        env.update(extra or {})
        return env

    def run(self, *args, env: dict | None = None, check_traceback: bool = True) -> Result:
        assert ENGRAM, "the engram command is not installed next to the test interpreter"
        argv = [os.fsencode(ENGRAM)] + [a if isinstance(a, bytes) else os.fsencode(str(a)) for a in args]
        proc = subprocess.run(argv, cwd=self.path, env=self.env(env), capture_output=True, timeout=60)
        out = proc.stdout.decode("utf-8", "replace")
        err = proc.stderr.decode("utf-8", "replace")
        if check_traceback:
            assert "Traceback" not in err, err
            assert "Traceback" not in out, out
        return Result(proc.returncode, out, err)

    def load(self, *args, **kw) -> Result:
        return self.run("load", *args, **kw)

    def load_json(self, *args, **kw) -> dict:
        result = self.load("--json", *args, **kw)
        assert result.returncode == 0, result.stderr
        return result.json()


def entry_ids(payload: dict) -> list[str]:
    return [e["id"] for e in payload["entries"]]


def omitted_reasons(payload: dict) -> dict[str, str]:
    return {o["id"]: o["reason"] for o in payload["omitted"]}


def heading_ids(stdout: str) -> list[str]:
    """Ids of the bodies printed (``### <id> [...]`` headings), in order."""
    return re.findall(r"^### (\S+) \[", stdout, re.M)


def card_ids(stdout: str) -> list[str]:
    """Ids of the cards printed (``- <id> [<type>] ...``), in order."""
    return re.findall(r"^- (\S+) \[(?:rule|skill|knowledge)\] ", stdout, re.M)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def load_in_process(project: Project, *args: str) -> Result:
    """Run `engram load ARGS` inside this interpreter (fast; for property tests)."""
    import contextlib
    import io

    from engram.entry import guarded
    from engram.load import main as load_main

    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    try:
        os.environ.clear()
        os.environ.update(project.env())
        os.chdir(project.path)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = guarded(load_main, list(args))
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return Result(code, out.getvalue(), err.getvalue())

"""Shared fixtures: the installed `engram` command, temp projects and memory files.

Fixture names are part of the test suite's contract (other test files use them):
``engram_bin``, ``run_engram``, ``project``, ``memory_root``, ``write_memory``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT_REL = Path(".agents") / ".engram"
FOLDERS = ("rules", "skills", "knowledge")


@pytest.fixture(scope="session")
def engram_bin() -> str:
    """The venv's installed `engram` console script (never a copy found elsewhere on PATH)."""
    path = shutil.which("engram", path=os.path.dirname(sys.executable))
    assert path, "the engram console script is not installed next to the test interpreter"
    return path


@pytest.fixture
def run_engram(engram_bin: str, tmp_path: Path):
    """run_engram(args, cwd, env=None, input=None) -> CompletedProcess (text, captured, 60 s timeout).

    The environment gets ``ENGRAM_CONFIG_DIR=<tmp>/cfg``; ``ENGRAM_GLOBAL_DIR`` and
    ``ENGRAM_DEBUG`` are removed unless ``env`` sets them. Asserts no traceback.
    """
    cfg = tmp_path / "cfg"
    cfg.mkdir(exist_ok=True)

    def run(args, cwd, env: dict | None = None, input: str | None = None) -> subprocess.CompletedProcess:
        argv = shlex.split(args) if isinstance(args, str) else [str(a) for a in args]
        full_env = dict(os.environ)
        full_env.pop("ENGRAM_GLOBAL_DIR", None)
        full_env.pop("ENGRAM_DEBUG", None)
        full_env["ENGRAM_CONFIG_DIR"] = str(cfg)
        full_env.update(env or {})
        proc = subprocess.run(
            [engram_bin, *argv],
            cwd=str(cwd),
            env=full_env,
            input=input,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=60,
        )
        assert "Traceback" not in proc.stderr, f"engram {argv} printed a traceback:\n{proc.stderr}"
        assert "Traceback" not in proc.stdout, f"engram {argv} printed a traceback:\n{proc.stdout}"
        return proc

    return run


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A temp project (no git) holding ``.agents/.engram/{rules,skills,knowledge}/``."""
    path = tmp_path / "proj"
    for folder in FOLDERS:
        (path / ROOT_REL / folder).mkdir(parents=True)
    return path


@pytest.fixture
def memory_root(project: Path) -> Path:
    """``<project>/.agents/.engram``."""
    return project / ROOT_REL


def _memory_text(frontmatter: dict | str | None, body: str) -> str:
    if frontmatter is None:
        return body
    if isinstance(frontmatter, dict):
        fm = yaml.safe_dump(frontmatter, sort_keys=False, allow_unicode=True)
    else:
        fm = frontmatter
    if not fm.endswith("\n"):
        fm += "\n"
    return f"---\n{fm}---\n{body}"


def _write_memory(project: Path, rel: str, frontmatter: dict | str | None, body: str = "") -> Path:
    """Write a memory file at ``rel`` relative to the memory root (``rules/x.md``).

    ``frontmatter`` is a dict (dumped with yaml), a raw YAML string (without the
    ``---`` fences), or None for a file without frontmatter.
    """
    path = project / ROOT_REL / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_memory_text(frontmatter, body), encoding="utf-8")
    return path


@pytest.fixture
def write_memory():
    """write_memory(project, rel, frontmatter: dict | str | None, body: str) -> Path."""
    return _write_memory

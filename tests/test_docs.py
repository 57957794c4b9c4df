"""The docs say what the code does: the command reference is generated from `--help` and current,
every command and `load` flag is in it, links point at files the project has, and the README's
quickstart runs as written.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engram.cli_reference import command_names, reference
from engram.load import FLAGS
from helpers import engram_env

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
COMMANDS = REPO / "docs" / "commands.md"
DOC_FILES = [README, *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
# Files of the project's development material, never part of the repository.
NOT_IN_THE_REPO = ("DESIGN.md", "spec/read-path.md", "notes/hosts.md", "notes/real-hosts.md", "shared/")


@pytest.mark.installed
@pytest.mark.slow
def test_the_command_reference_is_current() -> None:
    """Written from the installed command's `--help` (`engram.cli_reference`)."""
    assert COMMANDS.read_text(encoding="utf-8") == reference(), "docs/commands.md is out of date: run `make docs`"


@pytest.mark.parametrize("name", command_names())
def test_every_command_is_in_the_reference(name: str) -> None:
    assert f"\n## engram {name}\n" in COMMANDS.read_text(encoding="utf-8")


@pytest.mark.parametrize("flag", [flag for flag, _, _ in FLAGS])
def test_every_load_flag_is_in_the_reference(flag: str) -> None:
    text = COMMANDS.read_text(encoding="utf-8")
    load_section = text[text.index("\n## engram load\n") :].split("\n## ", 2)[1]
    assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", load_section), flag


def _links() -> list[tuple[str, str]]:
    found = []
    for doc in DOC_FILES:
        for target in LINK.findall(doc.read_text(encoding="utf-8")):
            if not re.match(r"[a-z]+:", target) and not target.startswith("#"):
                resolved = (doc.parent / target.split("#")[0]).resolve()
                found.append((doc.relative_to(REPO).as_posix(), resolved.relative_to(REPO).as_posix()))
    return found


@pytest.mark.parametrize(("doc", "target"), _links())
def test_links_point_at_files_the_project_has(doc: str, target: str) -> None:
    assert (REPO / target).exists(), f"{doc} links to {target}, which does not exist"


@pytest.mark.parametrize("doc", DOC_FILES, ids=lambda path: path.name)
def test_no_doc_names_development_material(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    assert [name for name in NOT_IN_THE_REPO if name in text] == []


def test_the_readme_is_a_front_page() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 260


@pytest.mark.installed
def test_the_readme_quickstart_runs_as_written(tmp_path: Path) -> None:
    """The shell block under "Quickstart", run by bash in a new git project, prints the pack the
    README shows after it (up to the directive line, which `load` prints once its renderer does)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    text = README.read_text(encoding="utf-8")
    quickstart = text[text.index("## Quickstart") :]
    script = re.search(r"```sh\n(.*?)```", quickstart, re.S).group(1)
    shown = re.search(r"```text\n(.*?)```", quickstart, re.S).group(1).splitlines()
    project = tmp_path / "your-project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    env = engram_env(tmp_path / "cfg", PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run(
        ["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    printed = proc.stdout.splitlines()
    start = printed.index(shown[0])
    assert printed[start : start + 2] == shown[:2]
    assert shown[-1] in printed[start:]
    assert (project / ".claude/settings.json").is_file()

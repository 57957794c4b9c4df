"""Installing engram as the README says, into fresh virtual environments, and the newcomer's first
hour played end to end with what got installed.

Dependencies come from pip's configured package index; a tool that is not installed here (pipx,
uv) is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from helpers import MACHINE_ENV, engram_env, git

pytestmark = [pytest.mark.installed, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[1]
VERSION_LINE = f"engram {version('engram')}\n"
INSTALL_TIMEOUT_S = 600
MEMORY = """---
id: no-secrets
tags: [security, secrets]
directive: Never commit secrets; use the team vault.
applies_to: ["src/**"]
---
Read API keys and passwords from the environment; the vault path is in docs/vault.md.
"""
TASK = "where should the api keys go"


def run(argv: list, cwd: Path, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``argv`` with ``env`` (default: this test's), and the machine's HOME: pip, pipx and uv read their
    user config (which package index) there."""
    env = {**(os.environ if env is None else env), "HOME": MACHINE_ENV["HOME"]}
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def fresh_venv(folder: Path) -> Path:
    """A new virtual environment on the base interpreter (none of the test environment's packages)."""
    run([sys.executable, "-m", "venv", folder], cwd=folder.parent, timeout=INSTALL_TIMEOUT_S).check_returncode()
    return folder / "bin"


def user_env(tmp: Path, bin_dir: Path) -> dict:
    """A shell environment of someone who installed engram into ``bin_dir`` and nothing else."""
    env = engram_env(tmp / "engram-config")
    env.pop("VIRTUAL_ENV", None)
    test_bin = str(Path(sys.executable).parent)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != test_bin]
    env["PATH"] = os.pathsep.join([str(bin_dir), *path])
    return env


def pip_install(bin_dir: Path, target: str) -> None:
    proc = run([bin_dir / "python", "-m", "pip", "install", "--quiet", target], cwd=bin_dir, timeout=INSTALL_TIMEOUT_S)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def assert_works(engram: Path, project: Path, env: dict) -> None:
    """`engram --version` and a first load, with the installed script."""
    proc = run([engram, "--version"], cwd=project, env=env)
    assert (proc.returncode, proc.stdout) == (0, VERSION_LINE), proc.stderr
    assert run([engram, "init"], cwd=project, env=env).returncode == 0
    (project / ".agents/.engram/rules/no-secrets.md").write_text(MEMORY)
    loaded = run([engram, "load", TASK], cwd=project, env=env)
    assert loaded.returncode == 0, loaded.stderr
    assert "### no-secrets [rule, instruction]" in loaded.stdout


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


# --- the newcomer's path, with `pip install` from the clone ------------------------------------------------


class Newcomer:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.bin = fresh_venv(tmp / "venv")
        pip_install(self.bin, str(REPO))
        self.engram = self.bin / "engram"
        self.env = user_env(tmp, self.bin)
        self.project = tmp / "my-app"
        self.linked: subprocess.CompletedProcess | None = None  # what `engram link claude` printed

    def __call__(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        return run(["engram", *args], cwd=cwd or self.project, env=self.env)


@pytest.fixture(scope="module")
def newcomer(tmp_path_factory) -> Newcomer:
    """engram installed by `pip install <clone>` in a fresh venv; a new git project set up with
    `engram init`, one memory with a directive and `engram link claude`, indexed and committed."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    person = Newcomer(tmp_path_factory.mktemp("newcomer"))
    person.project.mkdir()
    git(person.project, "init", "-q")
    init = person("init")
    assert init.returncode == 0, init.stderr
    assert "next steps:" in init.stdout
    (person.project / ".agents/.engram/rules/no-secrets.md").write_text(MEMORY)
    person.linked = person("link", "claude")
    assert person.linked.returncode == 0, person.linked.stderr
    indexed = person("index")
    assert indexed.returncode == 0, indexed.stderr
    git(person.project, "add", "-A")
    git(person.project, "commit", "-qm", "engram memories")
    return person


def test_pip_install_from_the_clone(newcomer: Newcomer) -> None:
    version_line = newcomer("--version")
    assert version_line.stdout == VERSION_LINE
    assert shutil.which("engram", path=newcomer.env["PATH"]) == str(newcomer.engram)


def test_load_finds_the_memory(newcomer: Newcomer) -> None:
    proc = newcomer("load", TASK)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[:2] == [
        "loaded 1 memory files / 1 total related memories",
        "### no-secrets [rule, instruction]",
    ]


def test_load_shows_the_directive(newcomer: Newcomer) -> None:
    lines = newcomer("load", TASK).stdout.splitlines()
    assert lines[2] == "Never commit secrets; use the team vault."


def test_link_claude_writes_a_portable_command(newcomer: Newcomer) -> None:
    settings = json.loads((newcomer.project / ".claude/settings.json").read_text())
    commands = [
        hook["command"] for entries in settings["hooks"].values() for entry in entries for hook in entry["hooks"]
    ]
    assert commands
    assert all(
        command.split()[0] in ("engram", "python", "python3") and str(newcomer.tmp) not in command
        for command in commands
    )
    assert f"claude runs: engram (portable: on PATH here as {newcomer.engram})" in newcomer.linked.stdout.splitlines()


def test_index_writes_rule_files_for_the_linked_host_only(newcomer: Newcomer) -> None:
    assert git(newcomer.project, "ls-files", ".claude", ".cursor").splitlines() == [
        ".claude/rules/engram/no-secrets.md",
        ".claude/settings.json",
    ]


def test_a_fresh_clone_passes_check_and_fails_after_an_edit_without_index(newcomer: Newcomer, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(newcomer.project), str(clone))
    fresh = newcomer("check", cwd=clone)
    assert (fresh.returncode, fresh.stdout) == (0, "engram check: fresh\n"), fresh.stdout + fresh.stderr
    assert git(clone, "status", "--porcelain", "--ignored") == ""

    memory = clone / ".agents/.engram/rules/no-secrets.md"
    memory.write_text(MEMORY.replace("the team vault", "the vault"))
    git(clone, "commit", "-qam", "edited without engram index")
    stale = newcomer("check", cwd=clone)
    assert stale.returncode == 1
    assert "stale .claude/rules/engram/no-secrets.md: generated rule file is out of date" in stale.stdout
    assert git(clone, "status", "--porcelain", "--ignored") == ""


# --- the other ways to install ---------------------------------------------------------------------------


@needs_git
def test_pip_install_from_a_git_url(tmp_path: Path) -> None:
    """`pip install git+<url>`: the committed state of this repository, through git."""
    bin_dir = fresh_venv(tmp_path / "venv")
    pip_install(bin_dir, f"git+file://{REPO}")
    project = tmp_path / "p"
    project.mkdir()
    assert_works(bin_dir / "engram", project, user_env(tmp_path, bin_dir))


@pytest.mark.skipif(shutil.which("pipx") is None, reason="pipx is not installed")
def test_pipx_install_from_the_clone(tmp_path: Path) -> None:
    env = {**os.environ, "PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "bin")}
    proc = run(["pipx", "install", REPO], cwd=tmp_path, env=env, timeout=INSTALL_TIMEOUT_S)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    project = tmp_path / "p"
    project.mkdir()
    assert_works(tmp_path / "bin" / "engram", project, user_env(tmp_path, tmp_path / "bin"))


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")
def test_uv_tool_install_from_the_clone(tmp_path: Path) -> None:
    env = {**os.environ, "UV_TOOL_DIR": str(tmp_path / "uv-tools"), "UV_TOOL_BIN_DIR": str(tmp_path / "bin")}
    proc = run(["uv", "tool", "install", REPO], cwd=tmp_path, env=env, timeout=INSTALL_TIMEOUT_S)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    project = tmp_path / "p"
    project.mkdir()
    assert_works(tmp_path / "bin" / "engram", project, user_env(tmp_path, tmp_path / "bin"))

"""The fixtures every test file shares; the harness itself is tests/helpers.py.

``project`` (a `helpers.Project`), ``memory_root``, ``write_memory``, ``run_engram`` and
``engram_bin``. Commands run in this process unless the test is marked ``installed``.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from helpers import ENGRAM_BIN, ISOLATED_PREFIXES, Project, Result, engram
from helpers import write_memory as _write_memory


@pytest.fixture(autouse=True)
def isolated_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No test sees the machine's HOME, engram config or host variables (ENGRAM_*, CURSOR_* ...): HOME is
    an empty folder of its own, the user config folder ``<tmp_path>/cfg`` (made when a command needs it)."""
    for name in [n for n in os.environ if n.startswith(ISOLATED_PREFIXES)]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    monkeypatch.setenv("ENGRAM_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("ENGRAM_CACHE_DIR", _session_cache(tmp_path_factory))


_SESSION_CACHE: list[str] = []


def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One cache folder for the session: the signature tables' copy is written once, not per test
    (tests of the copy itself set their own)."""
    if not _SESSION_CACHE:
        _SESSION_CACHE.append(str(tmp_path_factory.mktemp("cache")))
    return _SESSION_CACHE[0]


def is_installed(request: pytest.FixtureRequest) -> bool:
    """Whether the test runs its commands as the installed `engram` (marked ``installed``)."""
    return request.node.get_closest_marker("installed") is not None


@pytest.fixture(scope="session")
def engram_bin() -> str:
    """The venv's installed `engram` console script (never a copy found elsewhere on PATH)."""
    assert ENGRAM_BIN, "the engram console script is not installed next to the test interpreter"
    return ENGRAM_BIN


@pytest.fixture
def run_engram(request: pytest.FixtureRequest):
    """run_engram(args, cwd, env=None, input=None) -> Result: `engram ARGS` in ``cwd``, ``env`` added
    to this test's environment; no traceback allowed."""
    installed = is_installed(request)

    def run(args, cwd, env: dict | None = None, input: str | None = None) -> Result:
        Path(os.environ["ENGRAM_CONFIG_DIR"]).mkdir(exist_ok=True)
        argv = shlex.split(args) if isinstance(args, str) else list(args)
        full_env = {**os.environ, **(env or {})}
        return engram(argv, cwd, full_env, (input or "").encode("utf-8", "surrogateescape"), installed=installed)

    return run


@pytest.fixture
def project(tmp_path: Path, request: pytest.FixtureRequest) -> Project:
    """A temp project (no git) holding ``.agents/.engram/{rules,skills,knowledge}/``."""
    return Project(tmp_path, installed=is_installed(request))


@pytest.fixture
def memory_root(project: Project) -> Path:
    """``<project>/.agents/.engram``."""
    return project.root


@pytest.fixture
def write_memory():
    """write_memory(project, rel, frontmatter: dict | str | None, body: str) -> Path."""
    return _write_memory


@pytest.fixture
def signing_key(tmp_path: Path) -> Path:
    """A new Ed25519 key for `index --sign-key`, as a PKCS8 PEM file."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = tmp_path / "team-key.pem"
    key.write_bytes(
        Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return key


@pytest.fixture
def benchmarks_importable(monkeypatch):
    """The benchmarks/ scripts' modules, importable as the scripts import each other."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1]))

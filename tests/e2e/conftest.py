"""Fixtures of the end-to-end suite: the installed host CLIs, the mock model, engram projects.

Run with `make e2e` (which installs the pinned CLIs first and, where it can, runs
the suite in a network namespace that has only loopback). `make test` skips it:
every test here is marked `e2e`.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import harness
import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).is_relative_to(harness.HERE):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def hosts_installed() -> None:
    harness.install_hosts()


@pytest.fixture(scope="session")
def engram() -> str:
    """The engram command installed next to the test interpreter (the one `link` writes into configs)."""
    path = shutil.which("engram", path=os.path.dirname(sys.executable))
    assert path, "engram is not installed next to the test interpreter"
    return path


@pytest.fixture
def mock(tmp_path: Path) -> Iterator[harness.Mock]:
    model = harness.Mock(tmp_path / "mock")
    try:
        yield model
    finally:
        model.stop()

"""The end-to-end suite's own fixture (the installed host CLIs) and marker; `engram_bin` comes from tests/conftest.py.

Run with `make e2e` (which installs the pinned CLIs first and, where it can, runs
the suite in a network namespace that has only loopback). `make test` skips it:
every test here is marked `e2e`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import harness


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).is_relative_to(harness.HERE):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def hosts_installed() -> None:
    harness.install_hosts()

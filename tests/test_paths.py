"""engram.paths: the one atomic write every file engram rewrites goes through."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from engram.paths import TEMP_MARK, replacing, write_atomic


def test_write_atomic_replaces_the_file_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    target.write_text("old", encoding="utf-8")
    write_atomic(str(target), '{"new": "één"}')
    assert target.read_bytes() == '{"new": "één"}'.encode()
    assert os.listdir(tmp_path) == ["settings.json"]


def test_keep_mode_keeps_the_permission_bits_and_a_new_file_gets_the_usual_ones(tmp_path: Path) -> None:
    kept, fresh = tmp_path / "kept", tmp_path / "fresh"
    kept.write_bytes(b"x")
    kept.chmod(0o640)
    write_atomic(str(kept), b"y", keep_mode=True)
    write_atomic(str(fresh), b"y", keep_mode=True)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "config.json"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), replacing(str(target)) as temp:
        Path(temp).write_text("half", encoding="utf-8")
        raise RuntimeError("killed mid-write")
    assert target.read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["config.json"]


def test_temp_names_are_unique_hidden_and_never_end_in_the_files_suffix(tmp_path: Path) -> None:
    names = set()
    for _ in range(20):
        with replacing(str(tmp_path / "deploy.md")) as temp:
            names.add(os.path.basename(temp))
            Path(temp).write_bytes(b"")
    assert len(names) == 20
    assert all(name.startswith(f".deploy.md{TEMP_MARK}{os.getpid()}-") and not name.endswith(".md") for name in names)


@pytest.mark.slow
@pytest.mark.installed
def test_concurrent_set_load_limit_runs_all_write_a_whole_config(engram_bin: str, tmp_path: Path) -> None:
    """Each run writes its own temp file: none fails on another's, and the file is always whole JSON."""
    project = tmp_path / "proj"
    (project / ".agents" / ".engram").mkdir(parents=True)
    env = {**os.environ, "ENGRAM_CONFIG_DIR": str(tmp_path / "cfg")}
    runs = [
        subprocess.Popen([engram_bin, "set-load-limit", str(limit)], cwd=project, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for limit in range(1, 9)
    ]  # fmt: skip
    outcomes = [(run.wait(timeout=60), run.stderr.read()) for run in runs]
    assert outcomes == [(0, "")] * 8
    config = project / ".agents" / ".engram" / "engram.config.json"
    assert json.loads(config.read_text(encoding="utf-8"))["load"]["limit"] in range(1, 9)
    assert os.listdir(config.parent) == ["engram.config.json"]

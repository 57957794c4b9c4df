"""The signature tables' copy (`signature_cache`): written by the first process that routes a task,
read alone by the processes after it; the tables themselves answer where it cannot be."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import engram_env

# Each implies a technology: a signature, one of several words, an identifier written as code, a
# name in Hangul.
TEXTS = [
    "useEffect runs twice after the upgrade",
    "Could not find a package configuration file provided by Qt5",
    "op.add_column fails in the migration",
    "리액트에서 상태가 안 바뀌어요",
]
PROBE = """
import json, sys
from engram import route
implied = [[(a.word.text, a.source) for a in route.anchors_of(text)[0] if a.source] for text in json.loads(sys.argv[1])]
print(json.dumps({"implied": implied, "tables_loaded": "engram.signature_tables" in sys.modules}))
"""


def probe(env: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(TEXTS)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return json.loads(done.stdout)


def test_the_first_process_writes_the_copy_and_the_next_ones_read_it_alone(tmp_path: Path) -> None:
    env = engram_env(tmp_path / "cfg", ENGRAM_CACHE_DIR=str(tmp_path / "cache"))
    first = probe(env)
    assert first["tables_loaded"] and all(first["implied"]), first
    [copy] = (tmp_path / "cache").iterdir()
    assert copy.name.startswith("signatures-") and copy.suffix == ".db"
    for _ in range(2):
        later = probe(env)
        assert later == {"implied": first["implied"], "tables_loaded": False}


def test_the_copy_goes_to_the_config_folder_without_a_cache_folder(tmp_path: Path) -> None:
    env = engram_env(tmp_path / "cfg")
    env.pop("ENGRAM_CACHE_DIR", None)
    probe(env)
    assert [path.name.startswith("signatures-") for path in (tmp_path / "cfg" / "cache").iterdir()] == [True]


def test_a_cache_folder_that_cannot_be_made_leaves_the_tables_to_answer(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = engram_env(tmp_path / "cfg", ENGRAM_CACHE_DIR=str(blocker / "cache"))
    reference = probe(engram_env(tmp_path / "cfg", ENGRAM_CACHE_DIR=str(tmp_path / "cache")))
    for _ in range(2):
        assert probe(env) == {"implied": reference["implied"], "tables_loaded": True}


def test_a_damaged_copy_is_written_again(tmp_path: Path) -> None:
    env = engram_env(tmp_path / "cfg", ENGRAM_CACHE_DIR=str(tmp_path / "cache"))
    reference = probe(env)
    [copy] = (tmp_path / "cache").iterdir()
    copy.write_bytes(b"not a database " * 1000)
    assert probe(env) == {"implied": reference["implied"], "tables_loaded": True}
    assert probe(env) == {"implied": reference["implied"], "tables_loaded": False}

"""engram.compile and engram.index: the index file, incremental and atomic builds, state migrations."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram import compile, terms
from engram.compile import compile_root
from engram.freshness import DIGEST_CHUNK, stat_digest
from engram.index import (
    FTS_COLUMNS,
    INDEX_SCHEMA_VERSION,
    PRINTED_COLUMNS,
    STATE_SCHEMA_VERSION,
    create_index,
    fingerprint,
    migrate_state,
    printed_digest,
    state_migrations,
)
from engram.workspace import open_workspace
from helpers import MACHINE_ENV

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    monkeypatch.setenv("ENGRAM_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.delenv("ENGRAM_GLOBAL_DIR", raising=False)


def build(project: Path):
    ws = open_workspace(project)
    return compile_root(ws.root, ws.config)


def db(project: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(project / ".agents/.engram/index.db")
    conn.row_factory = sqlite3.Row
    return conn


@pytest.fixture
def small(project, write_memory):
    """Three memories: a rule depending on a knowledge note, and a skill."""
    write_memory(
        project,
        "rules/release-checklist.md",
        {
            "id": "release-checklist",
            "tags": ["release"],
            "depends_on": ["release-foundation"],
            "directive": "Run the release checklist before tagging.",
        },
        "# Release checklist\n\n## Content\nBump the zebrafish version.\n\n## Context\nsecret history\n",
    )
    write_memory(
        project,
        "knowledge/release-foundation.md",
        {"id": "release-foundation", "tags": ["release"]},
        "# Foundations\n\nReleases are cut from main.\n",
    )
    write_memory(project, "skills/deploy.md", {"id": "deploy", "type": "workflow"}, "# Deploy\n\nRun make deploy.\n")
    return project


def snapshot(project: Path) -> dict:
    conn = db(project)
    memories = [dict(r) for r in conn.execute("SELECT * FROM memories ORDER BY rel")]
    for row in memories:
        row.pop("rowid", None)
    files = [(r["rel"], r["sha256"], r["status"]) for r in conn.execute("SELECT * FROM files ORDER BY rel")]
    edges = [tuple(r) for r in conn.execute("SELECT src, dst, kind FROM edges ORDER BY src, dst")]
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    conn.close()
    return {"memories": memories, "files": files, "edges": edges, "fingerprint": meta["fingerprint"]}


# --- what the index holds -------------------------------------------------------------------


def test_index_has_memories_fts_edges_files_and_meta(small):
    result = build(small)
    assert (result.total, result.added, result.invalid) == (3, 3, 0)
    conn = db(small)
    objects = {r["name"]: r["sql"] or "" for r in conn.execute("SELECT name, sql FROM sqlite_master")}
    for table in ("memories", "files", "edges", "meta", "memories_fts"):
        assert table in objects
    assert "fts5" in objects["memories_fts"].lower()

    ids = {r["id"]: r for r in conn.execute("SELECT * FROM memories")}
    assert set(ids) == {"release-checklist", "release-foundation", "deploy"}
    assert ids["deploy"]["type"] == "skill"
    assert ids["release-foundation"]["authority"] == "reference"

    edges = {(r["src"], r["dst"], r["kind"]) for r in conn.execute("SELECT * FROM edges")}
    assert ("release-checklist", "release-foundation", "depends_on") in edges

    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    assert meta["schema_version"] == str(INDEX_SCHEMA_VERSION)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == INDEX_SCHEMA_VERSION
    assert meta["tokenizer"] == terms.TOKENIZER_VERSION
    assert re.fullmatch(r"[0-9a-f]{64}", meta["fingerprint"])
    assert meta["fingerprint"] == fingerprint(conn.execute("SELECT rel, sha256 FROM files ORDER BY rel"))


def test_files_table_holds_sha256_of_each_source(small):
    build(small)
    root = small / ".agents/.engram"
    stored = dict(db(small).execute("SELECT rel, sha256 FROM files").fetchall())
    expected = {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.md")}
    assert stored == expected


def test_stored_body_is_agent_visible_and_hashed(small):
    build(small)
    row = (
        db(small)
        .execute(f"SELECT {', '.join(PRINTED_COLUMNS)}, text_sha256 FROM memories WHERE id = 'release-checklist'")
        .fetchone()
    )
    assert "Bump the zebrafish version." in row["body"]
    assert "secret history" not in row["body"] and "## Context" not in row["body"]
    assert row["text_sha256"] == printed_digest({name: row[name] for name in PRINTED_COLUMNS})


def test_fts_table_finds_a_memory_by_body_term(small):
    build(small)
    conn = db(small)
    term = terms.index_terms("zebrafish").split()[0]
    rowids = [r[0] for r in conn.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", (f'"{term}"',))]
    assert len(rowids) == 1
    assert conn.execute("SELECT id FROM memories WHERE rowid = ?", (rowids[0],)).fetchone()[0] == "release-checklist"


def test_removed_file_leaves_memories_files_fts_and_edges(small):
    build(small)
    (small / ".agents/.engram/rules/release-checklist.md").unlink()
    result = build(small)
    assert (result.removed, result.total) == (1, 2)
    conn = db(small)
    assert conn.execute("SELECT count(*) FROM memories WHERE id = 'release-checklist'").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM files WHERE rel = 'rules/release-checklist.md'").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM edges WHERE src = 'release-checklist'").fetchone()[0] == 0
    term = terms.index_terms("zebrafish").split()[0]
    assert (
        conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (f'"{term}"',)).fetchone()[0] == 0
    )


def test_index_is_a_pure_function_of_the_sources(small):
    build(small)
    first = snapshot(small)
    (small / ".agents/.engram/index.db").unlink()
    build(small)
    assert snapshot(small) == first


# --- incremental and atomic -----------------------------------------------------------------


def test_second_compile_with_nothing_changed_writes_nothing(small):
    build(small)
    index = small / ".agents/.engram/index.db"
    before = index.stat()
    digest = hashlib.sha256(index.read_bytes()).hexdigest()
    result = build(small)
    assert result.wrote is False
    assert (result.total, result.added, result.changed, result.removed, result.invalid) == (3, 0, 0, 0, 0)
    after = index.stat()
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (before.st_ino, before.st_mtime_ns, before.st_size)
    assert hashlib.sha256(index.read_bytes()).hexdigest() == digest


def test_files_whose_stat_did_not_change_are_not_read_again(small, monkeypatch):
    """A build reads only the files whose size, mtime or ctime changed (few files: read in this process)."""
    build(small)
    touched = small / ".agents/.engram/skills/deploy.md"
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 5_000_000_000))
    read: list[str] = []
    real_read = compile.read_source
    monkeypatch.setattr(compile, "read_source", lambda source: read.append(source.rel) or real_read(source))
    result = build(small)
    assert result.total > 1 and read == ["skills/deploy.md"]


def test_an_edit_that_restores_size_and_mtime_is_still_seen(small):
    """The ctime, which no edit can set back, is part of a file's stat: same length, `touch` to the old mtime."""
    build(small)
    path = small / ".agents/.engram/skills/deploy.md"
    st = path.stat()
    path.write_text(path.read_text().replace("make deploy", "MAKE DEPLOY"))  # same length
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    result = build(small)
    assert result.wrote is True and result.changed == 1
    body = db(small).execute("SELECT body FROM memories WHERE id = 'deploy'").fetchone()[0]
    assert "MAKE DEPLOY" in body


def test_touching_a_file_is_not_a_change(small):
    build(small)
    path = small / ".agents/.engram/skills/deploy.md"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000_000))
    result = build(small)
    assert (result.added, result.changed, result.removed) == (0, 0, 0)
    again = build(small)
    assert again.wrote is False  # the new mtime was recorded


def test_a_change_is_written_to_a_new_file_then_renamed(small):
    build(small)
    root = small / ".agents/.engram"
    inode = (root / "index.db").stat().st_ino
    (root / "skills/deploy.md").write_text("---\nid: deploy\n---\n# Deploy\n\nRun make release instead.\n")
    result = build(small)
    assert result.wrote is True and result.changed == 1
    assert (root / "index.db").stat().st_ino != inode
    assert list(root.glob(".index.db.tmp-*")) == []
    body = db(small).execute("SELECT body FROM memories WHERE id = 'deploy'").fetchone()[0]
    assert "make release instead" in body


def test_compile_never_writes_state_db(small):
    build(small)
    root = small / ".agents/.engram"
    assert not (root / "state.db").exists()
    tables = {r[0] for r in db(small).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert not tables & {"fetches", "sessions", "delivered"}


# --- worker processes ------------------------------------------------------------------------


def full_dump(project: Path) -> dict:
    """Everything the index holds but what depends on build times and file mtimes, FTS terms and
    positions included."""
    conn = db(project)
    conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, memories_fts, 'instance')")
    dump = {
        "memories": [tuple(r) for r in conn.execute("SELECT rowid, * FROM memories ORDER BY rowid")],
        "files": [
            tuple(r) for r in conn.execute("SELECT rel, size, sha256, status, error, memory FROM files ORDER BY rel")
        ],
        "edges": [tuple(r) for r in conn.execute("SELECT * FROM edges ORDER BY src, dst, kind")],
        "fts": [
            tuple(r)
            for r in conn.execute("SELECT term, col, doc, offset FROM temp.vocab ORDER BY term, doc, col, offset")
        ],
        "meta": dict(
            conn.execute("SELECT key, value FROM meta WHERE key NOT IN ('built_at', 'source_root', 'stat_digest')")
        ),
    }
    conn.close()
    return dump


def _edit_some(project: Path) -> None:
    root = project / ".agents/.engram"
    for path in sorted(root.glob("rules/r*.md"))[::3]:  # touched: same content, new mtime
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000_000))
    (root / "rules/r1.md").write_text("---\nid: r1\ntags: [deploy]\n---\n# R1\n\nNow about canaries.\n")
    (root / "rules/r2.md").unlink()


@pytest.fixture
def many(project, write_memory):
    """Twenty memories, with a duplicate id, a binary file and text that folding changes."""
    for i in range(20):
        tags = ["deploy", f"team{i % 4}"]
        body = f"# Rule {i}\n\nShip it — carefully: “step {i}” in Next.js, café\u00a0ok.\n"
        write_memory(project, f"rules/r{i:02d}.md" if i > 2 else f"rules/r{i}.md", {"id": f"r{i}", "tags": tags}, body)
    write_memory(project, "skills/copy.md", {"id": "r5"}, "# Copy\n\nSame id as another.\n")
    (project / ".agents/.engram/knowledge/blob.md").write_bytes(b"\x00\x01")
    return project


def test_worker_processes_build_the_same_index_as_one_process(many, tmp_path, monkeypatch):
    parallel = tmp_path / "parallel"
    shutil.copytree(many, parallel)
    build(many)
    sequential_dumps = [full_dump(many)]
    _edit_some(many)
    build(many)
    sequential_dumps.append(full_dump(many))

    monkeypatch.setattr(compile, "PARALLEL_MIN_FILES", 4)
    monkeypatch.setattr(compile, "PARALLEL_CHUNK", 3)
    monkeypatch.setattr(compile, "_worker_count", lambda: 2)
    result = build(parallel)
    assert (result.added, result.invalid) == (22, 2)
    assert full_dump(parallel) == sequential_dumps[0]
    _edit_some(parallel)
    result = build(parallel)
    assert (result.changed, result.removed) == (1, 1)
    assert full_dump(parallel) == sequential_dumps[1]


def test_a_big_build_without_worker_processes_is_built_in_this_process(many, tmp_path, monkeypatch):
    """Where processes cannot start (a sandbox), the build falls back to one process, same index."""
    from concurrent.futures import ProcessPoolExecutor

    alone = tmp_path / "alone"
    shutil.copytree(many, alone, ignore=shutil.ignore_patterns("index.db*"))
    build(many)

    def refuse(self, *args, **kwargs):
        raise OSError("process creation is not allowed here")

    monkeypatch.setattr(compile, "PARALLEL_MIN_FILES", 4)
    monkeypatch.setattr(compile, "_worker_count", lambda: 2)
    monkeypatch.setattr(ProcessPoolExecutor, "submit", refuse)
    result = build(alone)
    assert (result.added, result.invalid) == (22, 2)
    assert full_dump(alone) == full_dump(many)


# --- ignore rules ----------------------------------------------------------------------------


def test_engramignore_and_ignore_also_mark_memories_ignored(small, write_memory):
    root = small / ".agents/.engram"
    write_memory(small, "knowledge/secret.md", {"id": "secret"}, "hidden stuff\n")
    write_memory(small, "rules/draft-one.md", {"id": "draft-one"}, "draft\n")
    (small / ".engramignore").write_text("# comment\nknowledge/secret.md\n")
    (root / "engram.config.json").write_text(json.dumps({"ignore": {"also": ["rules/draft-*.md"]}}))
    result = build(small)
    assert result.total == 5 and result.invalid == 0
    flags = dict(db(small).execute("SELECT id, ignored FROM memories").fetchall())
    assert flags == {"release-checklist": 0, "release-foundation": 0, "deploy": 0, "secret": 1, "draft-one": 1}

    (small / ".engramignore").write_text("")
    result = build(small)
    assert result.wrote is True
    flags = dict(db(small).execute("SELECT id, ignored FROM memories").fetchall())
    assert flags["secret"] == 0 and flags["draft-one"] == 1


def test_engramignore_matches_paths_relative_to_the_memory_root(small, write_memory):
    write_memory(small, "knowledge/sub/deep.md", {"id": "deep"}, "deep\n")
    (small / ".engramignore").write_text("knowledge/sub/\n/rules/release-*.md\n")
    build(small)
    flags = dict(db(small).execute("SELECT id, ignored FROM memories").fetchall())
    assert flags["deep"] == 1
    assert flags["release-checklist"] == 1
    assert flags["release-foundation"] == 0 and flags["deploy"] == 0


def test_what_editors_and_merge_tools_leave_beside_a_memory_is_not_indexed(small):
    """A merge tool's `x_BASE_1234.md` shipped a rule's old text beside the new one under another
    id, and an Emacs lock link (`.#x.md`, pointing nowhere) made `index` fail while the file was
    open (a migration audit)."""
    rules = small / ".agents/.engram/rules"
    old = (
        (rules / "release-checklist.md")
        .read_text()
        .replace("zebrafish", "OLDTEXT")
        .replace("id: release-checklist\n", "")
    )
    for name in ("release-checklist_BASE_4711.md", "release-checklist_LOCAL_4711.md", ".release-checklist.md"):
        (rules / name).write_text(old)
    (rules / ".#release-checklist.md").symlink_to("/nonexistent/user@host.4711")
    hidden = small / ".agents/.engram/knowledge/.obsidian"
    hidden.mkdir()
    (hidden / "workspace.md").write_text("# not a memory\n")
    result = build(small)
    assert result.invalid == 0 and result.total == 3
    ids = {memory_id for (memory_id,) in db(small).execute("SELECT id FROM memories")}
    assert ids == {"release-checklist", "release-foundation", "deploy"}


def test_a_merge_tools_copy_is_named_by_index_and_check(small, run_engram):
    """Not indexed, so not silent either: a memory that happens to be named so would never load."""
    rules = small / ".agents/.engram/rules"
    (rules / "release-checklist_BASE_4711.md").write_text("---\nid: old\ndirective: Old text.\n---\nOld.\n")
    indexed = run_engram(["index"], cwd=small)
    assert (
        "engram: note: 1 file not indexed, named as a merge tool's copies: .agents/.engram/rules/"
        "release-checklist_BASE_4711.md (delete them after the merge, or rename a memory named so)"
    ) in indexed.stderr
    checked = run_engram(["check"], cwd=small)
    assert checked.returncode == 0
    assert (
        "rules/release-checklist_BASE_4711.md: not indexed: named as a merge tool's copy"
        in checked.stdout + checked.stderr
    )


# --- migrations -------------------------------------------------------------------------------


def test_state_migration_files_are_numbered_sql_and_end_at_the_schema_constant():
    files = sorted((REPO / "migrations" / "state").glob("*"))
    assert files, "no migrations/state"
    for path in files:
        assert re.fullmatch(r"\d{3}_[a-z0-9_]+\.sql", path.name), path.name
    versions = [v for v, _ in state_migrations()]
    assert versions == sorted(set(versions)) and versions[0] == 1
    assert versions[-1] == STATE_SCHEMA_VERSION


def test_migrate_state_sets_user_version_and_is_idempotent(tmp_path):
    conn = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
    migrate_state(conn)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == STATE_SCHEMA_VERSION
    assert {"fetches", "sessions", "delivered", "screened", "trusted"} <= {
        r[0] for r in conn.execute("SELECT name FROM sqlite_master")
    }
    migrate_state(conn)  # nothing pending: no error, same version
    assert conn.execute("PRAGMA user_version").fetchone()[0] == STATE_SCHEMA_VERSION


def test_a_new_index_gets_the_one_schema_and_its_version(tmp_path):
    conn = sqlite3.connect(tmp_path / "index.db", isolation_level=None)
    create_index(conn)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == INDEX_SCHEMA_VERSION
    assert {"meta", "files", "memories", "edges", "memories_fts"} <= {
        r[0] for r in conn.execute("SELECT name FROM sqlite_master")
    }
    assert [row[1] for row in conn.execute("PRAGMA table_info(memories_fts)")] == list(FTS_COLUMNS)


@pytest.mark.installed
@pytest.mark.slow
def test_migrations_ship_in_the_wheel_and_apply_from_it(tmp_path):
    out = tmp_path / "dist"
    pip_env = {**os.environ, "HOME": MACHINE_ENV["HOME"]}  # pip's user config names the package index
    build_proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=180,
        env=pip_env,
    )
    if build_proc.returncode != 0:
        build_proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "-q",
                "-w",
                str(out),
                str(REPO),
            ],
            capture_output=True,
            text=True,
            timeout=180,
            env=pip_env,
        )
    assert build_proc.returncode == 0, build_proc.stderr
    wheels = list(out.glob("engram-*.whl"))
    assert len(wheels) == 1
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "engram/_migrations/state/001_initial.sql" in names
    assert not [
        name for name in names if name.startswith("benchmarks/") or name in ("engram/bench.py", "engram/subsets.py")
    ]

    site = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheels[0])],
        capture_output=True,
        text=True,
        timeout=180,
        env=pip_env,
    )
    assert install.returncode == 0, install.stderr
    script = (
        "import sqlite3, sys, engram, engram.index as ix\n"
        "assert engram.__file__.startswith(sys.argv[1]), engram.__file__\n"
        "conn = sqlite3.connect(sys.argv[2] + 'state.db', isolation_level=None)\n"
        "ix.migrate_state(conn)\n"
        "print(conn.execute('PRAGMA user_version').fetchone()[0], ix.state_migrations()[-1][0])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    run = subprocess.run(
        [sys.executable, "-c", script, str(site), str(tmp_path / "fresh-")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"{STATE_SCHEMA_VERSION} {STATE_SCHEMA_VERSION}\n"
    assert not (site / "migrations").exists()  # so they can only have come from engram/_migrations


def test_a_state_db_of_an_older_version_is_migrated(tmp_path):
    from engram.state import open_state

    path = tmp_path / "state.db"
    old = sqlite3.connect(path, isolation_level=None)
    old.executescript(dict(state_migrations())[1])  # the first release's state.db
    old.execute("INSERT INTO fetches VALUES ('workspace', 'deploy', 3)")
    old.close()
    conn = open_state(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == STATE_SCHEMA_VERSION
    assert conn.execute("SELECT count FROM fetches").fetchone()[0] == 3  # kept
    assert conn.execute("SELECT count(*) FROM screened").fetchone()[0] == 0


def test_a_new_state_db_appears_whole(tmp_path):
    """Hooks run in parallel: a state.db is in place only once it is in WAL mode and migrated, and
    the one another hook created first is the one used."""
    from engram.state import open_state

    path = tmp_path / "state.db"
    first = open_state(str(path))
    first.execute("INSERT INTO fetches VALUES ('workspace', 'deploy', 3)")
    second = open_state(str(path))
    assert second.execute("PRAGMA user_version").fetchone()[0] == STATE_SCHEMA_VERSION
    assert second.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert second.execute("SELECT count FROM fetches").fetchone()[0] == 3
    assert sorted(p.name for p in tmp_path.iterdir() if "-new-" in p.name) == []
    first.close()
    second.close()


@given(st.lists(st.text(), max_size=20))
def test_the_stat_digest_hashes_the_lines_joined(lines):
    assert stat_digest(iter(lines)) == hashlib.sha256("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


@pytest.mark.parametrize("count", [DIGEST_CHUNK - 1, DIGEST_CHUNK, DIGEST_CHUNK + 1, 3 * DIGEST_CHUNK + 7])
def test_the_stat_digest_is_the_same_across_chunk_boundaries(count):
    lines = [f"rules/m{n}.md\0{n}\0{n * 7}" for n in range(count)]
    assert stat_digest(lines) == hashlib.sha256("\n".join(lines).encode()).hexdigest()

"""The test harness: temp projects holding real memory files, and `engram` run on them.

`Project` is every test's temp project; it is also its folder (``project / "src"``,
``cwd=project``). Commands run in this process by default, through the console script's own entry
point (`engram.entry.main`) with their own argv, working directory, environment and stdin, and
with stdout and stderr captured as a process's would be. A test marked ``installed`` runs them as
the installed `engram` command in a process of its own instead: for what only a process shows
(its imports, start-up time, concurrency, kill -9, the script itself). conftest.py isolates HOME
and every ENGRAM_* and host variable for each test.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import traceback
from pathlib import Path

import sqlite_utils
import yaml

ENGRAM_BIN = shutil.which("engram", path=os.path.dirname(sys.executable)) or ""
ROOT_REL = Path(".agents") / ".engram"
FOLDERS = {"rule": "rules", "skill": "skills", "knowledge": "knowledge"}
# What engram or a host reads from the environment: no test sees the machine's.
ISOLATED_PREFIXES = ("ENGRAM_", "CURSOR_", "CLAUDE_", "CODEX_", "GEMINI_")
# The machine's environment as the test run found it: pip and git read their user config through HOME.
MACHINE_ENV = dict(os.environ)
TIMEOUT_S = 60

COUNT_LINE = re.compile(r"^(?:engram: )?loaded (\d+) memory files / (\d+) total related memories$")
EMPTY_COUNT_LINE = "loaded 0 memory files / 0 total related memories"


def engram_env(config_dir: Path, **extra: str) -> dict[str, str]:
    """This environment without any ENGRAM_* or host variable, with ``config_dir`` (made here) as the
    user config folder: what every command of a test runs with, `extra` added."""
    config_dir.mkdir(parents=True, exist_ok=True)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(ISOLATED_PREFIXES) or k == "ENGRAM_CACHE_DIR"}
    return {**clean, "ENGRAM_CONFIG_DIR": str(config_dir), **extra}


def git(cwd: str | os.PathLike, *args: str) -> str:
    """`git ARGS` in ``cwd`` with a test identity; its stdout (a failure fails the test)."""
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=True).stdout


# --- running engram ------------------------------------------------------------------------------


class Result:
    """What a command did: its exit code and its output as text."""

    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr

    def __repr__(self) -> str:
        return f"Result(returncode={self.returncode}, stdout={self.stdout[:400]!r}, stderr={self.stderr[:400]!r})"

    @property
    def lines(self) -> list[str]:
        return self.stdout.splitlines()

    def json(self) -> dict:
        return json.loads(self.stdout)

    def counts(self) -> tuple[int, int]:
        match = COUNT_LINE.match(self.lines[0])
        assert match, f"first line is not a count line: {self.lines[:1]!r}"
        return int(match.group(1)), int(match.group(2))


def engram(
    args: list, cwd: str | os.PathLike, env: dict[str, str] | None = None, stdin: bytes = b"", *,
    installed: bool = False, check_traceback: bool = True,
) -> Result:  # fmt: skip
    """Run `engram ARGS` (str or bytes arguments) in ``cwd`` with ``env`` (default: this environment)."""
    argv = [os.fsdecode(a) if isinstance(a, bytes) else str(a) for a in args]
    run = run_installed if installed else run_in_process
    result = run(argv, os.fspath(cwd), dict(os.environ) if env is None else env, stdin)
    if check_traceback:
        assert "Traceback" not in result.stderr, f"engram {argv} printed a traceback:\n{result.stderr}"
        assert "Traceback" not in result.stdout, f"engram {argv} printed a traceback:\n{result.stdout}"
    return result


def run_installed(argv: list[str], cwd: str, env: dict[str, str], stdin: bytes) -> Result:
    assert ENGRAM_BIN, "the engram command is not installed next to the test interpreter"
    proc = subprocess.run([ENGRAM_BIN, *map(os.fsencode, argv)], cwd=cwd, env=env, input=stdin, capture_output=True,
                          timeout=TIMEOUT_S)  # fmt: skip
    return Result(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))


def run_in_process(argv: list[str], cwd: str, env: dict[str, str], stdin: bytes) -> Result:
    """`engram.entry.main` as the console script runs it, with this call's argv, cwd, environment and
    stdin; stdout and stderr encode as a process's do (UTF-8; unencodable text escaped, not raised)."""
    from engram.entry import main

    out, err = io.BytesIO(), io.BytesIO()
    streams = (
        io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8", errors="surrogateescape"),
        io.TextIOWrapper(out, encoding="utf-8", errors="surrogateescape", write_through=True),
        io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True),
    )
    with _process_state([ENGRAM_BIN, *argv], cwd, env, streams):
        code = _exit_code(main)
        sys.stdout.flush()
        sys.stderr.flush()
    return Result(code, out.getvalue().decode("utf-8", "replace"), err.getvalue().decode("utf-8", "replace"))


@contextlib.contextmanager
def _process_state(argv: list[str], cwd: str, env: dict[str, str], streams: tuple):
    from engram.watch import process_state

    main_module = sys.modules["__main__"]
    saved = (sys.argv, main_module.__package__)
    try:
        main_module.__package__ = None  # as in the console script: click names the program after argv[0], `engram`
        sys.argv = argv
        with process_state(cwd, env, streams):
            yield
    finally:
        sys.argv, main_module.__package__ = saved


def _exit_code(main) -> int:
    """The exit status a process running ``main`` would end with; an uncaught exception prints its traceback."""
    try:
        main()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except Exception:  # noqa: BLE001 - what the interpreter does with it
        traceback.print_exc()
        return 1
    return 0


# --- projects ------------------------------------------------------------------------------------


def _yaml_value(value) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def memory_text(memory_id: str, body: str, **fields) -> str:
    """A memory file: frontmatter with ``id`` and ``fields`` (in order; lists as YAML flow lists,
    a string as written), then ``body``."""
    lines = ["---", f"id: {memory_id}"]
    lines += [f"{key}: {_yaml_value(value)}" for key, value in fields.items() if value is not None]
    lines.append("---")
    return "\n".join(lines) + "\n" + body.rstrip("\n") + "\n"


def write_memory(project: Project | Path, rel: str, frontmatter: dict | str | None, body: str = "") -> Path:
    """Write a memory file at ``rel`` under the memory root (``rules/x.md``). ``frontmatter``: a dict
    (dumped with yaml), raw YAML (without the ``---`` fences), or None for a file without frontmatter."""
    path = Path(project) / ROOT_REL / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(frontmatter, dict):
        frontmatter = yaml.safe_dump(frontmatter, sort_keys=False, allow_unicode=True)
    if frontmatter is not None and not frontmatter.endswith("\n"):
        frontmatter += "\n"
    path.write_text(body if frontmatter is None else f"---\n{frontmatter}---\n{body}", encoding="utf-8")
    return path


class Project:
    """A temp project with ``.agents/.engram/{rules,skills,knowledge}/`` and its own user config folder."""

    def __init__(self, base: Path, installed: bool = False) -> None:
        self.base = base
        self.path = base / "proj"
        self.root = self.path / ROOT_REL
        for folder in FOLDERS.values():
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        self.cfg = base / "cfg"
        self.cfg.mkdir(exist_ok=True)
        self.global_root: Path | None = None
        self.installed = installed  # commands run as the installed `engram` (a test marked `installed`)

    @classmethod
    def copy_of(cls, template: Project, base: Path, installed: bool = False) -> Project:
        """A copy of ``template``'s project folder, its index brought up to date: a copy gives every
        file a new ctime, which the index's stat of each file holds (docs/speed.md)."""
        shutil.copytree(template.path, base / "proj")
        copy = cls(base, installed)
        if (copy.root / "index.db").exists():
            from engram.compile import compile_root
            from engram.workspace import open_workspace

            workspace = open_workspace(str(copy.path))
            compile_root(workspace.root, workspace.config)
        return copy

    def __fspath__(self) -> str:
        return str(self.path)

    def __truediv__(self, other: str | os.PathLike) -> Path:
        return self.path / other

    def __str__(self) -> str:
        return str(self.path)

    # --- writing memories and config --------------------------------------------------------------

    def write(self, memory_id: str, body: str, *, type: str = "rule", folder: str | None = None,
              root: Path | None = None, filename: str | None = None, **fields) -> Path:  # fmt: skip
        """Write a memory of ``type`` into its folder (``rules/`` for a rule ...)."""
        root = root or self.root
        path = root / (folder or FOLDERS.get(type, "skills")) / (filename or f"{memory_id}.md")
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

    # --- running ----------------------------------------------------------------------------------

    def env(self, extra: dict | None = None) -> dict[str, str]:
        env = engram_env(self.cfg)
        if self.global_root is not None:
            env["ENGRAM_GLOBAL_DIR"] = str(self.global_root)
        return {**env, **(extra or {})}

    def run(self, *args, env: dict | None = None, stdin: bytes = b"", check_traceback: bool = True) -> Result:
        return engram(
            list(args), self.path, self.env(env), stdin, installed=self.installed, check_traceback=check_traceback
        )

    def index(self) -> Result:
        result = self.run("index")
        assert result.returncode == 0, result
        return result

    def load(self, *args, **kw) -> Result:
        return self.run("load", *args, **kw)

    def load_json(self, *args, **kw) -> dict:
        result = self.load("--json", *args, **kw)
        assert result.returncode == 0, result.stderr
        return result.json()

    def run_hook(self, host: str, stdin: bytes, env: dict | None = None) -> Result:
        """`engram hook --host HOST` with ``stdin``: exit 0 and one line of JSON, whatever the input."""
        result = self.run("hook", "--host", host, env=env, stdin=stdin)
        assert result.returncode == 0, result.stderr
        assert result.stdout.count("\n") == 1 and result.stdout.endswith("\n"), result.stdout
        return result

    def hook(self, host: str, payload: dict, env: dict | None = None) -> dict:
        out = self.run_hook(host, json.dumps(payload).encode(), env).json()
        assert isinstance(out, dict)
        return out

    # --- reading what engram wrote ----------------------------------------------------------------

    def rows(self, table: str, database: str = "index.db") -> list[dict]:
        """The rows of a table of the root's index.db or state.db."""
        db = sqlite_utils.Database(sqlite3.connect(self.root / database))
        try:
            return list(db[table].rows)
        finally:
            db.conn.close()

    def delivered(self) -> list[tuple[str, str, str, str]]:
        """(host, session, agent, memory) of every memory a hook delivered, sorted."""
        return sorted((r["host"], r["session"], r["agent"], r["memory"]) for r in self.rows("delivered", "state.db"))


# --- reading packs -------------------------------------------------------------------------------


def entry_ids(payload: dict) -> list[str]:
    return [e["id"] for e in payload["entries"]]


def omitted_reasons(payload: dict) -> dict[str, str]:
    return {o["id"]: o["reason"] for o in payload["omitted"]}


def heading_ids(stdout: str) -> list[str]:
    """Ids of the bodies printed (``### <id> [...]`` headings), in order."""
    return re.findall(r"^### (\S+) \[", stdout, re.M)


def printed_ids(stdout: str) -> list[str]:
    """Ids of the bodies and cards printed, in the order printed."""
    return [
        heading or card
        for heading, card in re.findall(r"^(?:### (\S+) \[|- (\S+) \[(?:rule|skill|knowledge)\] )", stdout, re.M)
    ]


def card_ids(stdout: str) -> list[str]:
    """Ids of the cards printed (``- <id> [<type>] ...``), in order."""
    return re.findall(r"^- (\S+) \[(?:rule|skill|knowledge)\] ", stdout, re.M)

"""The pieces of the end-to-end suite: installing the pinned host CLIs, bounded processes, the mock model,
and a small engram project (stdlib only, so `install_hosts.py` can use it before pytest runs)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

HERE = Path(__file__).resolve().parent
T = TypeVar("T")
# The versions this suite was written against; ENGRAM_E2E_<HOST>_VERSION tries another one.
PINNED = {
    "claude": ("@anthropic-ai/claude-code", "2.1.197"),
    "codex": ("@openai/codex", "0.171.0"),
    "gemini": ("@google/gemini-cli", "0.61.0"),
}
CACHE = Path(os.environ.get("ENGRAM_E2E_CACHE", "~/.cache/engram-e2e")).expanduser()
NPM_TIMEOUT = 900
HOST_TIMEOUT = 120  # one host run; a hung CLI is killed with its whole process group

# A line of each memory's body: a check passes when it reaches the model.
SESSION_BODY = "BODYMARK-SESSION the default branch is main and CI runs make test."
RELEASE_BODY = "BODYMARK-RELEASE bump the version, run the tests, then tag and push."
APIERR_BODY = "BODYMARK-APIERR handlers return problem+json errors with type, title and status."
WEB_BODY = "BODYMARK-WEB pages escape every value they render."


# --- the host CLIs ----------------------------------------------------------------------------------


def version(host: str) -> str:
    return os.environ.get(f"ENGRAM_E2E_{host.upper()}_VERSION", PINNED[host][1])


def installed_version(package: str) -> str | None:
    try:
        manifest = json.loads((CACHE / "npm" / "node_modules" / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    return manifest.get("version")


def host_bin(host: str) -> Path:
    return CACHE / "npm" / "node_modules" / ".bin" / host


def missing_hosts() -> list[str]:
    return [host for host, (package, _) in PINNED.items() if installed_version(package) != version(host)]


def install_hosts() -> None:
    """npm-install the pinned CLIs into the cache folder, unless they are there already."""
    missing = missing_hosts()
    if not missing:
        return
    specs = [f"{PINNED[host][0]}@{version(host)}" for host in missing]
    (CACHE / "npm").mkdir(parents=True, exist_ok=True)
    command = ["npm", "install", "--prefix", str(CACHE / "npm"), "--no-audit", "--no-fund", "--loglevel=error", *specs]
    done = run(command, cwd=CACHE, env=os.environ.copy(), timeout=NPM_TIMEOUT)
    if done.returncode != 0 or missing_hosts():
        raise RuntimeError(f"npm install {' '.join(specs)} failed: {done.stderr[-800:]}")


# --- processes --------------------------------------------------------------------------------------


class Done:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr


def run(
    command: list[str], cwd: Path, env: dict[str, str], timeout: float = HOST_TIMEOUT, stdin: str | None = None
) -> Done:
    """Run a command in a process group of its own; whatever it leaves running is stopped with it."""
    proc = subprocess.Popen(
        command, cwd=cwd, env=env, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    try:
        out, err = proc.communicate(stdin.encode() if stdin is not None else None, timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        stop_group(proc.pid)
        out, err = proc.communicate(timeout=30)
        code = 124
    stop_group(proc.pid)  # a host's helpers (MCP servers, shells) must not outlive the run
    return Done(code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


def stop_group(pgid: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        time.sleep(0.3)


def base_env(home: Path) -> dict[str, str]:
    """A clean environment: an empty HOME, no engram or host variables from the caller."""
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    node = os.path.dirname(shutil.which("node") or "/usr/bin/node")
    path = os.pathsep.join([str(host_bin("claude").parent), os.path.dirname(sys.executable), node, "/usr/bin", "/bin"])
    return {"PATH": path, "HOME": str(home), "TMPDIR": str(home / "tmp"), "LANG": "C.UTF-8", "TERM": "dumb",
            "NO_COLOR": "1", "ENGRAM_CONFIG_DIR": str(home / ".engram")}  # fmt: skip


# --- the mock model ---------------------------------------------------------------------------------


class Mock:
    """mock_model.py in a process of its own, and what it recorded."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.config_path = folder / "mock.json"
        self.log = folder / "requests.jsonl"
        self.settings: dict = {"log": str(self.log), "port_file": str(folder / "port"), "scripts": {}}
        self.configure()
        self.proc = subprocess.Popen([sys.executable, str(HERE / "mock_model.py"), str(self.config_path), "1800"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        port_file = Path(self.settings["port_file"])
        deadline = time.monotonic() + 15
        while not port_file.exists() and time.monotonic() < deadline and self.proc.poll() is None:
            time.sleep(0.05)
        if not port_file.exists():
            self.stop()
            raise RuntimeError("the mock model did not start")
        self.port = int(port_file.read_text())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def configure(self, **settings: object) -> None:
        self.settings.update(settings)
        self.config_path.write_text(json.dumps(self.settings), encoding="utf-8")

    def entries(self, since: int = 0) -> list[dict]:
        """Every request recorded, from the `since`-th on."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()[since:] if line.strip()]

    def requests(self, api: str, since: int = 0) -> list[dict]:
        """The model calls of one API (the agent loop offers tools; side questions do not), from `since` on."""
        return [e for e in self.entries(since) if e["api"] == api and (e["body"] or {}).get("tools")]

    def mark(self) -> int:
        return len(self.log.read_text(encoding="utf-8").splitlines()) if self.log.exists() else 0

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)


def serving(host: T) -> Iterator[T]:
    """A module fixture's body: the host (a test's project and mock), its mock stopped afterwards."""
    try:
        yield host
    finally:
        host.mock.stop()


def body_text(request: dict | None) -> str:
    return json.dumps(request["body"], ensure_ascii=False) if request else ""


def copies(request: dict | None, needle: str) -> int:
    return body_text(request).count(needle)


# --- an engram project ------------------------------------------------------------------------------

MEMORIES = {
    "rules/release-checklist.md": ("id: release-checklist\ntags: [release, deploy]\n"
                                   "directive: Run the release checklist before tagging a release.\n"
                                   'triggers: ["cut a release", "ship it"]', RELEASE_BODY),
    "rules/api-errors.md": ("id: api-errors\ntags: [api, errors]\ndirective: API handlers return problem+json errors.\n"
                            'applies_to: ["src/api/**"]', APIERR_BODY),
    "rules/web-pages.md": ("id: web-pages\ntags: [web, pages]\ndirective: Pages escape what they render.\n"
                           'applies_to: ["src/web/**"]', WEB_BODY),
    "knowledge/session-notes.md": ("id: session-notes\ntags: [always]\n"
                                   "directive: This repository is a fixture for engram's hooks.", SESSION_BODY),
}  # fmt: skip


def make_project(
    path: Path, engram: str, env: dict[str, str], path_rules: str = "native", session: bool = True
) -> Path:
    """A git project with the four memories above, indexed; `session=False` leaves out the `always` one."""
    (path / "src" / "api").mkdir(parents=True)
    (path / "src" / "web").mkdir(parents=True)
    (path / "src" / "api" / "handler.py").write_text("def handle(request):\n    return {'ok': True}\n")
    (path / "src" / "web" / "page.py").write_text("PAGE = '<h1>hi</h1>'\n")
    for command in (["git", "init", "-q"], [engram, "init"]):
        assert run(command, path, env, timeout=60).returncode == 0
    root = path / ".agents" / ".engram"
    for rel, (frontmatter, body) in MEMORIES.items():
        if session or "always" not in frontmatter:
            (root / rel).write_text(f"---\n{frontmatter}\n---\n# {rel}\n\n## Content\n- {body}\n", encoding="utf-8")
    config = json.loads((root / "engram.config.json").read_text())
    config["hooks"] = {"path_rules": path_rules}
    (root / "engram.config.json").write_text(json.dumps(config), encoding="utf-8")
    assert run([engram, "index"], path, env, timeout=60).returncode == 0
    return path


def delivered(project: Path, host: str) -> dict[str, set[str]]:
    """Session id -> the memories engram has marked delivered to it (read from state.db)."""
    path = project / ".agents" / ".engram" / "state.db"
    if not path.exists():
        return {}
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT session, memory FROM delivered WHERE host = ? AND agent = ''", (host,)).fetchall()
    out: dict[str, set[str]] = {}
    for session, memory in rows:
        out.setdefault(session, set()).add(memory)
    return out


# --- pointing each host at the mock -----------------------------------------------------------------


def claude_env(home: Path, mock: Mock) -> dict[str, str]:
    return base_env(home) | {
        "ANTHROPIC_BASE_URL": mock.url, "ANTHROPIC_API_KEY": "sk-ant-mock", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
    }  # fmt: skip


def codex_env(home: Path, mock: Mock, project: Path, extra_config: str = "") -> dict[str, str]:
    """An isolated CODEX_HOME whose provider is the mock (a known model name, so Codex offers apply_patch)."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "gpt-5.5"\nmodel_provider = "mock"\ncheck_for_update_on_startup = false\n{extra_config}\n'
        f'[model_providers.mock]\nname = "mock"\nbase_url = "{mock.url}/v1"\nwire_api = "responses"\n'
        f'env_key = "MOCK_API_KEY"\n\n[projects."{project}"]\ntrust_level = "trusted"\n\n[analytics]\nenabled = false\n',
        encoding="utf-8",
    )
    return base_env(home) | {"CODEX_HOME": str(codex_home), "MOCK_API_KEY": "mock-key"}


def gemini_env(home: Path, mock: Mock, projects: list[Path]) -> dict[str, str]:
    """API-key auth against the mock, and the projects trusted (an untrusted folder makes headless mode exit)."""
    folder = home / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    (folder / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    (folder / "trustedFolders.json").write_text(
        json.dumps({str(p): "TRUST_FOLDER" for p in projects}), encoding="utf-8"
    )
    return base_env(home) | {"GEMINI_API_KEY": "mock-key", "GOOGLE_GEMINI_BASE_URL": mock.url}


WATCH_LOG = "watch.log"  # beside the project: what `engram watch` (ENGRAM_DEBUG=1) says it ran
RELEASE_RULE = Path(".agents", ".engram", "rules", "release-checklist.md")
SERVED = "engram: watch: ran engram hook for a reader"


@contextmanager
def watching(engram: str, project: Path, env: dict[str, str]) -> Iterator[Path]:
    """`engram watch` running in the project while the block runs; its log's path."""
    log_path = project.parent / WATCH_LOG
    with log_path.open("w") as log:
        watcher = subprocess.Popen(
            [engram, "watch"], cwd=project, env={**env, "ENGRAM_DEBUG": "1"}, stdout=subprocess.PIPE, stderr=log
        )
        assert watcher.stdout is not None and watcher.stdout.readline().startswith(b"watching ")
        try:
            yield log_path
        finally:
            watcher.terminate()
            watcher.wait(timeout=30)


def edit_release_rule(project: Path, marker: str) -> None:
    rule = project / RELEASE_RULE
    rule.write_text(rule.read_text(encoding="utf-8").replace("then tag and push", f"then tag, push and {marker}"))

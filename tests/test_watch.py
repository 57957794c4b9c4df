"""`engram watch`: while it runs, `load` and hooks skip the walk, and still see every edit at once."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.autowatch import AUTO_FROM
from helpers import ENGRAM_BIN, Project, engram_env, git

pytestmark = [
    pytest.mark.installed,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="engram watch uses inotify (Linux)"),
]

VOUCHED = "engram: freshness: vouched for by engram watch, no walk"


class Watch:
    """An `engram watch` process of a project, started and waited for."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.env = engram_env(project.cfg, ENGRAM_DEBUG="1")
        self.proc = subprocess.Popen(
            [ENGRAM_BIN, "watch"], cwd=project.path, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert self.proc.stdout is not None
        self.started = self.proc.stdout.readline().decode()

    def load(self, query: str) -> tuple[str, str]:
        proc = subprocess.run(
            [ENGRAM_BIN, "load", query], cwd=self.project.path, env=self.env, capture_output=True, text=True, timeout=30
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout, proc.stderr

    def stop(self, how: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(how)
        return self.proc.wait(timeout=10)


@pytest.fixture
def watched(project: Project) -> Iterator[Watch]:
    project.write("deploy", "Ship with the canary, version ONE.", tags=["deploy"])
    project.index()
    watch = Watch(project)
    yield watch
    watch.stop(signal.SIGKILL)


def _rewrite(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def test_it_says_what_it_watches_and_readers_skip_the_walk(watched: Watch) -> None:
    assert watched.started == f"watching 3 folders of {watched.project.root}; Ctrl-C stops\n"
    mode = os.stat(watched.project.root / "watch.sock").st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600  # this user's only
    stdout, stderr = watched.load("deploy")
    assert "version ONE" in stdout and VOUCHED in stderr


def test_every_way_of_editing_is_seen_by_the_next_load(watched: Watch) -> None:
    rule = watched.project.root / "rules" / "deploy.md"
    _rewrite(rule, "ONE", "TWO")  # in place
    stdout, stderr = watched.load("deploy")
    assert "version TWO" in stdout and VOUCHED in stderr
    temp = rule.with_name(".deploy.md.swp")  # an editor's safe write: a new file renamed over the old
    temp.write_text(rule.read_text(encoding="utf-8").replace("TWO", "SIX"), encoding="utf-8")
    os.replace(temp, rule)
    assert "version SIX" in watched.load("deploy")[0]
    _rewrite(rule, "SIX", "TEN")  # the same size, and the mtime set back
    os.utime(rule, ns=(10**18, 10**18))
    assert "version TEN" in watched.load("deploy")[0]
    folder = watched.project.root / "rules" / "later" / "deeper"
    folder.mkdir(parents=True)  # a new folder, watched as soon as it appears
    watched.project.write("rollback", "Roll back the canary.", tags=["deploy"], folder="rules/later/deeper")
    stdout, stderr = watched.load("deploy rollback")
    assert "Roll back the canary." in stdout and VOUCHED in stderr
    (folder / "rollback.md").unlink()
    assert "Roll back the canary." not in watched.load("deploy rollback")[0]


def test_an_edit_reaches_the_native_rule_files_under_a_watcher(project: Project) -> None:
    """The watcher's refresh rewrites them as a read's does: under it, a read refreshes nothing (a
    red-team audit found the rule file kept the old text there)."""
    project.config({"hooks": {"native": ["claude"]}})
    project.write("deploy", "Ship with the canary, version ONE.", tags=["deploy"], applies_to='["deploy/**"]')
    project.index()
    rule_file = project.path / ".claude/rules/engram/deploy.md"
    assert "version ONE" in rule_file.read_text(encoding="utf-8")
    watch = Watch(project)
    try:
        _rewrite(project.root / "rules" / "deploy.md", "ONE", "TWO")
        stdout, stderr = watch.load("deploy")
        assert "version TWO" in stdout and VOUCHED in stderr
        assert "version TWO" in rule_file.read_text(encoding="utf-8")
    finally:
        watch.stop(signal.SIGKILL)


def test_an_edit_of_a_document_a_pointer_memory_links_to_is_seen_by_the_next_load(project: Project) -> None:
    """The watcher watches the memory folders only: a linked document outside them is stat'ed by
    every load before the watcher's word is taken (`freshness.pointed_changed`)."""
    project.write("design", "Follow @docs/design-system.md.", tags=["design"])
    project.write("deploy", "Ship with the canary, version ONE.", tags=["deploy"])
    (project / "docs").mkdir()
    (project / "docs" / "design-system.md").write_text("Buttons use the spacing tokens.\n", encoding="utf-8")
    project.index()
    watch = Watch(project)
    try:
        assert "Follow @docs/design-system.md." in watch.load("spacing tokens")[0]
        assert "Follow" not in watch.load("elevation shadows")[0]
        (project / "docs" / "design-system.md").write_text("Cards use elevation shadows.\n", encoding="utf-8")
        assert "Follow @docs/design-system.md." in watch.load("elevation shadows")[0]
    finally:
        watch.stop(signal.SIGKILL)


def test_what_the_watcher_keeps_of_an_index_follows_every_edit(watched: Watch) -> None:
    """The watcher keeps an index's answers across calls (`reads`): a word's holders change with an edit."""
    project = watched.project
    assert "version ONE" in watched.load("canary")[0]
    assert "version ONE" in watched.load("canary")[0]  # answered from what it kept
    project.write("canary-metrics", "Watch the error rate during a canary.", tags=["canary"])
    stdout, stderr = watched.load("canary")
    assert "Watch the error rate" in stdout and VOUCHED in stderr
    (project.root / "rules" / "canary-metrics.md").unlink()
    assert "Watch the error rate" not in watched.load("canary")[0]


def test_a_git_checkout_is_seen(watched: Watch) -> None:
    project = watched.project
    git(project.path, "init", "-q")
    git(project.path, "add", "-A")
    git(project.path, "commit", "-qm", "one")
    _rewrite(project.root / "rules" / "deploy.md", "ONE", "TWO")
    assert "version TWO" in watched.load("deploy")[0]
    git(project.path, "checkout", "--", ".")
    stdout, stderr = watched.load("deploy")
    assert "version ONE" in stdout and VOUCHED in stderr


def test_an_index_replaced_or_removed_behind_its_back_is_checked_before_it_is_vouched_for(watched: Watch) -> None:
    root = watched.project.root
    (root / "index.db").unlink()
    stdout, stderr = watched.load("deploy")  # the watcher builds it again before it answers
    assert "version ONE" in stdout and VOUCHED in stderr and (root / "index.db").exists()
    _rewrite(root / "rules" / "deploy.md", "ONE", "TWO")
    build = subprocess.run([ENGRAM_BIN, "index"], cwd=watched.project.path, env=watched.env, capture_output=True)
    assert build.returncode == 0  # another engram rebuilt it (or found the watcher had)
    stdout, stderr = watched.load("deploy")
    assert "version TWO" in stdout and VOUCHED in stderr


def test_a_second_watcher_is_refused_and_a_dead_ones_socket_is_replaced(watched: Watch) -> None:
    second = subprocess.run(
        [ENGRAM_BIN, "watch"], cwd=watched.project.path, env=watched.env, capture_output=True, text=True, timeout=30
    )
    assert second.returncode == 1
    assert second.stderr == f"engram: error: another engram watch is running for {watched.project.root}\n"
    watched.stop(signal.SIGKILL)  # leaves its socket behind
    assert (watched.project.root / "watch.sock").exists()
    _rewrite(watched.project.root / "rules" / "deploy.md", "ONE", "TWO")
    stdout, stderr = watched.load("deploy")
    assert "version TWO" in stdout and VOUCHED not in stderr  # nobody answers: the load walks
    again = Watch(watched.project)
    try:
        assert again.started.startswith("watching 3 folders")
        assert VOUCHED in again.load("deploy")[1]
    finally:
        again.stop()


def test_it_stops_on_sigterm_and_removes_its_socket(watched: Watch) -> None:
    assert watched.stop(signal.SIGTERM) == 0
    assert not (watched.project.root / "watch.sock").exists()
    stdout, stderr = watched.load("deploy")
    assert "version ONE" in stdout and VOUCHED not in stderr


def test_without_a_watcher_the_read_path_opens_no_socket(project: Project) -> None:
    """No socket file, no socket module: readers pay nothing for a watcher they do not run."""
    project.write("deploy", "Ship with the canary.", tags=["deploy"])
    project.index()
    code = "import sys; sys.argv = ['engram', 'load', 'deploy']; from engram.entry import main\ntry:\n    main()\n"
    code += "except SystemExit:\n    pass\nprint('socket' in sys.modules, file=sys.stderr)"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=project.path, env=engram_env(project.cfg), capture_output=True, text=True
    )
    assert "Ship with the canary." in proc.stdout and proc.stderr.strip() == "False"


def test_a_slow_answer_is_no_answer(project: Project) -> None:
    """A watcher that hangs (stopped with SIGSTOP) costs a load at most the wait, then it walks."""
    project.write("deploy", "Ship with the canary, version ONE.", tags=["deploy"])
    project.index()
    watch = Watch(project)
    try:
        watch.proc.send_signal(signal.SIGSTOP)
        _rewrite(project.root / "rules" / "deploy.md", "ONE", "TWO")
        started = time.monotonic()
        stdout, stderr = watch.load("deploy")
        assert "version TWO" in stdout and VOUCHED not in stderr
        assert time.monotonic() - started < 10
    finally:
        watch.proc.send_signal(signal.SIGCONT)
        watch.stop(signal.SIGKILL)


# --- reads answered by the watcher ----------------------------------------------------------------

PROBE = """
import sys
sys.argv = ["engram", *sys.argv[1:]]
from engram.entry import main
try:
    main()
except SystemExit as exc:
    code = exc.code
modules = ("engram.load", "engram.hook", "socket", "engram.errors")
print(code, *(name in sys.modules for name in modules), file=sys.stderr)
"""


def _probe(project: Project, env: dict[str, str], *args: str, stdin: str = "") -> tuple[str, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=project.path, env=env, input=stdin, capture_output=True, text=True
    )
    *_, last = proc.stderr.splitlines()
    return proc.stdout, last.split()


def test_the_watcher_runs_loads_and_hooks_and_their_output_is_a_process_s_own(watched: Watch) -> None:
    """Served: nothing of the read path is imported here (not even `socket`); stdout, stderr and the exit
    code are what the command prints when it runs in a process of its own."""
    project, env = watched.project, engram_env(watched.project.cfg)
    payload = (
        f'{{"session_id": "s1", "cwd": "{project.path}", "hook_event_name": "UserPromptSubmit", "prompt": "deploy"}}'
    )
    served = [
        _probe(project, env, "load", "deploy"),
        _probe(project, env, "load", "--json", "deploy"),
        _probe(project, env, "load", "--no-such-option"),
        _probe(project, env, "hook", "--host", "claude", stdin=payload),
        _probe(project, env, "hook", "--host", "claude", stdin=payload),  # delivered once: "already loaded"
    ]
    for _, status in served:
        assert status[1:] == ["False", "False", "False", "False"]  # engram.load, engram.hook, socket, engram.errors
    watched.stop()
    (project.root / "state.db").unlink()  # the hook's session starts again
    here = [
        _probe(project, env, "load", "deploy"),
        _probe(project, env, "load", "--json", "deploy"),
        _probe(project, env, "load", "--no-such-option"),
        _probe(project, env, "hook", "--host", "claude", stdin=payload),
        _probe(project, env, "hook", "--host", "claude", stdin=payload),
    ]
    assert [(out, status[0]) for out, status in served] == [(out, status[0]) for out, status in here]
    assert here[0][1][1] == "True"  # run here: the read path was imported
    assert "already loaded: deploy" in served[4][0] and served[2][1][0] == "2"


def test_a_load_whose_answer_cannot_be_written_fails_served_or_not(watched: Watch) -> None:
    """A full disk (`/dev/full`): the same one line and exit code 1 whichever process answers."""
    said = []
    for _ in ("served", "here"):
        with open("/dev/full", "w") as full:
            proc = subprocess.run(
                [ENGRAM_BIN, "load", "--id", "deploy"], cwd=watched.project.path, env=engram_env(watched.project.cfg),
                stdout=full, stderr=subprocess.PIPE, text=True, timeout=30,
            )  # fmt: skip
        said.append((proc.returncode, "No space left on device" in proc.stderr))
        watched.stop()
    assert said == [(1, True), (1, True)]


def test_a_hook_for_another_project_is_answered_for_that_project(watched: Watch, tmp_path: Path) -> None:
    other = Project(tmp_path / "elsewhere")
    other.write("rollback", "Roll back the canary.", tags=["rollback"])
    payload = (
        f'{{"session_id": "s9", "cwd": "{other.path}", "hook_event_name": "UserPromptSubmit", "prompt": "rollback"}}'
    )
    stdout, status = _probe(watched.project, engram_env(watched.project.cfg), "hook", "--host", "claude", stdin=payload)
    assert "Roll back the canary." in stdout and status[1:] == ["False", "False", "False", "False"]


def test_a_watcher_running_older_code_declines_and_stops(watched: Watch) -> None:
    """An upgrade of engram while a watcher runs: the reader runs the command itself, the watcher says
    why it stops."""
    import engram.remote

    module = Path(engram.remote.__file__)
    before = module.stat()
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    try:
        stdout, status = _probe(watched.project, engram_env(watched.project.cfg), "load", "deploy")
    finally:
        os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert "version ONE" in stdout and status[1] == "True"  # run here
    assert watched.proc.wait(timeout=10) == 1
    assert watched.proc.stderr is not None
    assert watched.proc.stderr.read().decode() == (
        "engram: error: engram changed since this watcher started (an upgrade?): stopped; start engram watch again\n"
    )
    assert not (watched.project.root / "watch.sock").exists()


def test_a_watcher_that_stops_mid_run_fails_the_load_and_gives_the_hook_an_empty_answer(project: Project) -> None:
    """A watcher that said it was ready and then went away may have run the command: the client does
    not run it again. `load` says so in one line; a hook answers `{}`, as for every failure."""
    import socket
    import threading

    project.write("deploy", "Ship with the canary.", tags=["deploy"])
    project.index()

    def vanish(listener: socket.socket) -> None:
        for _ in range(2):
            client, _ = listener.accept()
            client.recv(1 << 20)
            client.sendall(b"A")
            client.recv(1)
            client.close()

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(project.root / "watch.sock"))
        listener.listen(2)
        threading.Thread(target=vanish, args=(listener,), daemon=True).start()
        env = engram_env(project.cfg)
        load = subprocess.run([ENGRAM_BIN, "load", "deploy"], cwd=project.path, env=env, capture_output=True, text=True)
        payload = (
            f'{{"session_id": "s", "cwd": "{project.path}", "hook_event_name": "UserPromptSubmit", "prompt": "deploy"}}'
        )
        hook = subprocess.run(
            [ENGRAM_BIN, "hook", "--host", "claude"],
            cwd=project.path,
            env=env,
            input=payload,
            capture_output=True,
            text=True,
        )
    assert (load.returncode, load.stdout) == (1, "")
    assert load.stderr == "engram: error: engram watch stopped while answering; run the command again\n"
    assert (hook.returncode, hook.stdout) == (0, "{}\n")


PLANTED = """
import os, socket, sys
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o666)
os.setgid(65534)
os.setuid(65534)  # listening as another user: what SO_PEERCRED reports
listener.listen(4)
print("ready", flush=True)
listener.settimeout(5)
received = 0
try:
    while True:
        client, _ = listener.accept()
        client.settimeout(1)
        try:
            received += len(client.recv(1 << 20))
        except OSError:
            pass
        client.sendall(b"A")
        client.close()
except OSError:
    pass
print(received, flush=True)
"""


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to listen as another user")
def test_a_socket_another_user_planted_gets_nothing_and_says_nothing(project: Project) -> None:
    project.write("deploy", "Ship with the canary.", tags=["deploy"])
    project.index()
    planted = subprocess.Popen(
        [sys.executable, "-c", PLANTED, str(project.root / "watch.sock")], stdout=subprocess.PIPE, text=True
    )
    assert planted.stdout is not None and planted.stdout.readline() == "ready\n"
    env = engram_env(project.cfg, SECRET_TOKEN="do-not-send")
    load = subprocess.run([ENGRAM_BIN, "load", "deploy"], cwd=project.path, env=env, capture_output=True, text=True)
    planted.wait(timeout=20)
    assert "Ship with the canary." in load.stdout  # run here
    assert planted.stdout.readline() == "0\n"  # connected to, never written to


def test_the_client_reads_as_much_of_a_hook_s_stdin_as_the_hook_itself() -> None:
    """`remote` cannot import `hook` (its imports are what the watcher spares): the two limits are one."""
    from engram import hook, remote, sources

    assert remote.MAX_HOOK_STDIN == hook.MAX_PAYLOAD_BYTES + 1
    assert (remote.ROOT_DIR, remote.SOCKET) == (sources.ROOT_DIR, sources.WATCH_SOCKET)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def test_an_idle_watcher_sleeps(watched: Watch) -> None:
    watched.load("deploy")  # one refresh and one call behind it
    before = _cpu_seconds(watched.proc.pid)
    time.sleep(1.5)
    assert _cpu_seconds(watched.proc.pid) - before < 0.1


def test_a_watcher_of_another_install_leaves_the_call_to_the_caller_and_keeps_running(watched: Watch) -> None:
    code = (
        "import sys, engram.remote as remote\n"
        "ours = remote.code_stamp\n"
        "remote.code_stamp = lambda: '/another/install' + ours()[ours().index(chr(10)):]\n" + PROBE
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "load", "deploy"], cwd=watched.project.path,
        env=engram_env(watched.project.cfg), capture_output=True, text=True,
    )  # fmt: skip
    assert "version ONE" in proc.stdout and proc.stderr.split()[1] == "True"  # run by the caller
    assert watched.proc.poll() is None
    assert VOUCHED in watched.load("deploy")[1]


def test_outside_a_project_it_says_how_to_make_one(tmp_path: Path) -> None:
    proc = subprocess.run(
        [ENGRAM_BIN, "watch"], cwd=tmp_path, env=engram_env(tmp_path / "cfg"), capture_output=True, text=True
    )
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == "engram: error: no .agents/.engram here or above; `engram init` creates one\n"


def test_garbage_on_the_socket_is_dropped_and_the_watcher_keeps_serving(watched: Watch) -> None:
    import socket

    for junk in (b"GET / HTTP/1.1\r\n\r\n", b"run\n12:short,", b"\xff" * 100, b""):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.settimeout(5)
            client.connect(str(watched.project.root / "watch.sock"))
            client.sendall(junk)
            client.shutdown(socket.SHUT_WR)
            with contextlib.suppress(OSError):
                client.recv(100)
    assert watched.proc.poll() is None
    stdout, stderr = watched.load("deploy")
    assert "version ONE" in stdout and VOUCHED in stderr


@pytest.mark.parametrize("host, payload", [
    ("claude", {"hook_event_name": "UserPromptSubmit", "prompt": "deploy"}),
    ("codex", {"hook_event_name": "UserPromptSubmit", "prompt": "deploy", "turn_id": "t1"}),
    ("gemini", {"hook_event_name": "BeforeAgent", "prompt": "deploy"}),
    ("cursor", {"hook_event_name": "sessionStart", "conversation_id": "c1"}),
])  # fmt: skip
def test_every_host_s_hook_answers_the_same_served_or_not(watched: Watch, host: str, payload: dict) -> None:
    import json

    project, env = watched.project, engram_env(watched.project.cfg)
    watched.project.write("always-on", "Session conventions.", tags=["session-start", "deploy"])
    stdin = json.dumps(
        {"session_id": "s1", "cwd": str(project.path), "workspace_roots": [str(project.path)], **payload}
    )
    served = _probe(project, env, "hook", "--host", host, stdin=stdin)
    watched.stop()
    (project.root / "state.db").unlink()
    here = _probe(project, env, "hook", "--host", host, stdin=stdin)
    assert served[1][1:] == ["False", "False", "False", "False"] and here[1][2] == "True"
    assert served[0] == here[0] and served[0].strip() not in ("", "{}")


def test_a_config_edited_while_it_runs_is_the_one_it_indexes_with(watched: Watch) -> None:
    """`ignore.also` is read anew for each refresh: the index it vouches for leaves the memory out."""
    project = watched.project
    project.write("rollback", "Roll back the canary.", tags=["deploy"])
    assert "Roll back the canary." in watched.load("deploy rollback")[0]
    project.config({"ignore": {"also": ["rules/rollback.md"]}})
    for _ in range(3):  # the call that sees the new rules, then the watcher's own refreshes behind it
        stdout, stderr = watched.load("deploy rollback")
        assert "Roll back the canary." not in stdout and "version ONE" in stdout
    assert VOUCHED in stderr


# --- hooks.start_watch: a hook starts the watcher --------------------------------------------------


def _hook(project: Project, session: str) -> str:
    """A prompt's hook in a session of its own, so the memory is not already loaded: what it injects."""
    payload = {"hook_event_name": "UserPromptSubmit", "prompt": "how do we deploy", "cwd": str(project.path),
               "session_id": session}  # fmt: skip
    return json.dumps(project.hook("claude", payload))


def _started_watcher(project: Project, within: float = 15.0) -> int:
    """The pid of the watcher a hook started, once its socket answers."""
    deadline = time.monotonic() + within
    stamp, socket_path = project.root / ".watch.started", project.root / "watch.sock"
    while time.monotonic() < deadline:
        if stamp.exists() and socket_path.exists():
            return int(stamp.read_text())
        time.sleep(0.05)
    raise AssertionError("no watcher started")


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_with_start_watch_a_hook_starts_a_watcher_that_answers_the_next_calls(project: Project) -> None:
    project.write("deploy", "Ship with the canary, version ONE.", tags=["deploy"])
    project.config({"hooks": {"start_watch": True}})
    project.index()
    assert "version ONE" in _hook(project, "s1")  # answered at once, by this process
    pid = _started_watcher(project)
    try:
        _rewrite(project.root / "rules" / "deploy.md", "ONE", "TWO")
        proc = project.load("deploy", env={"ENGRAM_DEBUG": "1"})
        assert "version TWO" in proc.stdout and VOUCHED in proc.stderr
        (project.root / ".watch.started").unlink()
        assert "version TWO" in _hook(project, "s2")  # run by the watcher, which starts no other
        time.sleep(0.5)
        assert not (project.root / ".watch.started").exists()
    finally:
        os.kill(pid, signal.SIGTERM)
    assert _gone(pid, 10) and not (project.root / "watch.sock").exists()


def test_without_start_watch_no_hook_starts_one_and_a_start_is_tried_once_a_minute(project: Project) -> None:
    project.write("deploy", "Ship with the canary, version ONE.", tags=["deploy"])
    project.index()
    assert "version ONE" in _hook(project, "s3")
    time.sleep(0.5)
    assert not (project.root / ".watch.started").exists() and not (project.root / "watch.sock").exists()
    project.config({"hooks": {"start_watch": True}})
    (project.root / ".watch.started").write_text("0\n")  # a start tried just now, whose watcher did not come up
    assert "version ONE" in _hook(project, "s4")
    time.sleep(0.5)
    assert not (project.root / "watch.sock").exists() and (project.root / ".watch.started").read_text() == "0\n"


def _memory_files(project: Project, count: int) -> None:
    """``count`` small memory files, written directly: the walk counts files, not what they say."""
    folder = project.root / "rules" / "many"
    folder.mkdir(parents=True)
    for n in range(count):
        (folder / f"note-{n}.md").write_text(f"---\nid: note-{n}\ntype: rule\ntags: [note{n}]\n---\nNote {n}.\n")


def test_by_default_a_load_that_walks_a_thousand_memory_files_starts_a_watcher(project: Project) -> None:
    project.write("deploy", "Ship with the canary, version ONE.", tags=["deploy"])
    _memory_files(project, AUTO_FROM - 1)  # with deploy.md: AUTO_FROM files
    project.index()
    assert "version ONE" in project.load("deploy", env={"CI": "true"}).stdout  # a CI job leaves nothing behind
    time.sleep(0.5)
    assert not (project.root / ".watch.started").exists()
    assert "version ONE" in project.load("deploy", env={"CI": ""}).stdout  # walked here, and starts one
    pid = _started_watcher(project)
    try:
        _rewrite(project.root / "rules" / "deploy.md", "ONE", "TWO")
        proc = project.load("deploy", env={"ENGRAM_DEBUG": "1", "CI": ""})
        assert "version TWO" in proc.stdout and VOUCHED in proc.stderr
    finally:
        os.kill(pid, signal.SIGTERM)
    assert _gone(pid, 10)


def test_by_default_a_smaller_folder_or_start_watch_false_starts_none(project: Project) -> None:
    project.write("deploy", "Ship with the canary, version ONE.", tags=["deploy"])
    _memory_files(project, AUTO_FROM - 2)  # one file short
    project.index()
    assert "version ONE" in project.load("deploy", env={"CI": ""}).stdout and "version ONE" in _hook(project, "s1")
    project.write("extra", "One more memory.", tags=["extra"])  # AUTO_FROM files now
    project.config({"hooks": {"start_watch": False}})
    assert "version ONE" in project.load("deploy", env={"CI": ""}).stdout and "version ONE" in _hook(project, "s2")
    time.sleep(0.5)
    assert not (project.root / ".watch.started").exists() and not (project.root / "watch.sock").exists()


def test_an_idle_exit_stops_the_watcher_and_removes_its_socket(project: Project) -> None:
    project.write("deploy", "Ship with the canary.", tags=["deploy"])
    project.index()
    proc = subprocess.Popen(
        [ENGRAM_BIN, "watch", "--idle-exit", "1"], cwd=project.path, env=engram_env(project.cfg),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.wait(timeout=15) == 0
    finally:
        proc.kill()
    assert not (project.root / "watch.sock").exists()


@pytest.mark.parametrize("how", ["removed", "moved"])
def test_a_watcher_stops_once_its_root_is_removed_or_moved(project: Project, how: str) -> None:
    import shutil

    project.write("deploy", "Ship with the canary.", tags=["deploy"])
    project.index()
    proc = subprocess.Popen(
        [ENGRAM_BIN, "watch"], cwd=project.path, env=engram_env(project.cfg),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline().startswith("watching ")
        if how == "removed":
            shutil.rmtree(project.path)  # a deleted checkout or worktree
        else:
            project.root.rename(project.path / "old-root")
        assert proc.wait(timeout=20) == 1
    finally:
        proc.kill()
    assert (
        proc.stderr is not None
        and proc.stderr.read() == f"engram: error: {project.root} was removed or moved: stopped\n"
    )


def test_a_watcher_started_while_another_holds_the_root_is_refused(project: Project) -> None:
    import fcntl

    project.write("deploy", "Ship with the canary.", tags=["deploy"])
    project.index()
    held = os.open(project.root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a watcher starting at the same moment holds it
        proc = subprocess.run(
            [ENGRAM_BIN, "watch"], cwd=project.path, env=engram_env(project.cfg), capture_output=True, text=True,
            timeout=15,
        )  # fmt: skip
    finally:
        os.close(held)
    assert proc.returncode == 1
    assert proc.stderr == f"engram: error: another engram watch is running for {project.root}\n"


def test_a_start_watch_that_is_no_choice_is_named_and_starts_nothing(project: Project) -> None:
    project.write("deploy", "Ship with the canary, version ONE.", tags=["deploy"])
    project.config({"hooks": {"start_watch": 1}})  # 1 == True in Python, yet no JSON boolean
    proc = project.run("index")
    assert proc.stderr.splitlines() == ['engram: warning: config hooks.start_watch: must be true, false or "auto"']
    assert "version ONE" in _hook(project, "s1")
    time.sleep(0.5)
    assert not (project.root / ".watch.started").exists()


def test_a_sigterm_while_it_runs_a_readers_command_stops_it_after_that_answer(project: Project, monkeypatch) -> None:
    """The reader's command took the signal for its own ("interrupted") and the watcher went on:
    only a second SIGTERM stopped it (a monorepo audit)."""
    import socket

    from engram import watch
    from engram.remote import GO
    from engram.sources import Root

    def interrupted_command(fields: list[bytes]) -> bytes:
        try:
            watch._interrupt(signal.SIGTERM, None)
        except KeyboardInterrupt:
            return b"interrupted"  # as `load` answers an interrupt: exit 130, one line
        return b"not reached"

    monkeypatch.setattr(watch, "run_here", interrupted_command)
    monkeypatch.setattr(watch, "STOPPING", watch.threading.Event())
    watcher = watch.Watcher(Root(str(project.root), "workspace", str(project.path)))
    ours, theirs = socket.socketpair()
    theirs.sendall(GO)
    fields = [watcher.package + b"\n" + watcher.modules, b"load\0deploy", os.fsencode(project.path), b"", b""]
    try:
        with pytest.raises(KeyboardInterrupt):
            watcher.run(ours, fields)
        assert theirs.recv(100).endswith(b"interrupted")  # the reader still got its answer
    finally:
        theirs.close()
        watcher.inotify.close()

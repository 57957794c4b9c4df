"""`hooks.start_watch`: a hook or `load` that ran without a watcher starts `engram watch` for its workspace.

`true`: always; `"auto"` (the default): where the call walked AUTO_FROM memory files or more,
outside CI; `false`: never. Linux only (as the watcher is). The watcher runs detached (its own session, no
terminal, its output to /dev/null), so the host does not wait for it, and stops by itself after
IDLE_EXIT_S without a call. A start is tried once a minute at most: where a watcher cannot run (the
inotify limit reached, say), calls keep walking at the cost of one `stat`. `WATCH_STARTED` in the
root holds the pid of the last one started. Stdlib only, as the hook path is.
"""

from __future__ import annotations

import os
import sys
import time

from .errors import debug
from .freshness import VOUCHED_HERE, WALKED
from .paths import write_atomic
from .sources import WATCH_STARTED
from .workspace import Workspace

START_EVERY_S = 60.0
IDLE_EXIT_S = 1800  # half an hour without a call: the session is over
# From here a walk costs a call more than its routing does, and a watcher answers about three times
# as fast (docs/speed.md); below it, most folders, nothing outlives a call unless asked.
AUTO_FROM = 1000


def start_watcher(ws: Workspace) -> None:
    """Start a watcher for ``ws`` if its config asks for one and none has been started lately; a
    call the watcher itself runs (`VOUCHED_HERE`) starts nothing."""
    root = ws.root.path
    if not _wanted(ws) or not sys.platform.startswith("linux") or root in VOUCHED_HERE or not os.path.isdir(root):
        return
    stamp = os.path.join(root, WATCH_STARTED)
    try:
        if time.time() - os.stat(stamp).st_mtime < START_EVERY_S:
            return
    except FileNotFoundError:
        pass
    try:
        _start(ws, stamp)
    except OSError as exc:  # no watcher: calls walk, as without the setting
        debug(f"autowatch: cannot start engram watch: {exc}")


def _wanted(ws: Workspace) -> bool:
    wanted = ws.config.get("hooks.start_watch")
    if wanted != "auto":
        return wanted
    # A CI job's reads are over when it ends: no process is left behind in it (CI=true is set by
    # GitHub Actions, GitLab, CircleCI, Travis, Buildkite, ...).
    in_ci = os.environ.get("CI", "").lower() not in ("", "0", "false")
    return not in_ci and WALKED.get(ws.root.path, 0) >= AUTO_FROM


def _start(ws: Workspace, stamp: str) -> None:
    import subprocess  # only here: once a minute at most, and never while a watcher answers

    watcher = subprocess.Popen(
        [sys.executable, "-m", "engram", "watch", "--idle-exit", str(IDLE_EXIT_S)],
        cwd=ws.root.project,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    write_atomic(stamp, f"{watcher.pid}\n", durable=False)  # replaced, never written through a committed symlink

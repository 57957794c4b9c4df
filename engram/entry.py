"""The `engram` console script: `hook`, `load` and a plain `engram index` run before typer is imported.

Hooks fire on every prompt and file event and agents call `load` often, so
those two paths stay stdlib-only. A plain `engram index` (pre-commit hooks, CI,
editors on save) skips typer's start-up too; every other command goes through typer.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "hook":
        from .hook import main as hook_main

        sys.exit(hook_main(sys.argv[2:]))
    if command == "load":
        from .load import main as load_main

        sys.exit(_guarded(load_main, sys.argv[2:]))
    if sys.argv[1:] == ["index"]:
        from .commands import run_index

        sys.exit(_guarded(lambda _: run_index(None, "workspace"), []))
    from .cli import app

    sys.exit(_guarded(lambda _: app(), sys.argv[1:]))


def _guarded(command, argv: list[str]) -> int:
    """One-line errors instead of tracebacks, unless ENGRAM_DEBUG=1."""
    try:
        return command(argv)
    except KeyboardInterrupt:
        print("engram: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the user gets one line, never a traceback
        if os.environ.get("ENGRAM_DEBUG") == "1":
            raise
        from .gate import line  # an error can quote a file name holding anything

        print(f"engram: error: {type(exc).__name__}: {line(str(exc))}", file=sys.stderr)
        return 1

"""The `engram` console script: `hook`, `load` and a plain `engram index` run before typer is imported
(the start-up rules, docs/architecture.md); every other command goes through typer."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Callable


def main() -> None:
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if sys.stdout is None and command != "hook":  # `engram load x >&-`; a host that closed it wants no word
        print("engram: error: stdout is closed: nothing can be printed", file=sys.stderr)
        sys.exit(1)
    if command in READS:
        from .remote import answered

        code = answered(command, sys.argv[2:])  # by a running `engram watch`; None: run here
        sys.exit(run_read(command, sys.argv[2:]) if code is None else code)
    if sys.argv[1:] == ["index"]:
        from .commands import run_index

        sys.exit(guarded(lambda _: run_index(None, "workspace"), []))
    from .cli import run

    sys.exit(guarded(run, sys.argv[1:]))


READS = ("hook", "load")  # the commands of every prompt and file event


def run_read(command: str, argv: list[str]) -> int:
    """`engram hook` or `engram load` in this process (here, or inside `engram watch` for a reader)."""
    if command == "hook":
        from .hook import main as hook_main

        return hook_main(argv)
    from .load import main as load_main

    return guarded(load_main, argv)


def guarded(command: Callable[[list[str]], int], argv: list[str]) -> int:
    """The command's exit code; an `EngramError` is its one line and exit code, any other exception one
    line naming its type (a traceback only with ENGRAM_DEBUG=1)."""
    from .errors import EngramError, error, say  # here: a call a watcher answers needs none of it (`remote`)

    try:
        return command(argv)
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    except EngramError as exc:
        error(exc.message)
        return exc.exit_code
    except Exception as exc:
        if os.environ.get("ENGRAM_DEBUG") == "1":
            raise
        error(f"{type(exc).__name__}: {exc}")
        return 1

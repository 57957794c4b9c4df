"""A hook's stdin, read without waiting on a host that never closes it. Stdlib only (`select` is
built in): the console script reads it before anything else is imported (`remote`).

Hosts write one JSON object and close the pipe. One that keeps it open would hold the hook until
the host's own timeout killed it; so once what was read ends with `}`, a pause of PAUSE_S without
another byte ends the payload too. Where stdin is not a file descriptor (the watcher runs a
hook with stdin in memory), it is read to its end.
"""

from __future__ import annotations

import os
import select
import sys

PAUSE_S = 1.0
CHUNK = 1 << 16


def read_stdin(limit: int) -> bytes:
    """At most ``limit`` bytes of stdin: to its end, or to a pause after a closing `}`."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # none, closed, or in memory
        return sys.stdin.buffer.read(limit) if sys.stdin is not None else b""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        if chunks and chunks[-1].rstrip().endswith(b"}") and not select.select([fd], [], [], PAUSE_S)[0]:
            break  # a whole object, it seems, and nothing more is coming
        chunk = os.read(fd, min(CHUNK, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)

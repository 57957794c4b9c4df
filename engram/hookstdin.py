"""A hook's stdin, read without waiting on a host that never closes it. Stdlib only (`select` is
built in): the console script reads it before anything else is imported (`remote`).

Hosts write one JSON object at once and close the pipe. One that keeps it open would hold the hook
until the host's own timeout killed it, with nothing printed; so a pause of PAUSE_S without another
byte ends the payload too (whatever was read: a whole object, or bytes after it that make it no JSON,
which then gets `{}`), and so does WAIT_S with no byte at all (less than Gemini's 10 s timeout),
and TOTAL_S however the bytes trickle in (a writer sending one byte every half second).
Where stdin is not a file descriptor (the watcher runs a hook with stdin in memory), it is read to
its end.
"""

from __future__ import annotations

import os
import select
import sys
import time

PAUSE_S = 1.0
WAIT_S = 5.0
TOTAL_S = 6.0  # the whole read, under the hosts' 10 s timeout with the pack still to build
CHUNK = 1 << 16


def read_stdin(limit: int) -> bytes:
    """At most ``limit`` bytes of stdin: to its end, or to a pause once it has begun (a wait before)."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # none, closed, or in memory
        return sys.stdin.buffer.read(limit) if sys.stdin is not None else b""
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + TOTAL_S
    while size < limit:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], min(PAUSE_S if chunks else WAIT_S, left))[0]:
            break  # nothing more is coming, or not in time
        chunk = os.read(fd, min(CHUNK, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)

"""Run a command with loopback as its only network, where the machine allows it (stdlib only).

    python isolated.py COMMAND [ARG...]

As root, with `unshare` available, the command runs in a network namespace of
its own whose only interface is `lo` (brought up here): the host CLIs can reach
the mock model on 127.0.0.1 and nothing else. Elsewhere it runs as it is, and a
line says so; the hosts are still pointed at 127.0.0.1 by their settings.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import struct
import subprocess
import sys

SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
INSIDE = "--inside-namespace"


def loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14s", b"lo", 0, bytes(14))
        flags = struct.unpack("16sH14s", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, bytes(14)))


def can_unshare() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    return subprocess.run(["unshare", "--net", "true"], capture_output=True, timeout=10).returncode == 0


def main(argv: list[str]) -> int:
    if argv[:1] == [INSIDE]:
        loopback_up()
        os.execvp(argv[1], argv[1:])
    if can_unshare():
        print("e2e: running in a private network namespace (loopback only)", flush=True)
        return subprocess.run(["unshare", "--net", "--fork", sys.executable, __file__, INSIDE, *argv]).returncode
    print("e2e: no private network namespace here; the hosts reach only 127.0.0.1 through their settings", flush=True)
    return subprocess.run(argv).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

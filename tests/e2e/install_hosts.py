"""Install the pinned host CLIs into the e2e cache folder (`make e2e` runs this before the suite)."""

import sys

import harness

if __name__ == "__main__":
    try:
        harness.install_hosts()
    except RuntimeError as error:
        sys.exit(f"e2e: {error}")
    for host in harness.PINNED:
        print(f"e2e: {host} {harness.version(host)} at {harness.host_bin(host)}")

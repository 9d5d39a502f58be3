"""Fails its first handshake of the run (marker file ``FLAKY_MARKER`` missing:
create it and exit), then behaves as a random mover: the retry with a fresh
process succeeds (specs/tournament.md §Engine faults)."""

import os
import sys

marker = os.environ["FLAKY_MARKER"]
if not os.path.exists(marker):
    open(marker, "w").close()
    sys.stdin.readline()
    sys.exit(0)

from sample_engines.random import main  # noqa: E402

main()

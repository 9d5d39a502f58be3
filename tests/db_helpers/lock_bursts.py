"""Another process writing the same database: takes its write lock in bursts.

Usage: ``python lock_bursts.py DB HOLD_MS EVERY_MS``.  Each burst begins a
write transaction (``BEGIN IMMEDIATE``), writes a row into this helper's own
table ``lock_bursts`` (so the file really changes under the arbiter, as a
tool's or a second run's commit would), holds the lock ``HOLD_MS`` and
commits; then it sleeps the rest of ``EVERY_MS``.  It prints ``locked`` (once,
flushed) when it first holds the lock, and on SIGTERM the number of bursts it
committed, then exits 0.  A huge ``HOLD_MS`` holds the lock until killed.
"""

from __future__ import annotations

import signal
import sqlite3
import sys
import time

#: seconds this helper itself waits for the arbiter's write lock (the
#: arbiter's transactions are short; this only has to outlast them)
HELPER_BUSY_TIMEOUT = 60.0


def main(path: str, hold_ms: float, every_ms: float) -> None:
    bursts = 0

    def done(*_: object) -> None:
        print(bursts, flush=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, done)
    conn = sqlite3.connect(path, timeout=HELPER_BUSY_TIMEOUT, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE IF NOT EXISTS lock_bursts (n INTEGER, at REAL)")
    while True:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO lock_bursts VALUES (?, ?)", (bursts + 1, time.time()))
        if bursts == 0:
            print("locked", flush=True)
        time.sleep(hold_ms / 1000)
        # SIGTERM held back between the commit and the count, so the number
        # printed is exactly the bursts committed (it could run in between)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        conn.execute("COMMIT")
        bursts += 1
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        time.sleep(max(0.0, every_ms - hold_ms) / 1000)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), float(sys.argv[3]))

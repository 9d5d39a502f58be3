"""Writes stdout without end and never reads again, like ``yes``.

``flood_output.py WHEN FORM``: WHEN is ``before`` (from its start, before
``ugi``), ``after`` (a proper handshake, then the flood, from the
arbiter's next command on) or ``go`` (a proper start, then the flood at its
first ``go``, instead of a ``bestmove``); FORM is ``lines`` (``y`` lines, each an unknown
command the protocol says to ignore) or ``raw`` (no newline ever).  It ignores
``quit`` and the end of its input (it never reads them): only a signal ends it.
"""
import sys

from _base import handshake, out, run

WHEN, FORM = sys.argv[1], sys.argv[2]
CHUNK = b"y\n" * 32768 if FORM == "lines" else b"y" * 65536


def flood(state=None):
    while True:
        out.write(CHUNK)
        out.flush()


def on_ugi(state):
    handshake(state)
    for raw in sys.stdin.buffer:  # the next command: from here on, only the flood
        if raw.strip():
            flood()


if WHEN == "before":
    flood()
if WHEN == "go":
    run(on_go=flood)
run(on_ugi=on_ugi)

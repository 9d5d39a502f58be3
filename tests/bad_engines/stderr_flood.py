"""Writes 2 MB to stderr before answering ``ugi``, and more before each move:
an arbiter that does not drain stderr would deadlock with it."""
import sys

from _base import handshake, play, run


def on_ugi(state):
    sys.stderr.write(("warming up " * 10 + "\n") * 20000)
    sys.stderr.flush()
    handshake(state)


def on_go(state):
    sys.stderr.write("searching\n" * 20000)
    sys.stderr.flush()
    play(state)


run(on_ugi=on_ugi, on_go=on_go)

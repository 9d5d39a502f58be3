"""Floods about 4 MB of ``info`` lines before every move (and a few lines of
stderr), then plays well.  The last line carries depth 99 and the pv.

``FLOOD_BLOCKS`` (environment, default 20) sets the flood in blocks of 1000
lines (about 220 KiB): the checker's tests, which only need a flood well past
the checker's limit on each of their ~80 searches, write fewer."""
import os
import sys

from _base import run, say

BLOCK = b"".join(
    b"info depth %d score cp %d nodes %d nps 1000 pv a1 b2 c3 d4 e5 f6 g7 h8 string %s\n"
    % (i % 50, i, i * 10, b"x" * 150) for i in range(1000))

BLOCKS = int(os.environ.get("FLOOD_BLOCKS", "20"))


def on_go(state):
    for _ in range(BLOCKS):
        say(BLOCK)
    sys.stderr.write("thinking hard\n" * 10)
    move = state.first_legal()
    say(f"info depth 99 score cp 42 nodes 123456 time 7 pv {move}")
    say(f"bestmove {move}")


run(on_go=on_go)

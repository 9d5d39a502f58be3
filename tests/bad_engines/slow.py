"""Well behaved but slow: sleeps the seconds given as its argument before
each move (default 0.5)."""
import sys
import time

from _base import play, run

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5


def on_go(state):
    time.sleep(DELAY)
    play(state)


run(on_go=on_go)

"""Plays its first move, then dies (exit status 4) a moment later, while the
opponent is thinking."""
import os
import time

from _base import play, run


def on_go(state):
    play(state)
    time.sleep(0.2)
    os._exit(4)


run(on_go=on_go)

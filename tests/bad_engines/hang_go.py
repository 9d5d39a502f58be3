"""Plays one move, then hangs in its second ``go``: stops reading, never answers."""
import time

from _base import play, run


def on_go(state):
    if state.searches >= 2:
        time.sleep(3600)
    play(state)


run(on_go=on_go)

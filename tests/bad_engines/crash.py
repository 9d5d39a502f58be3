"""Plays two moves, then dies (exit status 3) on its third ``go``: a crash mid-game."""
import os

from _base import play, run


def on_go(state):
    if state.searches >= 3:
        os._exit(3)
    play(state)


run(on_go=on_go)

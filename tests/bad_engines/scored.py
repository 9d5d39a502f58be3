"""Plays the first legal move and reports the score of the environment's
SCORE (for instance ``cp -700`` or ``winprob 0.02``) with every move: an
engine whose opinion the adjudication tests choose."""
import os

from _base import run, say


def go(state):
    say(f"info depth 1 score {os.environ.get('SCORE', 'cp 0')} pv {state.first_legal()}")
    say(f"bestmove {state.first_legal()}")


run(on_go=go)

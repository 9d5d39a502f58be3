"""Answers its first ``go`` with two ``bestmove`` lines."""
from _base import run, say


def on_go(state):
    move = state.first_legal()
    say(f"bestmove {move}\nbestmove {move}")


run(on_go=on_go)

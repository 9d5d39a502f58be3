"""Plays well, except its second move is the game's first move again
(an occupied cell): illegal."""
from _base import play, run, say


def on_go(state):
    if state.searches == 2 and state.moves:
        say(f"bestmove {state.moves[0]}")
    else:
        play(state)


run(on_go=on_go)

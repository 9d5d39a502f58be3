"""Plays the first legal move, and lies in its ``info`` line as the
environment says (for strict mode, specs/match.md §Strict mode):

* ``LIE_PV``: the principal variation it reports (default: the move it plays);
* ``LIE_SCORE``: the score it reports (``mate 3``; default ``cp 0``);
* ``LIE_TIME``: the ``info time`` it reports, in ms (default: none).
"""
import os

from _base import run, say


def go(state):
    move = state.first_legal()
    time = os.environ.get("LIE_TIME")
    fields = ["info depth 1", f"score {os.environ.get('LIE_SCORE', 'cp 0')}"]
    if time is not None:
        fields.append(f"time {time}")
    fields.append(f"pv {os.environ.get('LIE_PV', move)}")
    say(" ".join(fields))
    say(f"bestmove {move}")


run(on_go=go)

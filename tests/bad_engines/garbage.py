"""Answers ``go`` with garbage: a ``bestmove`` line that is not ``bestmove
<move>``.  The argument picks which: ``empty`` (no move), ``many`` (three
tokens), ``binary`` (control characters), ``noise`` (random bytes, no
bestmove at all), ``word`` (a well-formed token that is no move)."""
import sys

from _base import run, say

KIND = sys.argv[1] if len(sys.argv) > 1 else "empty"
LINES = {
    "empty": b"bestmove\n",
    "many": b"bestmove a1 b2 c3\n",
    "binary": b"bestmove \x01\x02\x1b[31m\n",
    "noise": b"\x00\x9f\x12garbage\x7f \x00\n\xde\xad\xbe\xef\n",
    "word": b"bestmove hello\n",
}


def on_go(state):
    say(LINES[KIND])


run(on_go=on_go)

"""Writes invalid UTF-8: in its name, in info lines, and (with argument
``move``) in its ``bestmove``; otherwise it plays well."""
import sys

from _base import GAME_NAMES, run, say

IN_MOVE = sys.argv[1:] == ["move"]


def on_ugi(state):
    say(b"id name bad\xff\xfeutf8\n")
    say(b"id author \xc3\x28\n")
    say("option name UGI_Game type combo default troll " + " ".join(f"var {g}" for g in GAME_NAMES))
    say("ugiok")


def on_go(state):
    say(b"info string \x80\x81\x82 depth \xed\xa0\x80\n")
    if IN_MOVE:
        say(b"bestmove \xff\xfe\n")
    else:
        say(f"bestmove {state.first_legal()}")


run(on_ugi=on_ugi, on_go=on_go)

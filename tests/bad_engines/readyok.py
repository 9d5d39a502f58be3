"""``readyok`` misbehaviour (specs/match.md §Terminations, ``readyok``).

``never``: never answers ``isready`` (otherwise plays well).
``unasked``: plays well, but writes ``readyok`` nobody asked for after its
first ``bestmove`` (during the game)."""
import sys

from _base import State, handshake, play, say

mode = sys.argv[1]
state = State()
searches = 0
for raw in sys.stdin.buffer:
    words = raw.decode().split()
    if not words:
        continue
    if words[0] == "ugi":
        handshake(state)
    elif words[0] == "isready" and mode != "never":
        say("readyok")
    elif words[0] == "position":
        rest = words[1:]
        moves_at = rest.index("moves") if "moves" in rest else len(rest)
        state.fen = " ".join(rest[1:moves_at]) if rest[0] == "fen" else None
        state.moves = rest[moves_at + 1:]
    elif words[0] == "go":
        play(state)
        searches += 1
        if mode == "unasked" and searches == 1:
            say("readyok")
    elif words[0] == "quit":
        break

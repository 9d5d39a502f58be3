"""An instant engine for benchmarks: replays a recorded legal game.

``REPLAY_MOVES`` (environment) holds the moves of one finished game of
``REPLAY_GAME``; after ``position ... moves m1 .. mk`` the answer to ``go`` is
move k+1, written at once -- no referee, no search, no time management -- so
that what a benchmark measures is the arbiter.  Speaks just enough of
specs/protocol.md: ugi, isready, setoption, uginewgame, position, go, quit.
"""

import os
import sys

MOVES = os.environ["REPLAY_MOVES"].split()
GAME = os.environ.get("REPLAY_GAME", "troll")
out = sys.stdout
ply = 0
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    command = words[0]
    if command == "ugi":
        out.write(f"id name Replay\nid author arbiter bench\n"
                  f"option name UGI_Game type combo default {GAME} var {GAME}\nugiok\n")
    elif command == "isready":
        out.write("readyok\n")
    elif command == "position":
        ply = len(words) - words.index("moves") - 1 if "moves" in words else 0
    elif command == "go":
        out.write(f"info depth 1 time 0\nbestmove {MOVES[ply]}\n")
    elif command == "quit":
        break
    out.flush()

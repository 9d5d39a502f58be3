"""A minimal engine written by hand (no SDK), for the match tests.

It speaks just enough of ``specs/protocol.md`` to play: the handshake (with a
``UGI_Game`` combo), ``isready``, ``setoption``, ``position`` and ``go``
(answered at once with the first legal move, found with the referee), and
``quit``.  Each misbehaving engine in this directory is this loop with one
hook replaced, so the test names exactly one fault.

Hooks receive the :class:`State` and may write anything with :func:`say`.
"""

from __future__ import annotations

import os
import sys

from arbiter.games import GAME_NAMES, get_game

out = sys.stdout.buffer


def say(text: str | bytes) -> None:
    """Write one line (or raw bytes) and flush."""
    out.write(text if isinstance(text, bytes) else (text + "\n").encode())
    out.flush()


class State:
    def __init__(self) -> None:
        self.game = os.environ.get("BAD_ENGINE_GAME", "troll")
        self.fen: str | None = None
        self.moves: list[str] = []
        self.searches = 0  # how many go commands so far
        self.go_line = ""

    def position(self):
        return get_game(self.game).position(self.fen, self.moves)

    def first_legal(self) -> str:
        return self.position().legal_moves()[0]


#: the games listed in the UGI_Game combo (BAD_ENGINE_GAMES narrows them)
GAMES = os.environ.get("BAD_ENGINE_GAMES", " ".join(GAME_NAMES)).split()


def handshake(state: State) -> None:
    say("id name " + os.environ.get("BAD_ENGINE_NAME", "bad"))
    say("id author the arbiter tests")
    say(f"option name UGI_Game type combo default {GAMES[0]} " + " ".join(f"var {g}" for g in GAMES))
    say("option name Depth type spin default 3 min 1 max 9")
    say("option name Fast type check default false")
    say("ugiok")


def play(state: State) -> None:
    say(f"bestmove {state.first_legal()}")


def quit_(state: State) -> None:
    sys.exit(0)


def ignore(state: State) -> None:
    pass


def run(on_ugi=handshake, on_go=play, on_quit=quit_, on_stop=ignore) -> None:
    state = State()
    for raw in sys.stdin.buffer:
        words = raw.decode().split()
        if not words:
            continue
        command = words[0]
        if command == "ugi":
            on_ugi(state)
        elif command == "isready":
            say("readyok")
        elif command == "setoption" and words[1:3] == ["name", "UGI_Game"] and len(words) > 4:
            state.game = words[4]
            get_game(state.game)  # load the rules now, not during the first search
        elif command == "position":
            rest = words[1:]
            moves_at = rest.index("moves") if "moves" in rest else len(rest)
            state.fen = " ".join(rest[1:moves_at]) if rest[0] == "fen" else None
            state.moves = rest[moves_at + 1:]
        elif command == "go":
            state.searches += 1
            state.go_line = raw.decode().strip()
            on_go(state)
        elif command == "stop":
            on_stop(state)
        elif command == "quit":
            on_quit(state)
    # stdin closed: like quit
    on_quit(state)

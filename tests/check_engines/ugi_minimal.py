"""A minimal UGI engine written from the cutegames ``ugi.md`` alone.

What ``ugi.md`` asks, and nothing more: ``ugi`` is answered with ``ugiok``
only (no ``id`` lines, no options), ``isready`` with ``readyok``,
``position startpos|fen <fen> [moves ...]``, ``query gameover|p1turn|result``,
``stop``, ``quit``; and ``go`` **only** in the five forms ``ugi.md`` lists::

    go p1time <ms> p2time <ms> p1inc <ms> p2inc <ms>
    go movetime <ms>
    go depth <ply>
    go nodes <nodes>
    go infinite

Any other ``go`` (a missing clock field, ``movestogo``, two limits at once)
is a manager that does not speak ``ugi.md``: the engine says so on stderr
and exits with status 3, so a test that plays it or checks it fails loudly.
``go infinite`` holds its ``bestmove`` until ``stop``; the move is the
first legal one (the referee, ``arbiter.games``, only knows the rules: none
of the protocol code of this repository is used).

Usage: ``python ugi_minimal.py [GAME]`` (default ``troll``).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from arbiter.games import get_game  # noqa: E402  (after the path is set)

#: The ``go`` forms of ugi.md: the words after ``go``, each ``N`` a number.
GO_FORMS = (
    ("p1time", "N", "p2time", "N", "p1inc", "N", "p2inc", "N"),
    ("movetime", "N"),
    ("depth", "N"),
    ("nodes", "N"),
    ("infinite",),
)


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def refuse(line: str) -> None:
    sys.stderr.write(f"ugi_minimal: not a go form of ugi.md: {line!r}\n")
    sys.stderr.flush()
    sys.exit(3)


def is_go_form(words: list[str]) -> bool:
    for form in GO_FORMS:
        if len(words) == len(form) and all(
                (want == "N" and word.lstrip("-").isdigit()) or word == want
                for word, want in zip(words, form, strict=True)):
            return True
    return False


def set_position(game, words: list[str]):
    """``position startpos|fen <fen> [moves ...]``, played by the referee."""
    moves: list[str] = []
    if "moves" in words:
        cut = words.index("moves")
        words, moves = words[:cut], words[cut + 1:]
    if words[:1] == ["startpos"]:
        position = game.start()
    else:
        position = game.from_fen(" ".join(words[1:]))
    for move in moves:
        position = position.play(move)
    return position


def answer_query(game, position, what: str) -> str:
    outcome = position.outcome()
    if what == "gameover":
        return "true" if outcome is not None else "false"
    if what == "p1turn":
        return "true" if position.to_move is game.first else "false"
    if outcome is None:
        return "none"
    if outcome.winner is None:
        return "draw"
    return "p1win" if outcome.winner is game.first else "p2win"


def main() -> None:
    game = get_game(sys.argv[1] if len(sys.argv) > 1 else "troll")
    position = game.start()
    held = None  # the bestmove of a `go infinite`, until stop
    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        command = words[0]
        if command == "ugi":
            say("ugiok")
        elif command == "isready":
            say("readyok")
        elif command == "quit":
            return
        elif command == "position":
            position = set_position(game, words[1:])
        elif command == "query" and len(words) == 2:
            say(f"response {answer_query(game, position, words[1])}")
        elif command == "go":
            if not is_go_form(words[1:]):
                refuse(raw.strip())
            moves = position.legal_moves()
            move = moves[0] if moves else "none"
            if words[1] == "infinite":
                held = move
            else:
                say(f"bestmove {move}")
        elif command == "stop" and held is not None:
            say(f"bestmove {held}")
            held = None
        # uginewgame, setoption and anything unknown: nothing to do


if __name__ == "__main__":
    main()

"""A random mover that records when it was started and ready, to check the
order of a run's start-up (specs/tournament.md §Running), without timing guesses.

* ``START_LOG``: appends ``start PID`` when the process starts and
  ``ugiok PID`` just before it answers ``ugi`` (after ``UGI_DELAY`` seconds):
  the lines show how many engines were starting at once.
* ``READY_DIR``: writes ``READY_DIR/NAME-N`` just before it answers the
  ``isready`` of its N-th game (after ``READY_DELAY`` seconds), and on each
  ``go`` checks that ``READY_DIR/OPPONENT-N`` exists: a game's first ``go``
  must wait for both engines' ``readyok``.  Anything sent to it while its
  ``readyok`` is pending is a fault too.  A fault is written to
  ``READY_DIR/fault-NAME``.

It reads its input unbuffered, one line at a time, so that whatever the
arbiter sent early is still in the pipe where ``select`` sees it."""

from __future__ import annotations

import os
import random
import select
import sys
import time

from arbiter.games import get_game

NAME = os.environ.get("NAME", "engine")
START_LOG = os.environ.get("START_LOG")
READY_DIR = os.environ.get("READY_DIR")


def log(text: str) -> None:
    if START_LOG:
        with open(START_LOG, "a") as file:
            file.write(f"{text} {os.getpid()}\n")


def fault(text: str) -> None:
    if READY_DIR:
        with open(os.path.join(READY_DIR, f"fault-{NAME}"), "a") as file:
            file.write(text + "\n")


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def read_line() -> str | None:
    """The next line, read a byte at a time (None at the end of the input)."""
    data = bytearray()
    while (byte := os.read(0, 1)) and byte != b"\n":
        data += byte
    return data.decode().strip() if data or byte else None


def pending() -> bool:
    return bool(select.select([sys.stdin.fileno()], [], [], 0)[0])


def main() -> None:
    log("start")
    game = get_game("troll")
    rng = random.Random(os.getpid())
    games = 0
    position = game.start()
    while (line := read_line()) is not None:
        words = line.split()
        if not words:
            continue
        if words[0] == "ugi":
            time.sleep(float(os.environ.get("UGI_DELAY", "0")))
            log("ugiok")
            say(f"id name {NAME}")
            say("ugiok")
        elif words[0] == "uginewgame":
            games += 1
        elif words[0] == "isready":
            time.sleep(float(os.environ.get("READY_DELAY", "0")))
            if pending():
                fault(f"game {games}: sent more before readyok")
            if READY_DIR:
                open(os.path.join(READY_DIR, f"{NAME}-{games}"), "w").close()
            say("readyok")
        elif words[0] == "position":
            fen, moves = None, []
            if "moves" in words:
                moves = words[words.index("moves") + 1:]
                words = words[: words.index("moves")]
            if len(words) > 1 and words[1] == "fen":
                fen = " ".join(words[2:])
            position = game.position(fen, moves)
        elif words[0] == "go":
            opponent = os.environ.get("OPPONENT")
            if READY_DIR and opponent and not os.path.exists(os.path.join(READY_DIR, f"{opponent}-{games}")):
                fault(f"game {games}: go before {opponent} answered readyok")
            say(f"bestmove {rng.choice(position.legal_moves())}")
        elif words[0] == "quit":
            return


if __name__ == "__main__":
    main()

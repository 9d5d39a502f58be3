"""A random mover that crashes (exit status 3) once in a whole tournament.

At its second move of a game it looks for the marker file named by the
``CRASH_MARKER`` environment variable: if the file is missing it creates it
and dies at once; otherwise it plays on.  So exactly one game of the run ends
in a crash, and the tournament must restart the engine and go on
(specs/tournament.md §Engine faults)."""

from __future__ import annotations

import os

from arbiter.games import Position
from arbiter.sdk import Engine, SearchLimits, run


class CrashOnce(Engine):
    name = "CrashOnce"
    author = "the arbiter tests"

    def new_game(self) -> None:
        self.moves_played = 0

    def choose_move(self, position: Position, limits: SearchLimits) -> str:
        self.moves_played = getattr(self, "moves_played", 0) + 1
        marker = os.environ["CRASH_MARKER"]
        if self.moves_played == 2 and not os.path.exists(marker):
            with open(marker, "w") as file:
                file.write(str(os.getpid()))
            os._exit(3)
        return self.rng.choice(position.legal_moves())


if __name__ == "__main__":
    run(CrashOnce)

"""A random mover that, after ``GATE_AFTER`` moves of its process, waits for
the file named by ``GATE`` to exist before each further move.

It holds a run in the middle of its games for as long as a test needs
(to read the standings of a running tournament, then kill it), without any
timing guess; creating the file lets it play on.  With ``GATE_WAITING`` it creates that
file when it begins to wait."""

from __future__ import annotations

import os
import time

from arbiter.games import Position
from arbiter.sdk import Engine, SearchLimits, run


class Gate(Engine):
    name = "Gate"
    author = "the arbiter tests"
    played = 0

    def choose_move(self, position: Position, limits: SearchLimits) -> str:
        self.played += 1
        if self.played > int(os.environ.get("GATE_AFTER", "0")):
            if os.environ.get("GATE_WAITING"):  # a test may want to know the run is held
                open(os.environ["GATE_WAITING"], "a").close()
            while not os.path.exists(os.environ["GATE"]):
                time.sleep(0.01)
        return self.rng.choice(position.legal_moves())


if __name__ == "__main__":
    run(Gate)

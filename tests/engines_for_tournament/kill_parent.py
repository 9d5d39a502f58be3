"""A random mover that kills its parent process (SIGKILL) at its first
``go``: an engine that takes down the worker process playing it, so that a
run's worker processes are lost again and again on the same game."""

from __future__ import annotations

import os
import signal

from arbiter.games import Position
from arbiter.sdk import Engine, SearchLimits, run


class KillParent(Engine):
    name = "KillParent"
    author = "the arbiter tests"

    def choose_move(self, position: Position, limits: SearchLimits) -> str:
        os.kill(os.getppid(), signal.SIGKILL)
        return self.rng.choice(position.legal_moves())


if __name__ == "__main__":
    run(KillParent)

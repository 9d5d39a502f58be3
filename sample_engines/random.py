"""``random``: a uniformly random legal move, seedable through the ``Seed`` option.

Run: ``python -m sample_engines.random [--game troll|atoll|morris|talisman] [--seed N]``.
"""

from __future__ import annotations

from arbiter.games import Position
from arbiter.sdk import Engine, SearchLimits, run
from protocol.messages import OptionDecl

#: Shared by every sample engine: 0 means fresh entropy, anything else
#: makes the engine's choices reproducible.
SEED_OPTION = OptionDecl("Seed", "spin", "0", 0, 2**31 - 1)


class RandomEngine(Engine):
    name = "Random"
    author = "Arbiter project"
    options = (SEED_OPTION,)

    def choose_move(self, position: Position, limits: SearchLimits) -> str:
        moves = position.legal_moves()
        move = self.rng.choice(moves)
        self.info(depth=1, nodes=len(moves), time=limits.elapsed_ms(), pv=(move,),
                  string=f"{len(moves)} legal moves")
        return move


def main(argv: list[str] | None = None) -> None:
    run(RandomEngine, argv)


if __name__ == "__main__":
    main()

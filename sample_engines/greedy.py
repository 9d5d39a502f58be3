"""``greedy``: one ply of the per-game evaluation in :mod:`sample_engines.evaluation`.

Every legal move is played and the resulting position evaluated for the
mover; the best one is chosen (ties broken at random, through ``Seed``).
An immediate win always scores highest.

Run: ``python -m sample_engines.greedy [--game G] [--seed N]``.
"""

from __future__ import annotations

from arbiter.games import Position
from arbiter.sdk import Engine, SearchLimits, run
from sample_engines.evaluation import WIN, evaluate
from sample_engines.random import SEED_OPTION


def centipawns(value: float) -> int:
    """Evaluation units are already 'centipawn-like'; wins are clamped."""
    return int(max(-WIN, min(WIN, value)))


class GreedyEngine(Engine):
    name = "Greedy"
    author = "Arbiter project"
    options = (SEED_OPTION,)

    def choose_move(self, position: Position, limits: SearchLimits) -> str:
        me = position.to_move
        moves = position.legal_moves()
        self.rng.shuffle(moves)  # random among equals
        best_move, best_value = moves[0], float("-inf")
        count = 0
        for count, move in enumerate(moves, start=1):
            if count > 1 and limits.stopped():
                count -= 1
                break  # out of time: the best so far (one evaluation at most after the deadline)
            value = evaluate(position.play(move), me)
            if value > best_value:
                best_move, best_value = move, value
            if limits.nodes is not None and count >= limits.nodes:
                break
        elapsed = limits.elapsed_ms()
        self.info(depth=1, score_cp=centipawns(best_value), nodes=count, time=elapsed,
                  nps=int(count * 1000 / max(1, elapsed)), pv=(best_move,))
        return best_move


def main(argv: list[str] | None = None) -> None:
    run(GreedyEngine, argv)


if __name__ == "__main__":
    main()

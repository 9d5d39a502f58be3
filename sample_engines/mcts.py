"""``mcts``: UCT Monte-Carlo tree search with random playouts.

Each iteration walks down the tree by UCB1, adds one node, plays the game
out at random and backs the result up.  The search ends at the first of:
the ``Iterations`` cap (or ``go nodes``), the time budget the SDK derives
from the clock or ``movetime``, ``stop``, or -- under ``go depth N`` -- a
principal variation N plies deep.  The most visited move is played.

Two cheap pieces of knowledge make it much stronger than plain UCT at the
same cost: a move that wins at once is played without searching, and a
playout that passes ``PlayoutPlies`` plies is scored by the static
evaluation instead of being played to the end.

Run: ``python -m sample_engines.mcts [--game G] [--iterations N] [--seed N]``.
"""

from __future__ import annotations

import math
import time

from arbiter.games import Color, Position
from arbiter.sdk import Engine, SearchLimits, run
from protocol.messages import OptionDecl
from sample_engines.evaluation import atoll_distance, evaluate, win_probability
from sample_engines.random import SEED_OPTION

#: Seconds between two ``info`` lines during a search.
INFO_INTERVAL = 0.5

#: Random plies per playout before the evaluation scores it, per game (the
#: ``PlayoutPlies`` default).  Measured against ``greedy`` at 1000
#: iterations: a few random plies help in the connection games and Talisman;
#: in Morris random placements are noise and the evaluation alone is best.
DEFAULT_PLAYOUT_PLIES = {"troll": 4, "atoll": 4, "morris": 0, "talisman": 4}

#: Progressive widening at the root, per game: after n iterations, at most
#: ROOT_WIDENING * sqrt(n) root moves are in the tree, best-evaluated first,
#: so a wide root (Atoll has ~100 moves) is not spread one visit per move.
#: Measured against ``greedy`` at 1000 iterations it wins Atoll 8/8 instead of
#: 4/6, but costs Troll dearly (3/8 instead of 8/8), whose one-ply evaluation
#: orders moves badly; games not listed expand every root move.
ROOT_WIDENING = {"atoll": 1.0, "morris": 1.0}


class Node:
    """A tree node: the position after ``move``; ``wins`` counts from the
    view of ``mover``, the side that played ``move``."""

    __slots__ = ("position", "parent", "move", "mover", "children", "untried", "visits", "wins",
                 "terminal")

    def __init__(self, position: Position, parent: Node | None, move: str | None,
                 mover: Color | None, rng) -> None:
        self.position = position
        self.parent = parent
        self.move = move
        self.mover = mover
        self.children: list[Node] = []
        outcome = position.outcome()
        self.terminal = outcome
        self.untried = [] if outcome is not None else position.legal_moves()
        rng.shuffle(self.untried)
        self.visits = 0
        self.wins = 0.0

    def best_child(self, exploration: float) -> Node:
        log_n = math.log(self.visits)
        best, best_score = self.children[0], -1.0
        for child in self.children:
            score = child.wins / child.visits + exploration * math.sqrt(log_n / child.visits)
            if score > best_score:
                best, best_score = child, score
        return best

    def most_visited(self) -> Node:
        return max(self.children, key=lambda c: (c.visits, c.wins))


def winprob_to_cp(p: float) -> int:
    """A win rate as a centipawn-like score (the usual logistic mapping)."""
    p = min(max(p, 0.001), 0.999)
    return int(round(400 * math.log10(p / (1 - p))))


class MctsEngine(Engine):
    name = "MCTS"
    author = "Arbiter project"
    options = (
        OptionDecl("Iterations", "spin", "20000", 1, 10_000_000),
        OptionDecl("Exploration", "spin", "100", 0, 1000),  # UCB1 constant x 100
        # -1: the game's default (DEFAULT_PLAYOUT_PLIES); 0: evaluate at once.
        OptionDecl("PlayoutPlies", "spin", "-1", -1, 100_000),
        SEED_OPTION,
    )

    def __init__(self, game: str = "troll") -> None:
        super().__init__(game)
        self.iterations_done = 0

    def choose_move(self, position: Position, limits: SearchLimits) -> str:
        me = position.to_move
        moves = position.legal_moves()
        if len(moves) == 1:
            self.info(depth=1, nodes=0, time=limits.elapsed_ms(), pv=(moves[0],),
                      string="only move")
            return moves[0]
        for move in moves:  # a win in one: no search needed
            outcome = position.play(move).outcome()
            if outcome is not None and outcome.winner is me:
                self.info(depth=1, score_mate=1, nodes=len(moves), time=limits.elapsed_ms(),
                          pv=(move,))
                return move
            if limits.stopped():
                break  # out of time: the search below stops at once
        candidates = self._safe_moves(position, moves, limits)
        if position.game.name in ROOT_WIDENING:
            ordered = self._order(position, candidates, limits)
        else:
            ordered = list(candidates)
            self.rng.shuffle(ordered)
        root = self.search(position, limits, ordered)
        if not root.children:  # no time for a single iteration
            self.info(depth=1, nodes=0, time=limits.elapsed_ms(), pv=(ordered[-1],),
                      string="out of time: best move by evaluation")
            return ordered[-1]
        best = root.most_visited()
        self._report(root, limits)
        return best.move  # type: ignore[return-value]

    @staticmethod
    def _order(position: Position, moves: list[str], limits: SearchLimits) -> list[str]:
        """``moves`` from worst to best by one ply of the static evaluation
        (the search expands the root's moves best first).  Unordered if time
        runs out."""
        me = position.to_move
        scored = []
        for index, move in enumerate(moves):
            scored.append((evaluate(position.play(move), me), move))
            if limits.stopped():
                return moves[index + 1:] + [move for _, move in sorted(scored)]
        return [move for _, move in sorted(scored)]

    @staticmethod
    def _safe_moves(position: Position, moves: list[str], limits: SearchLimits) -> list[str]:
        """The moves after which the opponent has no win in one (all of them
        if none is safe, or if time runs out while checking)."""
        me = position.to_move
        if position.game.name == "atoll" and position.ply >= 2:
            # A stone never helps the opponent: unless he is one stone from
            # connecting now, no move of ours lets him win at once.  Saves
            # ~100x100 plays per move.
            mine: set[str] = set()
            theirs: set[str] = set()
            for cell, owner in position.pieces().items():
                (mine if owner is me else theirs).add(cell)
            if atoll_distance(position, me.other, theirs, mine) > 1:
                return moves
        safe = []
        for move in moves:
            child = position.play(move)
            if child.outcome() is None:
                loses = False
                for reply in child.legal_moves():
                    outcome = child.play(reply).outcome()
                    if outcome is not None and outcome.winner is me.other:
                        loses = True
                        break
                    if limits.stopped():
                        return moves
                if loses:
                    continue
            safe.append(move)
            if limits.stopped():
                return moves
        return safe or moves

    def search(self, position: Position, limits: SearchLimits,
               moves: list[str] | None = None) -> Node:
        """Grow a UCT tree from ``position`` (over ``moves`` at the root, by
        default all legal moves) until a limit is reached."""
        cap = self._spin("Iterations")
        if limits.nodes is not None:
            cap = min(cap, limits.nodes)
        exploration = self._spin("Exploration") / 100
        playout_plies = self._spin("PlayoutPlies")
        if playout_plies < 0:
            playout_plies = DEFAULT_PLAYOUT_PLIES.get(position.game.name, 4)
        rng = self.rng
        root = Node(position, None, None, None, rng)
        if moves is not None:
            root.untried = list(moves)  # popped from the end: best first
        widening = ROOT_WIDENING.get(position.game.name)
        next_info = time.monotonic() + INFO_INTERVAL
        done = 0
        while done < cap:
            if limits.stopped():  # every iteration: one costs up to a few ms (a playout)
                break
            if done & 7 == 0:
                if limits.depth is not None and done and self._pv_length(root) >= limits.depth:
                    break
                if time.monotonic() >= next_info:
                    next_info = time.monotonic() + INFO_INTERVAL
                    self.iterations_done = done
                    self._report(root, limits)
            node = root
            if root.children and (not root.untried or (
                    widening is not None and len(root.children) >= widening * math.sqrt(root.visits))):
                node = root.best_child(exploration)  # progressive widening at the root
            while not node.untried and node.children:  # selection
                node = node.best_child(exploration)
            if node.untried:  # expansion
                move = node.untried.pop()
                child = Node(node.position.play(move), node, move, node.position.to_move, rng)
                node.children.append(child)
                node = child
            white_reward = self._playout(node, playout_plies, rng)
            up: Node | None = node
            while up is not None:  # backpropagation
                up.visits += 1
                up.wins += white_reward if up.mover is Color.WHITE else 1.0 - white_reward
                up = up.parent
            done += 1
        self.iterations_done = done
        return root

    def _spin(self, name: str) -> int:
        """A spin option's value (the SDK stores spins as ints)."""
        value = self.values[name]
        assert isinstance(value, int)
        return value

    @staticmethod
    def _playout(node: Node, max_plies: int, rng) -> float:
        """Random moves to the end, or for ``max_plies`` and then the static
        evaluation as a win probability; returns White's reward in [0, 1]."""
        outcome = node.terminal
        position = node.position
        plies = 0
        choice = rng.choice
        while outcome is None:
            if plies >= max_plies:
                return win_probability(position, Color.WHITE)
            position = position.play(choice(position.legal_moves()))
            outcome = position.outcome()
            plies += 1
        return 0.5 if outcome.winner is None else float(outcome.winner is Color.WHITE)

    @staticmethod
    def _pv(root: Node) -> list[Node]:
        line = []
        node = root
        while node.children:
            node = node.most_visited()
            line.append(node)
        return line

    def _pv_length(self, root: Node) -> int:
        return len(self._pv(root))

    def _report(self, root: Node, limits: SearchLimits) -> None:
        if not root.children:
            return
        pv = self._pv(root)
        best = pv[0]
        elapsed = limits.elapsed_ms()
        self.info(depth=len(pv), score_cp=winprob_to_cp(best.wins / best.visits),
                  nodes=root.visits, nps=int(root.visits * 1000 / max(1, elapsed)),
                  time=elapsed, pv=tuple(n.move for n in pv if n.move is not None)[:12])


def main(argv: list[str] | None = None) -> None:
    run(MctsEngine, argv)


if __name__ == "__main__":
    main()

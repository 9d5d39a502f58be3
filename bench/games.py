"""Referee speed: random playouts and perft for every game, and Nine Men's
Morris against OpenSpiel's C++ implementation measured in the same run.

    python3 bench/games.py [--quick] [--seed N]

Everything is driven through the generic interface only (``start()``,
``legal_moves()``, ``play()``, ``outcome()``, and ``perft`` built on them), the
way matches and engines use it: playouts and perft list the moves of every
position before playing one; a replay plays recorded moves on positions that
never listed theirs (``outcome()`` then ``play()``, as a match does with the
engines' moves).  Rates are CPU time of this process (the box is
shared; wall time would measure the neighbours), best of several rounds, each
round replaying the same seeded games.  No thresholds: the script prints
figures and ratios, it never fails on speed.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arbiter.games import GAME_NAMES, get_game, perft  # noqa: E402

# Perft depth per game: small, fixed, a fraction of a second each.
PERFT_DEPTH = {"troll": 4, "atoll": 3, "morris": 5, "talisman": 5}
PERFT_DEPTH_QUICK = {"troll": 3, "atoll": 3, "morris": 4, "talisman": 5}
# Replays: the number of recorded games played again (a few thousand plies).
REPLAY_GAMES = 200
REPLAY_GAMES_QUICK = 60
# Morris against OpenSpiel: from the start at depth 4 no mill can close yet,
# so OpenSpiel's action tree is exactly our ply tree and both sides may count
# the last ply in bulk (len of the legal list).
MORRIS_VS_OPENSPIEL_DEPTH = 4
# The mid-game position of specs/games/morris.md §10 (White flies, mills and
# removals): reached by these plies, so OpenSpiel can replay it.
MIDGAME_MOVES = (
    "d7 g4 g1 b2 b6 d2 f2 f6 g7 e5 b4 c5 a7xf6 d5xb6 c4 e3 f4 e4xg1 a7-a4xb2 d5-d6 "
    "b4-b2 d6-d5xc4 d7-a7 g4-g1 b2-b4 d2-d3 f4-f6 c5-c4 f6-f4 c4-c3xf2 g7-g4 d3-d2 "
    "a4-a1 d5-c5 a1-a4 g1-d1 g4-g1 d2-d3xf4 g1-g4 c5-d5 b4-b2 d5-c5 a4-b4 d1-d2 "
    "b4-a4 e4-f4 b2-b4 e5-d5 g4-g1 c5-c4 g1-g4 d5-c5xa4 g4-d5 f4-e4 d5-e5 e4-f4 "
    "b4-g7 d2-d1"
).split()
MIDGAME_DEPTH = 3
# OpenSpiel's point ids, row by row from the top (specs/games/morris.md §12).
OPENSPIEL_POINTS = "a7 d7 g7 b6 d6 f6 c5 d5 e5 a4 b4 c4 e4 f4 g4 c3 d3 e3 b2 d2 f2 a1 d1 g1".split()


@dataclass
class Playouts:
    games: int
    plies: int
    seconds: float

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds

    @property
    def plies_per_s(self) -> float:
        return self.plies / self.seconds


def best(rounds: list[Playouts]) -> Playouts:
    return max(rounds, key=lambda r: r.plies_per_s)


# --- our referee -----------------------------------------------------------------------


def our_playouts(game, seed: int, budget: float) -> Playouts:
    """Random games from the start until ``budget`` CPU seconds have passed."""
    rng = random.Random(seed)
    clock = time.process_time
    games = plies = 0
    begin = clock()
    while True:
        position = game.start()
        while position.outcome() is None:
            position = position.play(rng.choice(position.legal_moves()))
        games += 1
        plies += position.ply
        elapsed = clock() - begin
        if elapsed >= budget:
            return Playouts(games, plies, elapsed)


class _NullPosition:
    """A position with no rules: a fixed list of 20 moves, ``play`` makes a new
    object with as many fields as a real position, the game ends after 80
    plies.  Driven by ``our_playouts`` it measures what the generic interface
    costs in Python by itself (calls, ``rng.choice``, object creation, the list
    copy): the most any referee driven this way could reach."""

    __slots__ = ("_ply", "_a", "_b", "_c", "_d", "_e", "_f", "_g", "_moves", "_outcome")
    MOVES = [f"m{i}" for i in range(20)]

    @property
    def ply(self) -> int:
        return self._ply

    def legal_moves(self) -> list[str]:
        return self._moves[:]

    def outcome(self):
        return self._outcome

    def play(self, move: str) -> _NullPosition:
        if move not in self._moves:
            raise ValueError(move)
        child = object.__new__(_NullPosition)
        child._ply = ply = self._ply + 1
        child._a = child._b = child._c = child._d = child._e = child._f = child._g = 0
        child._moves = self.MOVES
        child._outcome = "over" if ply >= 80 else None
        return child


class _NullGame:
    def start(self) -> _NullPosition:
        position = object.__new__(_NullPosition)
        position._ply, position._moves, position._outcome = 0, _NullPosition.MOVES, None
        return position


def recorded_games(game, seed: int, count: int) -> list[list[str]]:
    """The moves of ``count`` seeded random games (made outside any timing)."""
    rng = random.Random(seed)
    games = []
    for _ in range(count):
        position, moves = game.start(), []
        while position.outcome() is None:
            move = rng.choice(position.legal_moves())
            moves.append(move)
            position = position.play(move)
        games.append(moves)
    return games


def replay(game, games: list[list[str]]) -> Playouts:
    """The recorded games played again the way a match plays the engines'
    moves: ``outcome()`` then ``play()`` on positions that never list their
    moves."""
    clock = time.process_time
    plies = 0
    begin = clock()
    for moves in games:
        position = game.start()
        for move in moves:
            if position.outcome() is not None:
                raise AssertionError(f"{game.name}: the replay ended early")
            position = position.play(move)
        if position.outcome() is None:
            raise AssertionError(f"{game.name}: the replay did not end")
        plies += len(moves)
    return Playouts(len(games), plies, clock() - begin)


def timed_perft(position, depth: int) -> tuple[int, float]:
    begin = time.process_time()
    nodes = perft(position, depth)
    return nodes, time.process_time() - begin


# --- OpenSpiel -------------------------------------------------------------------------


def openspiel_playouts(game, seed: int, budget: float) -> tuple[Playouts, int]:
    """Random games the same way: legal_actions, rng.choice, apply_action until
    is_terminal.  Returns the playouts counted in turns (a mill move and its
    capture are one turn, like our ply) and the number of actions."""
    rng = random.Random(seed)
    clock = time.process_time
    finals = []
    begin = clock()
    while True:
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
        finals.append(state)
        elapsed = clock() - begin
        if elapsed >= budget:
            break
    # Outside the timing: OpenSpiel's own turn counter, from its state text.
    turns = sum(int(str(s).split("Turn number:")[1].split()[0]) for s in finals)
    actions = sum(len(s.history()) for s in finals)
    return Playouts(len(finals), turns, elapsed), actions


def openspiel_action_perft(state, depth: int) -> int:
    """Perft over OpenSpiel's actions, the last level counted in bulk."""
    actions = state.legal_actions()
    if depth == 1:
        return len(actions)
    return sum(openspiel_action_perft(state.child(a), depth - 1) for a in actions)


def openspiel_ply_perft(state, depth: int) -> int:
    """Perft over our plies: a mill move is expanded into its captures, which
    OpenSpiel can only tell by applying the move."""
    if depth == 0:
        return 1
    player = state.current_player()
    total = 0
    for action in state.legal_actions():
        child = state.child(action)
        if not child.is_terminal() and child.current_player() == player:
            captures = child.legal_actions()
            if depth == 1:
                total += len(captures)
            else:
                total += sum(openspiel_ply_perft(child.child(c), depth - 1) for c in captures)
        elif depth == 1 or not child.is_terminal():
            total += openspiel_ply_perft(child, depth - 1)
    return total


def openspiel_actions(move: str) -> list[int]:
    index = {name: i for i, name in enumerate(OPENSPIEL_POINTS)}
    plain, _, removed = move.partition("x")
    if "-" in plain:
        src, dst = plain.split("-")
        actions = [24 + 24 * index[src] + index[dst]]
    else:
        actions = [index[plain]]
    if removed:
        actions.append(index[removed])
    return actions


# --- report ----------------------------------------------------------------------------


def bench_game(name: str, args) -> None:
    try:
        game = get_game(name)
    except Exception as exc:  # a module still being written: say so and go on
        print(f"{name:<9} skipped: its module does not import yet ({type(exc).__name__}: {exc})")
        return
    rounds = [our_playouts(game, args.seed, args.budget) for _ in range(args.rounds)]
    run = best(rounds)
    depth = (PERFT_DEPTH_QUICK if args.quick else PERFT_DEPTH)[name]
    nodes, seconds = min((timed_perft(game.start(), depth) for _ in range(args.rounds)),
                         key=lambda r: r[1])
    recorded = recorded_games(game, args.seed, REPLAY_GAMES_QUICK if args.quick else REPLAY_GAMES)
    again = best([replay(game, recorded) for _ in range(args.rounds)])
    print(f"{name:<9} playouts {run.games_per_s:9.1f} games/s {run.plies_per_s:11.0f} plies/s "
          f"({run.plies / run.games:5.1f} plies/game)   "
          f"perft({depth}) {nodes:>10} nodes {nodes / seconds:11.0f} nodes/s   "
          f"replay {again.plies_per_s:11.0f} plies/s")


def bench_morris_vs_openspiel(args) -> None:
    print()
    print("morris vs OpenSpiel nine_mens_morris (C++ through pyspiel), same run, same seed:")
    try:
        import pyspiel
    except ImportError:
        print("  skipped: pyspiel is not installed (pip install open_spiel, or the 'bench' extra)")
        return
    try:
        ours_game = get_game("morris")
    except Exception as exc:
        print(f"  skipped: morris does not import yet ({type(exc).__name__}: {exc})")
        return
    theirs_game = pyspiel.load_game("nine_mens_morris")

    # Playouts, rounds interleaved so both see the same load on the box.
    ours_rounds, theirs_rounds, floor_rounds, actions = [], [], [], {}
    for _ in range(args.rounds):
        ours_rounds.append(our_playouts(ours_game, args.seed, args.budget))
        floor_rounds.append(our_playouts(_NullGame(), args.seed, args.budget / 2))
        run, count = openspiel_playouts(theirs_game, args.seed, args.budget)
        theirs_rounds.append(run)
        actions[id(run)] = count
    ours, theirs = best(ours_rounds), best(theirs_rounds)
    floor = best(floor_rounds)
    theirs_actions = actions[id(theirs)]
    theirs_actions_per_s = theirs_actions / theirs.seconds
    print("  playouts  ours:   legal_moves() -> rng.choice -> play() -> outcome(), full rules "
          "(repetition, 100-ply rule, no cap);")
    print("                    one ply = one move, its removal included (one rng.choice per ply)")
    print("            theirs: legal_actions() -> rng.choice -> apply_action() until is_terminal();")
    print("                    a capture is a separate action and a separate decision of the same")
    print("                    player (one more rng.choice); no repetition rule; capped at 200 turns")
    print(f"            ours   {ours.games_per_s:9.1f} games/s {ours.plies_per_s:11.0f} plies/s "
          f"({ours.plies / ours.games:5.1f} plies/game)")
    print(f"            theirs {theirs.games_per_s:9.1f} games/s {theirs.plies_per_s:11.0f} turns/s "
          f"({theirs.plies / theirs.games:5.1f} turns/game, {theirs_actions / theirs.games:5.1f} "
          f"actions/game, {theirs_actions_per_s:.0f} actions/s)")
    print(f"            ours/theirs per ply (our ply vs their turn, the fair figure): "
          f"{ours.plies_per_s / theirs.plies_per_s:.2f}")
    print(f"            ours/theirs per decision (our ply vs their action): "
          f"{ours.plies_per_s / theirs_actions_per_s:.2f}")
    print(f"            ours/theirs per game: {ours.games_per_s / theirs.games_per_s:.2f} (games differ "
          "in length: shown, not claimed)")
    print(f"            floor: a Position with no rules, driven the same way: {floor.plies_per_s:.0f} "
          f"plies/s = {floor.plies_per_s / theirs.plies_per_s:.2f} x their turns/s; the rules cost "
          f"{1e6 / ours.plies_per_s - 1e6 / floor.plies_per_s:.2f} us/ply on top, theirs "
          f"{1e6 / theirs.plies_per_s:.2f} us/turn in all")

    # Perft from the start: identical trees, both count the last ply in bulk.
    depth = MORRIS_VS_OPENSPIEL_DEPTH
    ours_runs = []
    theirs_runs = []
    for _ in range(args.rounds):
        ours_runs.append(timed_perft(ours_game.start(), depth))
        begin = time.process_time()
        count = openspiel_action_perft(theirs_game.new_initial_state(), depth)
        theirs_runs.append((count, time.process_time() - begin))
    (ours_nodes, ours_s), (theirs_nodes, theirs_s) = (min(ours_runs, key=lambda r: r[1]),
                                                      min(theirs_runs, key=lambda r: r[1]))
    agree = "agree" if ours_nodes == theirs_nodes else "DISAGREE"
    print(f"  perft({depth}) from the start (no mill possible yet: the same tree; both count the "
          f"last ply in bulk; counts {agree})")
    print(f"            ours   {ours_nodes:>9} nodes {ours_nodes / ours_s:11.0f} nodes/s")
    print(f"            theirs {theirs_nodes:>9} nodes {theirs_nodes / theirs_s:11.0f} nodes/s")
    print(f"            ours/theirs: {ours_nodes / ours_s / (theirs_nodes / theirs_s):.2f}")

    # Perft in the middle game, counted in our plies by both.
    position = ours_game.position(None, MIDGAME_MOVES)
    state = theirs_game.new_initial_state()
    for move in MIDGAME_MOVES:
        for action in openspiel_actions(move):
            state.apply_action(action)
    ours_nodes, ours_s = min((timed_perft(position, MIDGAME_DEPTH) for _ in range(args.rounds)),
                             key=lambda r: r[1])
    theirs_best = None
    for _ in range(args.rounds):
        begin = time.process_time()
        count = openspiel_ply_perft(state, MIDGAME_DEPTH)
        elapsed = time.process_time() - begin
        if theirs_best is None or elapsed < theirs_best[1]:
            theirs_best = (count, elapsed)
    theirs_nodes, theirs_s = theirs_best
    agree = "agree" if ours_nodes == theirs_nodes else "DISAGREE"
    print(f"  perft({MIDGAME_DEPTH}) mid-game {position.fen()!r} in our plies (OpenSpiel applies "
          f"each move to see whether a capture follows; counts {agree})")
    print(f"            ours   {ours_nodes:>9} nodes {ours_nodes / ours_s:11.0f} nodes/s")
    print(f"            theirs {theirs_nodes:>9} nodes {theirs_nodes / theirs_s:11.0f} nodes/s")
    print(f"            ours/theirs: {ours_nodes / ours_s / (theirs_nodes / theirs_s):.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, shorter runs")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random playouts")
    args = parser.parse_args(argv)
    args.rounds = 2 if args.quick else 5
    args.budget = 0.3 if args.quick else 1.0
    print(f"CPU time of this process, best of {args.rounds} rounds of {args.budget} s; seed {args.seed}")
    for name in GAME_NAMES:
        bench_game(name, args)
    bench_morris_vs_openspiel(args)


if __name__ == "__main__":
    main()

"""Positions from real games, for the conformance checker (``arbiter check``).

Every position is a move sequence from the game's start position, played in
a seeded random game by the referee, and chosen because it shows something
an engine must get right (``specs/check.md`` §Positions): Troll's forced
``pass`` and the capture-only drops on corners and the opponent's edges,
Atoll's ``swap``, Morris removals (also out of a mill), flying and nearly
blocked positions, Talisman's placement phase and multi-piece captures, and
ordinary positions with each side to move.  Each entry names the *feature* it
was picked for; the feature is a predicate here, and :func:`positions`
re-checks every entry with the referee when it is loaded, so a change of the
rules that invalidates an entry fails loudly (and ``tests/test_check.py``
loads them all).

The entries below (``_DATA``) were written by :func:`generate`; to refresh
them after a rules change, run ``python -m arbiter.check_positions`` and paste
its output over ``_DATA``.  Keeping them as literal data, not generated at
run time, keeps the checker's positions stable and the search for rare cases
(a forced Troll pass turns up in about one random game in a thousand) out of
every run.
"""

from __future__ import annotations

import functools
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass

from arbiter.games import GAME_NAMES, Color, Game, Position, get_game, play_moves

__all__ = ["CheckPosition", "FinalPosition", "PositionDataError", "positions", "final_positions",
           "FEATURES", "generate"]


@dataclass(frozen=True)
class CheckPosition:
    """A position to search: ``moves`` from the start, picked for ``feature``.

    ``quick`` entries form the smaller set of ``arbiter check --quick``."""

    game: str
    feature: str
    moves: tuple[str, ...]
    quick: bool

    @property
    def label(self) -> str:
        return f"{self.feature} (ply {len(self.moves)})"

    def position(self) -> Position:
        return play_moves(get_game(self.game).start(), self.moves)

    @property
    def why(self) -> str:
        return FEATURES[self.game][self.feature][0]


@dataclass(frozen=True)
class FinalPosition:
    """The last position of a finished game, for ``query`` (``result`` is PGN)."""

    game: str
    moves: tuple[str, ...]
    result: str

    def position(self) -> Position:
        return play_moves(get_game(self.game).start(), self.moves)


# --- features: what each position is there for -------------------------------------

Predicate = Callable[[Position, tuple[str, ...]], bool]


def _wins_now(pos: Position) -> bool:
    me = pos.to_move
    for move in pos.legal_moves():
        outcome = pos.play(move).outcome()
        if outcome is not None and outcome.winner is me:
            return True
    return False


def _mover_is_p1(pos: Position) -> bool:
    return pos.to_move is pos.game.first


def _midgame(p1: bool) -> Predicate:
    return lambda pos, moves: 10 <= len(moves) <= 40 and _mover_is_p1(pos) is p1


def _long(p1: bool) -> Predicate:
    return lambda pos, moves: len(moves) >= 45 and _mover_is_p1(pos) is p1


def _early_p2(pos: Position, moves: tuple[str, ...]) -> bool:
    return 1 <= len(moves) <= 4 and not _mover_is_p1(pos)


def _only_move(pos: Position, moves: tuple[str, ...]) -> bool:
    legal = pos.legal_moves()
    return len(legal) == 1 and legal != ["pass"]


# Troll (specs/games/troll.md §2-§3, §6)

_TROLL_CORNERS = {"a1", "h1", "a8", "h8"}


def _troll_capture_only(color: Color) -> set[str]:
    """Cells where ``color`` may drop only with a flip: corners and the opponent's edges."""
    if color is Color.WHITE:  # Black owns files a and h
        edge = {f"{f}{r}" for f in "ah" for r in range(2, 8)}
    else:  # White owns ranks 1 and 8
        edge = {f"{f}{r}" for f in "bcdefg" for r in (1, 8)}
    return edge | _TROLL_CORNERS


def _troll_edge_capture(pos: Position, moves: tuple[str, ...]) -> bool:
    """A legal drop on a capture-only cell, next to empty capture-only cells
    where a drop would be illegal."""
    cells = _troll_capture_only(pos.to_move)
    legal = set(pos.legal_moves())
    empty = cells - set(pos.pieces())
    return bool(legal & cells) and bool(empty - legal)


def _troll_pass(pos: Position, moves: tuple[str, ...]) -> bool:
    return pos.legal_moves() == ["pass"]


def _troll_after_pass(pos: Position, moves: tuple[str, ...]) -> bool:
    return bool(moves) and moves[-1] == "pass" and pos.legal_moves() != ["pass"]


# Atoll (specs/games/atoll.md §4)

def _atoll_swap_offer(pos: Position, moves: tuple[str, ...]) -> bool:
    return len(moves) == 1 and "swap" in pos.legal_moves()


def _atoll_after_swap(pos: Position, moves: tuple[str, ...]) -> bool:
    return len(moves) == 2 and moves[1] == "swap"


def _atoll_swap_game(pos: Position, moves: tuple[str, ...]) -> bool:
    return len(moves) >= 20 and len(moves) > 1 and moves[1] == "swap"


# Nine Men's Morris (specs/games/morris.md)

def _morris_in_hand(pos: Position) -> int:
    white, black = pos.in_hand  # type: ignore[attr-defined]
    return white if pos.to_move is Color.WHITE else black


def _morris_on_board(pos: Position, color: Color) -> int:
    return sum(1 for owner in pos.pieces().values() if owner is color)


def _morris_placing_mill(pos: Position, moves: tuple[str, ...]) -> bool:
    return _morris_in_hand(pos) > 0 and any("x" in m for m in pos.legal_moves())


def _morris_moving_mill(pos: Position, moves: tuple[str, ...]) -> bool:
    return _morris_in_hand(pos) == 0 and any("-" in m and "x" in m for m in pos.legal_moves())


def _morris_remove_from_mill(pos: Position, moves: tuple[str, ...]) -> bool:
    """Every opponent piece stands in a mill, so the removal may take any."""
    targets = {m.split("x")[1] for m in pos.legal_moves() if "x" in m}
    return any(pos.is_mill_point(t) for t in targets)  # type: ignore[attr-defined]


def _morris_flying(pos: Position, moves: tuple[str, ...]) -> bool:
    return (_morris_in_hand(pos) == 0 and _morris_on_board(pos, pos.to_move) == 3
            and len(pos.legal_moves()) > 6)


def _morris_opponent_flying(pos: Position, moves: tuple[str, ...]) -> bool:
    other = pos.to_move.other
    white, black = pos.in_hand  # type: ignore[attr-defined]
    hand = white if other is Color.WHITE else black
    return hand == 0 and _morris_on_board(pos, other) == 3 and _morris_on_board(pos, pos.to_move) > 3


def _morris_few_moves(pos: Position, moves: tuple[str, ...]) -> bool:
    return _morris_in_hand(pos) == 0 and 1 <= len(pos.legal_moves()) <= 2


def _morris_block_win(pos: Position, moves: tuple[str, ...]) -> bool:
    """A move that leaves the opponent without a legal move (he loses)."""
    for move in pos.legal_moves():
        outcome = pos.play(move).outcome()
        if outcome is not None and outcome.termination.value == "blocked":
            return True
    return False


# Talisman (specs/games/talisman.md §4-§6)

def _talisman_captured(pos: Position, move: str) -> int:
    """How many opponent pieces ``move`` jumps (0 for a quiet move)."""
    other = pos.to_move.other
    before = sum(1 for c in pos.pieces().values() if c is other)
    after = sum(1 for c in pos.play(move).pieces().values() if c is other)
    return before - after


def _talisman_placement(p1: bool) -> Predicate:
    return lambda pos, moves: 3 <= len(moves) < 12 and _mover_is_p1(pos) is p1


def _talisman_first_movement(pos: Position, moves: tuple[str, ...]) -> bool:
    return len(moves) == 12


def _talisman_capture(pos: Position, moves: tuple[str, ...]) -> bool:
    return len(moves) >= 12 and any(_talisman_captured(pos, m) == 1 for m in pos.legal_moves())


def _talisman_multi_capture(pos: Position, moves: tuple[str, ...]) -> bool:
    return len(moves) >= 12 and any(_talisman_captured(pos, m) >= 2 for m in pos.legal_moves())


def _talisman_after_multi_capture(pos: Position, moves: tuple[str, ...]) -> bool:
    if len(moves) < 13:
        return False
    before = play_moves(pos.game.start(), moves[:-1])
    return _talisman_captured(before, moves[-1]) >= 2


def _talisman_claim(pos: Position, moves: tuple[str, ...]) -> bool:
    if len(moves) <= 12:
        return False
    me = 0 if pos.to_move is Color.WHITE else 1
    now = pos.scores()[me]  # type: ignore[index]
    return any(pos.play(m).scores()[me] >= now + 5 and _talisman_captured(pos, m) == 0  # type: ignore[index]
               for m in pos.legal_moves())


def _any(pos: Position, moves: tuple[str, ...]) -> bool:
    return True


_COMMON: dict[str, tuple[str, Predicate]] = {
    "early-p2": ("one of the first plies, p2 to move", _early_p2),
    "midgame-p1": ("a middle-game position, p1 to move", _midgame(True)),
    "midgame-p2": ("a middle-game position, p2 to move", _midgame(False)),
    "long-p1": ("45 plies or more (a long move list), p1 to move", _long(True)),
    "long-p2": ("45 plies or more (a long move list), p2 to move", _long(False)),
    "win-in-one": ("the mover can win at once", lambda pos, moves: _wins_now(pos)),
    "sample": ("a position of a random game, at a random ply", _any),
}

#: game -> feature -> (what it shows, predicate).  A feature may need a game-specific
#: attribute of the referee's position (Morris ``in_hand``, ``is_mill_point``).
FEATURES: dict[str, dict[str, tuple[str, Predicate]]] = {
    "troll": {
        "pass": ("no legal drop: the only legal move is `pass`", _troll_pass),
        "after-pass": ("the move list contains a `pass`", _troll_after_pass),
        "edge-capture": ("a corner or opponent-edge drop is legal (it flips), other such "
                         "empty cells are not", _troll_edge_capture),
        **_COMMON,
    },
    "atoll": {
        "swap-offer": ("White's first ply: `swap` is legal", _atoll_swap_offer),
        "after-swap": ("the move list contains `swap`: Black to move", _atoll_after_swap),
        "swap-game": ("a longer game that began with `swap`", _atoll_swap_game),
        **_COMMON,
    },
    "morris": {
        "placing-mill": ("placement closes a mill: the move names a removal (`d2xa1`)",
                         _morris_placing_mill),
        "moving-mill": ("a slide closes a mill: `d2-d3xa1`", _morris_moving_mill),
        "remove-from-mill": ("every opponent piece is in a mill: the removal may take one",
                             _morris_remove_from_mill),
        "flying": ("the mover has three pieces and flies", _morris_flying),
        "opponent-flying": ("the opponent is down to three pieces", _morris_opponent_flying),
        "few-moves": ("nearly blocked: one or two legal moves", _morris_few_moves),
        "block-win": ("a move leaves the opponent blocked (he loses)", _morris_block_win),
        **_COMMON,
    },
    "talisman": {
        "placement-p1": ("placement phase, White to place on an edge point", _talisman_placement(True)),
        "placement-p2": ("placement phase, Black to place on an edge point", _talisman_placement(False)),
        "first-movement": ("ply 12: the first move after placement", _talisman_first_movement),
        "capture": ("a one-piece capture is legal", _talisman_capture),
        "multi-capture": ("a capture jumping two or more pieces is legal", _talisman_multi_capture),
        "after-multi-capture": ("the last move jumped two or more pieces", _talisman_after_multi_capture),
        "triangle-claim": ("a quiet move claims a triangle", _talisman_claim),
        **_COMMON,
    },
}

#: Features whose positions are in the ``--quick`` set (the rest is ``--quick`` too
#: only through these); all other entries run in the full suite only.
QUICK_FEATURES: dict[str, tuple[str, ...]] = {
    "troll": ("pass", "after-pass", "edge-capture", "midgame-p2", "long-p1"),
    "atoll": ("swap-offer", "after-swap", "swap-game", "midgame-p1", "long-p2"),
    "morris": ("placing-mill", "moving-mill", "remove-from-mill", "flying", "few-moves",
               "long-p2"),
    "talisman": ("placement-p1", "placement-p2", "first-movement", "multi-capture",
                 "after-multi-capture", "long-p2"),
}


class PositionDataError(ValueError):
    """A stored position the referee no longer accepts, or that lost its feature."""


def _verify(entry: CheckPosition) -> Position:
    where = f"check position {entry.game}/{entry.feature} ({' '.join(entry.moves)})"
    try:
        pos = entry.position()
    except Exception as exc:  # the referee's error names the ply
        raise PositionDataError(f"{where}: {exc}") from None
    if pos.outcome() is not None:
        raise PositionDataError(f"{where}: the game is over there")
    if entry.feature not in FEATURES[entry.game]:
        raise PositionDataError(f"{where}: unknown feature {entry.feature!r}")
    if not FEATURES[entry.game][entry.feature][1](pos, entry.moves):
        raise PositionDataError(f"{where}: the position no longer shows {entry.feature!r}")
    return pos


def positions(game: str, quick: bool = False) -> list[CheckPosition]:
    """The checked positions of ``game`` (the ``quick`` subset if asked),
    each verified with the referee (once per process)."""
    entries = _verified(get_game(game).name)
    return [e for e in entries if e.quick] if quick else list(entries)


@functools.cache
def _verified(game: str) -> tuple[CheckPosition, ...]:
    entries = tuple(CheckPosition(game, feature, tuple(moves.split()), feature in QUICK_FEATURES[game])
                    for feature, moves in _DATA[game]["positions"])
    for entry in entries:
        _verify(entry)
    return entries


def final_positions(game: str) -> list[FinalPosition]:
    """Ends of real games, one per result that occurred, each re-verified."""
    game = get_game(game).name
    found = []
    for result, moves in _DATA[game]["final"]:
        entry = FinalPosition(game, tuple(moves.split()), result)
        outcome = entry.position().outcome()
        if outcome is None or outcome.result != result:
            raise PositionDataError(f"final position {game} {result}: the referee says "
                                    f"{outcome.result if outcome else 'not over'}")
        found.append(entry)
    return found


# --- the generator -------------------------------------------------------------------


def _random_game(game: Game, rng: random.Random, avoid_wins: bool, max_plies: int = 400):
    """Positions of one random game: (position, moves so far) for each ply, then
    the final position.  ``avoid_wins`` makes the players skip immediately
    winning moves when they can, so that boards fill up (Troll's pass)."""
    pos = game.start()
    moves: list[str] = []
    while pos.outcome() is None and len(moves) < max_plies:
        yield pos, tuple(moves)
        legal = pos.legal_moves()
        if avoid_wins and len(legal) > 1:
            quiet = [m for m in legal if pos.play(m).outcome() is None]
            legal = quiet or legal
        move = rng.choice(legal)
        moves.append(move)
        pos = pos.play(move)
    yield pos, tuple(moves)


#: Entries of the feature ``sample`` per game (the full suite's bulk).
SAMPLES = 10


def generate(game_name: str, max_games: int = 4000) -> dict[str, list]:
    """Search seeded random games for one position per feature and the final
    position of one game per result.

    Special features take the first position found, in seed order.  The
    common ones (:data:`_COMMON`) look only at every sixth game, each at a
    different one, so that they come from different games; ``sample``
    entries are taken at a random ply of games of their own."""
    game = get_game(game_name)
    features = {k: v for k, v in FEATURES[game.name].items() if k != "sample"}
    common = [name for name in _COMMON if name in features]
    found: dict[str, str] = {}
    finals: dict[str, str] = {}
    for seed in range(max_games):
        rng = random.Random(seed)
        for pos, moves in _random_game(game, rng, avoid_wins=seed % 2 == 1):
            outcome = pos.outcome()
            if outcome is not None:
                finals.setdefault(outcome.result, " ".join(moves))
                break
            for name, (_, predicate) in features.items():
                if name in found or (name in common and seed % len(common) != common.index(name)):
                    continue
                if predicate(pos, moves):
                    found[name] = " ".join(moves)
        if len(found) == len(features) and len(finals) >= 2:
            break
    missing = sorted(set(features) - set(found))
    if missing:
        print(f"# {game.name}: not found in {max_games} games: {', '.join(missing)}", file=sys.stderr)
    entries = [(name, found[name]) for name in features if name in found]
    for index in range(SAMPLES):
        rng = random.Random(100_000 + index)
        plies = list(_random_game(game, rng, avoid_wins=False))[:-1]  # not the final position
        want_p1 = index % 2 == 0
        choices = [moves for pos, moves in plies if _mover_is_p1(pos) is want_p1] or \
            [moves for pos, moves in plies]
        entries.append(("sample", " ".join(rng.choice(choices))))
    return {"positions": entries, "final": sorted(finals.items())}


def _literal(text: str, indent: str) -> str:
    """A string literal, split over lines of at most 100 characters."""
    import textwrap
    parts = textwrap.wrap(text, 100 - len(indent) - 4, break_long_words=False) or [""]
    if len(parts) == 1:
        return repr(parts[0])
    pieces = [repr(part + " ") for part in parts[:-1]] + [repr(parts[-1])]
    return "(" + f"\n{indent} ".join(pieces) + ")"


def main() -> None:  # pragma: no cover - a maintenance tool
    print("_DATA: dict[str, dict[str, list]] = {")
    for name in GAME_NAMES:
        data = generate(name)
        print(f"    {name!r}: {{")
        print('        "positions": [')
        for feature, moves in data["positions"]:
            print(f"            ({feature!r}, {_literal(moves, ' ' * 13)}),")
        print("        ],")
        print('        "final": [')
        for result, moves in data["final"]:
            print(f"            ({result!r}, {_literal(moves, ' ' * 13)}),")
        print("        ],")
        print("    },")
    print("}")


_DATA: dict[str, dict[str, list]] = {
    'troll': {
        "positions": [
            ('pass', ('c5 a5 b3 b7 g2 a4 g3 c3 g1 f4 c6 d7 c8 f2 g7 c4 g6 e4 e6 a7 c7 f7 b6 a3 f1 b5 e7 h2 '
              'g8 a6 f3 b2 b8 h5 a8 c2 e5 h4 d5 a2 b4 f5 b1 h3 d2 d6 g5 d1 d8 d4 e1 d3 f8 a1 e2 c1 '
              'h1 e8 h6 g4 e3 f6')),
            ('after-pass', ('c5 a5 b3 b7 g2 a4 g3 c3 g1 f4 c6 d7 c8 f2 g7 c4 g6 e4 e6 a7 c7 f7 b6 a3 f1 b5 e7 h2 '
              'g8 a6 f3 b2 b8 h5 a8 c2 e5 h4 d5 a2 b4 f5 b1 h3 d2 d6 g5 d1 d8 d4 e1 d3 f8 a1 e2 c1 '
              'h1 e8 h6 g4 e3 f6 pass')),
            ('edge-capture', 'b5 d5 d1 a4 g6 c6 f5 e4 c7'),
            ('early-p2', 'b5'),
            ('midgame-p1', 'd2 f6 f1 b4 e2 c6 e6 b6 f5 h3'),
            ('midgame-p2', 'e1 f2 b2 b5 c3 g7 g4 d4 f8 h3 e8'),
            ('long-p1', ('e3 g6 b7 a3 b5 d7 d6 h7 c8 e2 f8 a2 f6 e4 d8 c4 c3 c7 g7 b6 f2 f4 e5 g2 e8 d5 g3 e7 '
              'b1 h6 e1 d3 b8 b2 f3 f1 b3 h5 f5 g5 c5 a7 g8 c2 a5 d2')),
            ('long-p2', ('e3 e4 b2 e5 f6 c3 g1 e2 c1 g5 d8 g4 f1 b4 f8 d7 g6 h4 e7 g3 c8 h2 d3 d4 b1 c5 c4 g2 '
              'b3 a4 b5 a7 c6 a2 g8 d5 e6 c7 h3 f3 f4 b7 h5 h1 e8')),
            ('win-in-one', ('e7 a4 f4 h7 c8 d6 c1 h5 f3 f8 f1 c3 e2 e5 d7 d4 e6 g7 d2 e4 b1 b4 a5 d3 f2 d8 b8 g4 '
              'g2 a7 g1 c2 f7 c6 f6 h2 a3 a2 a1 h4 g3 c4 b5 g5 h6 b3 b6 b7')),
            ('sample', 'g1 h5 c1 f7 e5 f6 b5 h7 e8 a5'),
            ('sample', 'g3 c3 d6 e7 b3 g5 f6'),
            ('sample', ('e5 d4 g1 g7 e3 f4 g2 c4 f8 c3 e1 d2 f6 e2 c1 a5 g3 f5 b1 g6 c5 d3 e7 a6 d7 b5 b2 h5 '
              'e4 a3 d6 f7 h8 g4 c7 b4 f2 b3')),
            ('sample', 'g4 c7 g7 d3 c1 d2 d1 d6 c3 c2 g3 e4 e6 b7 e2 g2 c6 e3 g8 b3 e8 d5 f5'),
            ('sample', 'd1 f4 b1 d4 f7 d3 f3 d7 e2 f6 d5 c7 b7 g5 g8 c3 f8 g4 g7 b6 b3 g2 g6 h6 g3 b5 c4 f2'),
            ('sample', ('f7 g4 e5 e2 g3 c4 b4 a4 d7 c2 d3 a7 d1 e3 g2 e6 c1 d6 b8 c8 d5 a8 d8 h7 b6 g1 d2 g8 '
              'e8 f6 f3 h3 b7 c6 f4 a3 b2 a2 e7')),
            ('sample', ''),
            ('sample', 'b2 h7 d4 f2 c2 a5 e2 a3 d1 f5 f8 e4 b1 c4 f4 g2 f3 f6 d2'),
            ('sample', 'e7 d7 f2 c6'),
            ('sample', 'g6'),
        ],
        "final": [
            ('0-1', ('d2 f6 f1 b4 e2 c6 e6 b6 f5 h3 c2 b7 c1 g5 e7 a2 f7 h4 d4 c3 e5 e1 b1 g1 d7 c5 d1 d8 '
              'g4 g6 e3 f4 g8 a1 c7 f3 a7 g7 c8 c4 h5 a5 a4 a8 b8 b3 b2 a6 h8 h7 e8 h2 d3 d5 g2 d6 '
              'h6 b5 f8 a3 g3 e4')),
            ('1-0', ('b5 d5 d1 a4 g6 c6 f5 e4 c7 a5 e8 f3 g7 a3 d4 b3 c2 h4 g2 h5 d2 h6 g1 h7 c8 e6 g3 e5 '
              'd6 e2 f4 g5 c4 f7 d8 d3 b8 a7 b7 e7 e3')),
            ('1/2-1/2', ('e7 a4 f4 h7 c8 d6 c1 h5 f3 f8 f1 c3 e2 e5 d7 d4 e6 g7 d2 e4 b1 b4 a5 d3 f2 d8 b8 g4 '
              'g2 a7 g1 c2 f7 c6 f6 h2 a3 a2 a1 h4 g3 c4 b5 g5 h6 b3 b6 b7 e8 e3 h3 c5 a8 d5 e1 g6 '
              'f5 h1 b2 c7 d1 a6 h8 g8')),
        ],
    },
    'atoll': {
        "positions": [
            ('swap-offer', 'g4'),
            ('after-swap', 'i5 swap'),
            ('swap-game', 'i5 swap f2 j6 b5 j9 k5 d10 e9 b9 g11 g9 k10 d2 c5 i5 b2 j4 f4 b7'),
            ('early-p2', 'g4'),
            ('midgame-p1', 'c10 i9 l6 b10 e8 c9 i3 h6 h10 k8'),
            ('midgame-p2', 'b9 c5 c4 g4 d7 l6 k7 f7 e10 j10 e5'),
            ('long-p1', ('e4 j2 i6 c9 g4 j8 h8 k4 j6 b10 k3 b3 i2 e11 j7 e7 d10 i7 k2 k6 i8 h3 l10 d5 e10 d6 '
              'k8 h6 b4 c4 e2 b9 g8 b7 g5 k11 i10 j10 j3 k10 d9 l3 f3 c5 b6 c10')),
            ('long-p2', ('e4 f3 c6 l2 g8 h10 d3 c4 b10 b4 h4 j6 f8 c2 e9 j5 j9 h2 f9 e2 c11 f10 e11 b6 g4 g6 '
              'e8 e5 h7 h5 i9 c10 i6 j4 l5 g7 e10 g10 l4 h9 d2 l8 l7 k7 k11')),
            ('win-in-one', ('j5 e6 l3 f10 k8 l6 k3 i5 b5 h7 e7 k9 b9 d5 c9 g9 i6 e11 h2 j9 c8 k7 f3 b3 e9 i3 g2 '
              'e3 i2 d9 c5 d7 j7 d6 d8 b2 b4 f9 g4 f4 f5 e8 f6 d3 h10 l8 j6 j2 d10 d2 k5 e2 g11 g5 '
              'b7 h4 h9 d4 c11 g6 c3 h8 h5 l7 l5 b6 i8 c6 i7 j3 i9 l4 i11 c10 h3 h6 k6 e4 b10 f8 '
              'b8 i4 j4')),
            ('sample', ('c4 h8 l9 b4 k8 g8 l4 l6 i10 f10 l7 k7 k2 g7 e8 k6 e4 h9 l10 l5 j9 c7 j8 d6 d2 l2 f2 '
              'j10 d3 i3 b9 i4 l8 d4 f7 g10 f8 e11 c6 b10 k3 d8 i5 e7 c2 i11 g4 i6 g2 k9 c3 j5 k4 '
              'f9')),
            ('sample', ('e8 d3 h7 k3 d8 h2 h9 g3 k8 j6 d2 j5 g10 b2 l6 c10 f8 b7 l7 f7 c11 l4 d9 d10 j10 f5 '
              'c4 f10 f3 g8 e7 i7 d4 g7 d5 i4 f4 c9 k7 e9 h5 f6 g11 e10 d7 g9 h6 j8 i5 b5 e5 f2 e2 '
              'c6 k6 b10 l8 b9 h8 b3 b8 l5 k4 k11 i2 h10 i6 b6 g2 j3 i11 k9 h3 j4 h4 i9 b4 k2 d6 '
              'c2 e3 l2 c7 f9 c5 l3 j2 j9 i10 k10 l9 i3 l10')),
            ('sample', 'g10 f3 c3 k9 e3 f5 d5 e9 l8 l9 j10 d3 b8 b10 h4 c2 b5 f8 d8 k6 g4 b3 i4 h10'),
            ('sample', ('g2 j9 j5 d5 b4 b9 b6 i5 d8 b10 e2 l10 e11 g11 i11 c8 k10 k9 k4 c6 g7 d3 k7 d4 g4 j4 '
              'k8 f10 f2 g6 k6 b5 h3 i2 b8 d10 k11 h5 j2 h10 f8 j8 e8 g3 j6 b3 i6 l4 e10 f7 g10 e4 '
              'i8 d9 f5 c11 c3 d6 l6 l3 j7 i10 h6 h9 i4 l7 f9 k5 k2 k3 h2 j10 c9 b7 l9 c4 e6 d2 g9 '
              'f3 j3 g5 h4 l8 h8 c2 i7 l2 c7 f4 c10 b2 e9 e5 f6 e3 c5 i9 e7')),
            ('sample', ('b6 f7 l3 b2 f4 j2 d7 e4 k2 c9 i10 f9 j8 l2 h7 h3 l10 l4 j4 d6 i11 f5 h6 f10 c7 i3 '
              'g7 k5 h8 d9 i7 i5 h4 i4 d4 b7 b10 g6 d8 l8 i6 k7 g10 c2 d2 g3 f8 e3 j7 g2 c8 k4 i8 '
              'f2 j5 d5 b3 b4 g11 c4 l9 e7 d3 h2 g9 i9 i2 k3 d10 f3 g5 k10 l6 c10 k8 e10 c3 c6 b9 '
              'j9 h9 e5 h5 k11 e11 e6 j10 k6 e2 b5 f6 c5')),
            ('sample', ('j7 f9 g8 l3 l4 b10 e8 e9 e10 e4 i7 b6 d10 k6 i9 b8 d4 d3 h9 b5 k7 h10 i4 k3 j8 k2 '
              'j9 l2 b3 d9 f8 g4 h5 e7 d7 c5 k5 b9 c2 h8 h4 c8 l10 l9 d6 k10 e6 f2 i6 l8 j3 d5 j5 '
              'k11 f4 i11 i2 f3 g11 b4 j2 c7 b7 g7 d8 i5 h6 g3 f7 f10 b2 c9 i8 d2 i10 j6 e2 k8 f5 '
              'g10 e5 l7 i3 h3 g5 h2 k4 e3 g6')),
            ('sample', ('l10 l8 i6 b8 h7 l4 b10 f7 k5 k3 d9 c10 g6 g3 d7 b9 c6 i4 g5 b7 c11 d8 b2 f3 i3 j10 '
              'd4 k10 i10 j6 i11 d2 l5 d10 g11 g2 j2 l3 c3 b4 h4 k6 e11 g9 c2 f8 h9 j7 c8 i8 f9 i2 '
              'l9 h5 b5 g7 e4 b3 h6 h2 h10 i9 k7 i5 d3 e3 c9 k2 j3 e5 c5 l7 k11 l2 d5 d6')),
            ('sample', 'c5 k11 l5 f3 b10 c8 f9 c10 c2 b6 g9 k5 e10 b2 e11'),
            ('sample', ('j4 k5 d3 i3 i5 e5 k10 e3 f4 b4 h3 j2 j8 e9 k7 h7 b3 d7 c7 c11 c2 l3 f5 h8 d6 f3 g3 '
              'k11 h9 g4 d5 k9 g2 d4 h2 k3 h5 f2 e10 c4 j5 c9 c6 e4 l2 i2 c10 l4 l6 i4 j6 h10 e11 '
              'c5 c3 b2 i8 d10 k4 k2 b10 b5 g6 j7')),
            ('sample', ('i6 d4 b8 g6 h3 i11 l3 f5 h6 g4 e4 c3 k9 k3 e10 i8 i5 j7 l8 f7 c11 f4 g10 i10 i2 b10 '
              'b9 l4 d9')),
        ],
        "final": [
            ('0-1', ('c10 i9 l6 b10 e8 c9 i3 h6 h10 k8 g7 e3 c6 i8 b5 h2 i2 k10 b2 i7 f6 e11 l3 d2 g6 b7 '
              'b6 b9 l2 b4 i6 f5 j7 c3 l8 f9 k3 l5 g2 i10 g3 i11 d9 j9 g5 e6 b8 g4 l7 h9 j6 c11 d8 '
              'j10 k11 f2 d4 f10 l10 j2 h5 j4 e4 f8 f7 l4 k2 k5 h8 c4 k6 f3 j3 e9 h7 d3 e7 h3 k7 '
              'l9 k4 e10 c5 g11 j8 c8 d10 k9 j5 e2 e5 g8 b3 g10 c2 f4 i4 i5 g9 d5 c7 h4 d6')),
            ('1-0', ('g4 l5 g9 b7 e8 i5 i2 g10 f4 i4 g3 j10 e2 i11 c11 f5 d2 c6 l3 f2 k3 l4 d5 g6 c7 c3 '
              'h4 j8 l6 c9 h9 j5 h3 e10 k8 k2 l9 g2 b10 b3 d3 j2 k6 f6 j3 k9 k5 i8 i6 b2 i7 g11 e9 '
              'd10 l2 e11 l7 b9 d8 j6 e4 e6 d4 j9 h10 c4 c5 g8 k10 k7 c10 h2 g7 i3 b8 h5 e7 l10 h7 '
              'd7 j4 i9 j7 f3 h6 b6 g5 f9 e5 d6 c2 d9')),
        ],
    },
    'morris': {
        "positions": [
            ('placing-mill', 'f2 b2 d7 d6 e3 e4 c5 f4 c4'),
            ('moving-mill', 'f2 b2 d7 d6 e3 e4 c5 f4 c4 e5 a4 g4xe3 a1 d3 f6 d1 c3xe5 d2xf2'),
            ('remove-from-mill', ('g1 e4 g7 f6 a1 e3 c3 c4 d1xe3 d5 f2 d7 g4xe4 a7 b4 e5 d3 c5xb4 a1-a4 f6-d6xf2 a4-b4 '
              'd6-b6 g4-f4 e5-e4 f4-g4xa7 d7-a7 g7-d7 a7-a4 d7-g7xb6 e4-e5xd3 g7-d7 d5-d6 d7-g7xc5 '
              'd6-f6 b4-b2 a4-a7 c3-d3 f6-f4 b2-d2xa7 c4-d7 d3-c3 d7-c4 d2-f2 f4-d3 d1-d2 e5-e3 '
              'd2-b2 d3-a1 g7-d7 e3-d5 d7-d6 c4-e5 g1-d1 a1-e3 c3-d3 e3-c5xf2')),
            ('flying', ('f2 b2 d7 d6 e3 e4 c5 f4 c4 e5 a4 g4xe3 a1 d3 f6 d1 c3xe5 d2xf2 c5-d5 d2-f2 d7-a7xb2 '
              'g4-g1 d5-c5xd3 f2-d2 c3-d3 f4-g4 d3-c3xg1 g4-g1 c5-d5 d6-d7 a4-b4 d2-b2 a7-a4xd7 '
              'e4-e3 d5-d6 d1-d2 c4-c5 g1-g4 b4-c4xd2')),
            ('opponent-flying', ('f2 b2 d7 d6 e3 e4 c5 f4 c4 e5 a4 g4xe3 a1 d3 f6 d1 c3xe5 d2xf2 c5-d5 d2-f2 d7-a7xb2 '
              'g4-g1 d5-c5xd3 f2-d2 c3-d3 f4-g4 d3-c3xg1 g4-g1 c5-d5 d6-d7 a4-b4 d2-b2 a7-a4xd7 '
              'e4-e3 d5-d6 d1-d2 c4-c5 g1-g4 b4-c4xd2 g4-a7')),
            ('few-moves', ('b6 f6 c4 d1 d6 g1 f2 f4 a1 d7 d5 a4 c3 b2 a7 e4 d2 g4xc3 c4-b4 d7-g7xb4 b6-b4 e4-e5 '
              'd5-c5 e5-d5 b4-c4 d5-e5 d2-d3 e5-e4xc5 c4-c3 b2-d2 d3-e3 e4-e5 e3-d3 e5-e4xd6 c3-c4 '
              'e4-e3 c4-c3 e3-e4xa7')),
            ('block-win', ('c5 a4 a1 c4 d3 e5 g7 d2 d6 f4 c3 b2 e4 f2xd6 e3xf4 g4 d7 b4xc5 d7-d6 c4-c5 d6-b6 '
              'e5-d5 b6-d6 d5-e5 d6-f6 f2-f4 g7-d7 c5-c4xd7 a1-d1 a4-a1 d1-g1 a1-d1 f6-d6 b4-a4 '
              'd6-d5')),
            ('early-p2', 'f2'),
            ('midgame-p1', 'g1 e4 g7 f6 a1 e3 c3 c4 d1xe3 d5'),
            ('midgame-p2', 'd7 g4 g1 b2 b6 d2 f2 f6 g7 e5 b4'),
            ('long-p1', ('a4 e4 e5 g1 d2 e3 g7 a7 c4 b6 b4xe3 a1 d6 d1xg7 c5 e3 c3xe3 b2 d6-d5xe4 a7-d7 d2-f2 '
              'd7-d6 f2-f4 d1-d2 e5-e4 g1-g4 e4-e5xd2 g4-g7 f4-f6 d6-d7 a4-a7 a1-a4 f6-d6 a4-a1 '
              'a7-a4xb6 b2-d2 e5-e4 d2-d3 e4-e3 d3-d2 e3-d3 g7-g4 d6-b6 d7-g7 a4-a7 a1-d1')),
            ('long-p2', ('a4 f6 g4 b4 e4 d1 g7 g1 a7 c3 a1xd1 f4 b6 d2 d7xf6 b2 f6 d6 e4-e5 c3-c4 a1-d1 '
              'f4-f2xf6 d1-a1xg1 d2-d3 e5-d5 b2-d2 a1-d1 d3-e3 d1-g1xe3 d2-d1 a4-a1 c4-c3 d5-e5 '
              'd6-d5 a7-a4 b4-b2 a4-a7xf2 c3-d3 b6-d6 d5-c5 e5-d5xb2 c5-b4 a1-a4 b4-b2 d5-e5')),
            ('win-in-one', ('e4 b6 f2 c4 e5 a7 d5 d6 e3xd6 g7 a4 a1 c3 b2 d2 d7xc3 c3 g1 d2-d3xa1 b6-d6 a4-a1 '
              'a7-a4 d5-c5 c4-b4 f2-d2 d6-b6xc5 a1-d1xg7 d7-g7 d1-a1 g7-d7 a1-d1xa4 d7-g7 d2-f2 '
              'g7-d7 d1-a1 g1-d1 d3-d2 d7-g7 e5-d5 g7-g4 e3-d3 d1-g1 d5-e5 g4-f4 d2-d1 b6-d6 '
              'f2-d2xd6 f4-f2 d3-e3xg1 f2-d7')),
            ('sample', ('g7 c5 a7 b2 c3 d2 d7xc5 e5 f4 f6 f2 e3 e4 d3 a4 c4 c5 d1xe4 a4-a1 e5-e4 a1-a4 e4-e5 '
              'a4-a1 e5-d5 f4-e4 d1-g1 d7-d6 g1-d1xa1 g7-d7 f6-f4 d6-b6 d5-e5 d7-d6 d1-a1 a7-d7 '
              'a1-d1xe4 d7-a7 f4-e4xa7 d6-d7 e4-f4 d7-d6 f4-e4xd6 c5-d5 d1-a1')),
            ('sample', ('b6 d1 d5 c4 a4 c5 e4 b2 g1 c3xd5 f6 a7 e3 g4 d6xa7 a7 e5xg4 f4 a4-a1 c4-b4 d6-d5 '
              'b4-c4xf6 a1-a4 f4-f6 b6-b4 a7-d7 e4-f4 b2-d2 f4-e4xd7 d2-f2 b4-b2 f6-f4 a4-b4 d1-a1 '
              'b4-b6 a1-d1 b2-d2 c4-b4 b6-d6 b4-b6 e3-d3')),
            ('sample', ('d2 d6 g7 b6 f2 a1 b4 f6xb4 d1 d7 g4 c4 a4 a7 g1xa7 b2 d3xc4 b4xf2 d3-e3 d7-a7 g4-f4 '
              'b4-c4 f4-f2 c4-b4xd1')),
            ('sample', 'f4 d3 e3 d1 a7 g7 d7 d2xa7 b6 g4 a1 c5 f2 g1xe3 a4 c3 a7xc3 c4 b6-d6 d3-c3xd7 d6-b6'),
            ('sample', ('d7 f4 a7 f2 c4 a4 f6 d1 g7xa4 c5 d5 e4 d6xf4 d2 b2 e5 b6xe5 f4 c4-b4xd1 c5-c4 g7-g4 '
              'd2-d3 b4-a4 d3-c3 a4-b4xc3 e4-e5 a7-a4 c4-c3 b2-d2 c3-c4 b4-b2 f4-e4 g4-g1 e4-f4 '
              'a4-a7 c4-b4')),
            ('sample', ('e3 f4 b2 g7 d6 f6 f2 b6 d2xb6 d7 d1 a7xe3 g4 a4 b6 e3 g1 a1xd6 d2-d3 a4-b4 f2-d2xe3 '
              'b4-a4xg4 b6-b4 f4-g4 b4-c4 f6-d6 b2-b4 d6-f6 c4-c5 d7-d6 d2-b2 d6-b6 c5-d5 g4-f4 '
              'b2-d2xf6 f4-e4 g1-g4 a7-d7 d5-c5 e4-f4 d1-g1 a4-a7xg4 g1-d1xf4 a7-a4 c5-d5 a4-a7xd5 '
              'd2-b2 a7-a4 b2-d2xa4 d7-d6 d3-e3 d6-f6 d1-g1 b6-d6 g1-d1 g7-d7 e3-e4 d7-g7 e4-e3 '
              'd6-b6 e3-e4 g7-g4 b4-b2 g4-g7 d1-g1')),
            ('sample', ('d5 d7 c5 g7 f2 a7xd5 d6 a1 e5 e4 f6 g1 a4 g4xc5 d5 d2 e3 d3 d6-b6 a1-d1xf6 b6-b4 '
              'g4-f4 a4-a1 g7-g4xa1 b4-a4 d7-g7xf2 d5-d6 d2-b2 a4-a1 d3-d2 d6-d5 f4-f2xe3 a1-e3 '
              'b2-b4')),
            ('sample', 'g4 f6 g7 d1 b4 a1 a4 d7 e3 c5 a7 e5 c4xf6 b2 d6 e4 g1xb2 d3 b4-b6'),
            ('sample', 'e4 c3 d1 d5 e5 b6 d6 f2 a7 f6 e3xc3 b2 c3 b4xd6 d6 d7 g1 a4'),
            ('sample', ('d5 d1 d7 b2 e5 c3 f2 e3 e4 d6 g4 d2 f4xc3 b4 c5xd6 b6xf2 d6xd2 a4 g4-g7 b2-d2 f4-g4 '
              'b4-c4 g4-f4 d1-g1 d7-a7 e3-d3 g7-g4xa4 b6-b4 f4-f2 d2-b2 a7-d7xd3 g1-d1 d6-b6 d1-d2 '
              'g4-f4')),
        ],
        "final": [
            ('0-1', ('d7 g4 g1 b2 b6 d2 f2 f6 g7 e5 b4 c5 a7xf6 d5xb6 c4 e3 f4 e4xg1 a7-a4xb2 d5-d6 b4-b2 '
              'd6-d5xc4 d7-a7 g4-g1 b2-b4 d2-d3 f4-f6 c5-c4 f6-f4 c4-c3xf2 g7-g4 d3-d2 a4-a1 d5-c5 '
              'a1-a4 g1-d1 g4-g1 d2-d3xf4 g1-g4 c5-d5 b4-b2 d5-c5 a4-b4 d1-d2 b4-a4 e4-f4 b2-b4 '
              'e5-d5 g4-g1 c5-c4 g1-g4 d5-c5xa4 g4-d5 f4-e4 d5-e5 e4-f4 b4-g7 d2-d1 g7-a1 d3-d2 '
              'e5-b6 e3-d3xa7')),
            ('1-0', ('f2 b2 d7 d6 e3 e4 c5 f4 c4 e5 a4 g4xe3 a1 d3 f6 d1 c3xe5 d2xf2 c5-d5 d2-f2 d7-a7xb2 '
              'g4-g1 d5-c5xd3 f2-d2 c3-d3 f4-g4 d3-c3xg1 g4-g1 c5-d5 d6-d7 a4-b4 d2-b2 a7-a4xd7 '
              'e4-e3 d5-d6 d1-d2 c4-c5 g1-g4 b4-c4xd2 g4-a7 d6-b6 b2-e5 b6-b4xe3')),
            ('1/2-1/2', ('g1 e4 g7 f6 a1 e3 c3 c4 d1xe3 d5 f2 d7 g4xe4 a7 b4 e5 d3 c5xb4 a1-a4 f6-d6xf2 a4-b4 '
              'd6-b6 g4-f4 e5-e4 f4-g4xa7 d7-a7 g7-d7 a7-a4 d7-g7xb6 e4-e5xd3 g7-d7 d5-d6 d7-g7xc5 '
              'd6-f6 b4-b2 a4-a7 c3-d3 f6-f4 b2-d2xa7 c4-d7 d3-c3 d7-c4 d2-f2 f4-d3 d1-d2 e5-e3 '
              'd2-b2 d3-a1 g7-d7 e3-d5 d7-d6 c4-e5 g1-d1 a1-e3 c3-d3 e3-c5xf2 d6-b6 c5-f6 d3-d2 '
              'd5-d6 d2-d3 f6-d5 g4-f4 d6-c5xf4 b2-b4 d5-g7 d3-e3 e5-a1 b4-c4 a1-d3 d1-d2 d3-g1 '
              'b6-d6 g1-e5 d2-b2 e5-e4 d6-d7 c5-f4 b2-b4 f4-d6 e3-d3 e4-d2 d3-c3 g7-a4 b4-b2 d2-f4 '
              'c4-c5 a4-b6 b2-d2 d6-c4 d2-d1 f4-d6 d1-a1 c4-e5 d7-a7 d6-e4 a7-d7 e5-g1 c3-c4 e4-f4 '
              'a1-d1 g1-b4 d1-a1 b6-a7 a1-d1 b4-g7 c4-b4 f4-g1 c5-d5 g7-b2 d5-d6 g1-f6 b4-a4 f6-e4 '
              'd6-b6 e4-d2 d7-g7 d2-b4 d1-d2 b4-e3 d2-d3 a7-f2 d3-d2 e3-c3 d2-d3 f2-e5 d3-e3 b2-g1 '
              'e3-d3 e5-f6 d3-d2 g1-e5 d2-d1 e5-b2 b6-b4 b2-b6 b4-b2 f6-d6 a4-a7 c3-d7 b2-d2 d6-b2 '
              'd2-f2 b6-f6 a7-a4 b2-b6 a4-a7 d7-d6xg7 a7-e3 f6-g1 d1-c5 d6-a7 e3-g7 a7-d5 g7-a4 '
              'd5-d3 f2-c4 d3-e4 a4-d3 g1-g7 c4-f6 g7-d1 f6-a1 d1-d7 c5-d2 d7-a7 d3-d5 e4-c5 a1-c4 '
              'a7-e3 d2-c3 b6-a4 c4-e5 e3-g4 d5-d2 a4-d1 e5-a7 g4-a4 a7-b2 d1-f2 d2-d3 f2-e4 b2-f4 '
              'e4-a1 d3-a7 c5-b6 c3-b2 a4-d7 f4-d5 b6-f2 b2-g1 a1-e4 g1-c5 d7-d6 a7-g7 f2-d7 c5-f6 '
              'd6-d1 f6-f2 e4-e3 g7-c5 d7-c3 f2-a4 d1-c4 d5-f2 c3-d5 a4-b4 c4-g7 b4-f6 e3-c3 f6-d7 '
              'g7-e4 d7-g7 e4-b6 g7-f4 b6-g7 c5-b2 g7-d2 f2-f6 c3-d6 f4-e3 d5-b6 b2-f2 d6-c3 f6-e5 '
              'c3-g1 e3-c3 d2-f6 e5-e3 b6-b4 f2-e5 f6-e4 c3-a4 g1-d7 e5-d6 e4-f6 e3-a7 b4-d3 a4-g1 '
              'd3-f4 d6-a4 f6-c5 a7-a1 c5-d5 a1-g4 d7-d2 g4-e4 f4-g4')),
        ],
    },
    'talisman': {
        "positions": [
            ('placement-p1', 'L M A H'),
            ('placement-p2', 'L M A'),
            ('first-movement', 'L M A H S G D Q P R B C'),
            ('capture', 'L M A H S G D Q P R B C D-I'),
            ('multi-capture', 'L M A H S G D Q P R B C D-I G-K S-O C-G I-D R-S P-F'),
            ('after-multi-capture', ('L M A H S G D Q P R B C D-I G-K S-O C-G I-D R-S P-F S-P O-J G-O D-I K-G B-C Q-N J-K '
              'N-R I-E H-I E-J R-S F-B O-R K-O I-K O-E M-H J-F K-J A-D R-O B-A H-I F-K S-R K-H')),
            ('triangle-claim', 'L M A H S G D Q P R B C D-I'),
            ('early-p2', 'L'),
            ('midgame-p1', 'C R B L D M P Q S A'),
            ('midgame-p2', 'A C D P H R S L M Q B'),
            ('long-p1', ('D R Q C M L H S A P B G D-I S-O B-F G-E I-B O-K M-I L-G I-M R-O E-I K-L Q-R F-K R-N '
              'O-J N-F C-N A-E G-C M-O C-G H-D F-C O-S J-O S-J P-S N-R L-P I-H S-Q H-I G-F')),
            ('long-p2', ('D H B Q S C A G L P R M D-E P-K R-O K-P E-I G-K O-G H-D G-F D-H A-D H-A S-R D-H I-N '
              'C-G F-C H-I R-S Q-R S-Q I-H B-F P-O K-P O-J N-I J-O I-N A-E F-B H-I N-J')),
            ('win-in-one', ('Q G L S A R H C B D M P Q-N G-F M-I R-Q B-E Q-R E-G C-B G-K P-O I-M B-P M-Q F-G A-E '
              'D-F N-I E-J I-M F-E Q-N E-F L-C J-E G-L E-B H-D K-J D-H J-Q H-I F-G I-H N-I H-D B-A '
              'L-K Q-N C-L A-H K-J D-A J-E')),
            ('sample', ('B P A Q M S R L H D C G B-E S-O C-F Q-S E-B P-K F-E O-P E-F P-O M-Q D-E F-D O-J B-F '
              'J-C H-I K-O E-J F-E Q-N S-P A-B O-S J-O P-K O-P R-Q N-M K-O D-A Q-R I-N E-F N-Q O-K '
              'A-E R-N Q-J S-R N-Q R-S E-I S-O M-N O-R Q-M R-Q J-E Q-R I-D K-J B-K C-B D-A J-I')),
            ('sample', 'G'),
            ('sample', ('L G B H P C M S D A Q R B-E A-B E-J B-F P-K R-N J-O C-B L-C H-A G-L S-P C-J N-C L-S '
              'D-E O-N J-I N-R F-J S-O J-S K-J C-F J-K A-D Q-N I-H N-I S-L R-N F-C K-G B-A N-R O-K '
              'R-O P-N G-R H-Q I-J E-F J-E F-B E-I B-E O-P Q-S P-O C-B K-J B-C J-Q L-P I-B M-I O-K '
              'P-O K-J C-G N-P D-H O-N A-O B-M O-K N-O K-F P-L S-P O-S J-K E-B R-N L-C N-R I-N H-D '
              'G-O P-L O-J D-I S-O R-G M-E O-R E-A L-P Q-S K-L J-E F-K I-D K-O N-M O-N D-H P-K M-Q '
              'N-J E-D G-F B-P J-N A-B N-M R-N M-I K-G L-K H-J K-H Q-M I-E B-I J-O N-J O-A I-B J-O '
              'P-K H-Q')),
            ('sample', ('H S R C A Q B D L G M P M-N Q-J B-E D-I E-M C-F L-C F-K I-E N-Q R-N S-O E-S K-F H-D '
              'P-K A-B Q-H J-E K-P B-A F-K O-R K-F N-I M-Q S-O Q-S E-B P-L I-J S-E A-S R-K E-A L-P '
              'J-I H-J S-R I-E G-L J-I A-J I-H R-S K-I E-A')),
            ('sample', 'A L B M G D R C Q S P H R-O D-I O-R I-N P-O L-P'),
            ('sample', 'R H M B L D G C A P S Q G-K C-F M-N B-C S-O'),
            ('sample', 'P A Q B M R S D C H L G C-F B-C P-O D-I O-K A-B F-J B-F J-N F-B'),
            ('sample', 'B H C D Q'),
            ('sample', ('Q S C R G P M B H A L D M-I A-E G-F B-K Q-M E-J C-B J-O I-N D-I H-D I-J L-I O-E N-O '
              'J-L D-H S-J M-N O-S I-M F-G')),
            ('sample', 'P C A Q R L S G M D B H S-O G-K O-J K-F M-I D-N J-K'),
        ],
        "final": [
            ('0-1', ('Q G L S A R H C B D M P Q-N G-F M-I R-Q B-E Q-R E-G C-B G-K P-O I-M B-P M-Q F-G A-E '
              'D-F N-I E-J I-M F-E Q-N E-F L-C J-E G-L E-B H-D K-J D-H J-Q H-I F-G I-H N-I H-D B-A '
              'L-K Q-N C-L A-H K-J D-A J-E I-J M-Q O-K E-F K-B G-K J-E K-G H-M L-K P-L K-J E-D J-C '
              'M-H Q-J D-E F-K E-I C-F R-Q K-O L-K F-E K-L O-R I-D J-K H-M N-O S-P E-F M-N F-E P-S '
              'E-J N-I J-F D-E G-C L-P K-J P-K J-L Q-N K-J N-Q F-G S-P O-S I-M J-I A-D I-N D-H G-K '
              'E-A N-J P-F L-P B-E J-L E-J S-O J-S C-G F-J R-N J-F K-B A-C F-J Q-R J-K H-I N-Q B-F '
              'Q-H C-B G-E R-N K-J N-R E-D B-K P-B R-Q F-C Q-N K-F N-Q B-E S-P C-G P-S F-K O-N E-F '
              'N-R K-O S-P L-S I-E G-K E-G J-N F-C D-E G-L E-J C-G N-I G-C K-F R-K J-N K-B S-R F-E '
              'P-S E-A R-K B-E I-J E-D S-P L-I N-R K-F P-S F-B M-E C-F O-K J-N K-G Q-M S-P M-Q G-K '
              'N-O P-N A-J K-G F-K N-F Q-S H-M R-Q I-H S-P O-N E-A H-I P-L F-P Q-R P-O A-E M-Q L-P '
              'Q-S E-F I-E D-I K-L F-Q O-K P-O R-D J-A L-P E-J N-M O-R P-O J-N I-J N-F M-H F-P O-E '
              'B-F J-I F-J G-F R-N H-M Q-H I-R J-C S-O A-J O-G E-I R-S P-L S-R M-Q N-O H-A R-N J-S '
              'K-B A-E F-K E-A N-R Q-M G-F I-N F-E C-F R-Q F-P E-F A-C F-E C-F E-A')),
            ('1-0', ('L M A H S G D Q P R B C D-I G-K S-O C-G I-D R-S P-F S-P O-J G-O D-I K-G B-C Q-N J-K '
              'N-R I-E H-I E-J R-S F-B O-R K-O I-K O-E M-H J-F K-J A-D R-O B-A H-I F-K S-R K-H G-F '
              'J-N O-M E-J F-B L-K N-Q K-O B-F C-G R-K J-N F-B G-F Q-J D-E O-R H-D J-H A-C P-O F-P '
              'I-J E-S R-G J-F N-I B-E M-N E-J N-M D-A O-E P-L K-P S-R I-N F-Q E-D L-K M-I K-F P-S '
              'C-L I-M F-B D-I G-F H-D J-K S-P B-C D-H C-G I-E A-D E-B R-O M-I O-S I-R F-J N-M Q-N '
              'B-F J-O R-I K-B N-Q O-R Q-N G-C N-Q B-E P-O D-N O-P I-J H-D F-B D-H J-K H-I E-A M-O '
              'B-E N-M E-D I-J A-E J-F E-B F-G K-F P-K L-P G-E B-A E-B S-J F-N P-S')),
        ],
    },
}

if __name__ == "__main__":  # pragma: no cover
    main()

"""What each checked position is there for: the features, as predicates on the referee's positions.

A feature is something an engine must get right (``specs/check.md``
§Positions): Troll's forced ``pass`` and the capture-only drops on corners
and the opponent's edges, Atoll's ``swap``, Morris removals (also out of a
mill), flying and nearly blocked positions, Talisman's placement phase and
multi-piece captures, and ordinary positions with each side to move.
:data:`FEATURES` maps each game's feature names to what they show and the
predicate that recognises them; :mod:`arbiter.check.positions` finds
positions with them and re-checks every stored one when it is loaded.
"""

from __future__ import annotations

from collections.abc import Callable

from arbiter.games import Color, Position, play_moves

__all__ = ["Predicate", "FEATURES", "QUICK_FEATURES", "COMMON_FEATURES", "mover_is_p1"]

#: (position, the moves that led to it from the start) -> does it show the feature?
Predicate = Callable[[Position, tuple[str, ...]], bool]


def _wins_now(pos: Position) -> bool:
    me = pos.to_move
    for move in pos.legal_moves():
        outcome = pos.play(move).outcome()
        if outcome is not None and outcome.winner is me:
            return True
    return False


def mover_is_p1(pos: Position) -> bool:
    return pos.to_move is pos.game.first


def _midgame(p1: bool) -> Predicate:
    return lambda pos, moves: 10 <= len(moves) <= 40 and mover_is_p1(pos) is p1


def _long(p1: bool) -> Predicate:
    return lambda pos, moves: len(moves) >= 45 and mover_is_p1(pos) is p1


def _early_p2(pos: Position, moves: tuple[str, ...]) -> bool:
    return 1 <= len(moves) <= 4 and not mover_is_p1(pos)


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
    return lambda pos, moves: 3 <= len(moves) < 12 and mover_is_p1(pos) is p1


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


COMMON_FEATURES: dict[str, tuple[str, Predicate]] = {
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
        **COMMON_FEATURES,
    },
    "atoll": {
        "swap-offer": ("White's first ply: `swap` is legal", _atoll_swap_offer),
        "after-swap": ("the move list contains `swap`: Black to move", _atoll_after_swap),
        "swap-game": ("a longer game that began with `swap`", _atoll_swap_game),
        **COMMON_FEATURES,
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
        **COMMON_FEATURES,
    },
    "talisman": {
        "placement-p1": ("placement phase, White to place on an edge point", _talisman_placement(True)),
        "placement-p2": ("placement phase, Black to place on an edge point", _talisman_placement(False)),
        "first-movement": ("ply 12: the first move after placement", _talisman_first_movement),
        "capture": ("a one-piece capture is legal", _talisman_capture),
        "multi-capture": ("a capture jumping two or more pieces is legal", _talisman_multi_capture),
        "after-multi-capture": ("the last move jumped two or more pieces", _talisman_after_multi_capture),
        "triangle-claim": ("a quiet move claims a triangle", _talisman_claim),
        **COMMON_FEATURES,
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


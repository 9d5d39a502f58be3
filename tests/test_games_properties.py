"""Properties every game must have, written once against the shared interface
(``arbiter/games/base.py``), run for all four games.

Rule-by-rule tests live in ``tests/test_<game>.py``; these check the contract
the rest of the project relies on: listed moves play, position strings
round-trip, games terminate, and outcomes agree with the move lists.
"""

from __future__ import annotations

import copy
import random

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from arbiter.games import (
    COLORS,
    GAME_NAMES,
    RESULTS,
    Color,
    IllegalMoveError,
    InvalidFenError,
    Position,
    Termination,
    atoll,
    get_game,
    morris,
    perft,
    perft_divide,
    talisman,
    troll,
)

# A game longer than this is a bug in the rules (every game has a progress or
# repetition rule, or a finite board): Morris' longest is bounded by the
# 100-ply rule plus repetition, Talisman's by its 50-ply rule.
MAX_PLIES = 5000

games = pytest.mark.parametrize("name", GAME_NAMES)


def random_game(name: str, seed: int, limit: int = MAX_PLIES):
    """Positions of one random game, start to end."""
    rng = random.Random(seed)
    position = get_game(name).start()
    positions = [position]
    while not position.is_over():
        moves = position.legal_moves()
        assert moves, f"{name}: no legal moves but no outcome at {position.fen()!r}"
        position = position.play(rng.choice(moves))
        positions.append(position)
        assert len(positions) <= limit, f"{name}: game did not end in {limit} plies"
    return positions


@games
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_terminate_with_a_consistent_outcome(name, seed):
    positions = random_game(name, seed)
    final = positions[-1]
    outcome = final.outcome()
    assert outcome is not None
    assert isinstance(outcome.termination, Termination)
    assert outcome.result in RESULTS
    assert final.legal_moves() == []
    for position in positions[:-1]:
        assert position.outcome() is None


def _repeated(position: Position) -> bool:
    outcome = position.outcome()
    return outcome is not None and outcome.termination is Termination.REPETITION


@games
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
@example(seed=29600)  # morris: its last position, ply 42, is a third repetition
def test_position_strings_round_trip(name, seed):
    game = get_game(name)
    for position in random_game(name, seed)[::7]:
        fen = position.fen()
        assert "moves" not in fen.split(), "a position string must fit `position fen <...> moves ...`"
        again = game.from_fen(fen)
        assert again.fen() == fen
        assert again.to_move is position.to_move
        if _repeated(position):
            # a position string carries no history (specs/games/morris.md §7,
            # talisman.md §7): the position it sets up is the first occurrence
            assert not _repeated(again)
        else:
            assert sorted(again.legal_moves()) == sorted(position.legal_moves())
        assert again.pieces() == position.pieces()
        assert again.scores() == position.scores()


@games
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_every_listed_move_is_legal_and_parses_to_itself(name, seed):
    for position in random_game(name, seed)[::5]:
        for move in position.legal_moves():
            assert position.parse_move(move) == move
            assert position.is_legal(move)
            after = position.play(move)
            assert after.ply == position.ply + 1


@games
def test_the_side_to_move_alternates_from_the_first_player(name):
    game = get_game(name)
    start = game.start()
    assert start.to_move is game.first
    assert start.ply == 0
    after = start.play(start.legal_moves()[0])
    assert after.to_move is game.first.other


@games
@pytest.mark.parametrize("garbage", ["", "zz", "??", "a0", "moves", "x" * 300, "e5-", "-", "pass pass"])
def test_garbage_moves_are_refused_with_a_reason(name, garbage):
    position = get_game(name).start()
    with pytest.raises(IllegalMoveError) as info:
        position.play(garbage)
    assert info.value.reason


@games
@pytest.mark.parametrize("garbage", ["", "nonsense", "x" * 500, "1 2 3 4 5 6"])
def test_garbage_position_strings_are_refused_with_a_reason(name, garbage):
    with pytest.raises(InvalidFenError) as info:
        get_game(name).from_fen(garbage)
    assert info.value.reason


@games
def test_a_finished_game_refuses_further_moves(name):
    final = random_game(name, seed=7)[-1]
    with pytest.raises(IllegalMoveError):
        final.parse_move("a1")


@games
def test_perft_divide_sums_to_perft(name):
    start = get_game(name).start()
    assert sum(perft_divide(start, 2).values()) == perft(start, 2)
    assert perft(start, 1) == len(start.legal_moves())


@games
def test_positions_describe_themselves(name):
    position = random_game(name, seed=3)[10]
    assert position.diagram().count("\n") >= 2
    assert all(isinstance(owner, Color) for owner in position.pieces().values())
    assert position.game is get_game(name)


@games
def test_the_side_to_move_is_one_convention(name):
    """Every game keeps whose turn it is as a side index (base.COLORS), and
    its position string writes it as w/b."""
    game = get_game(name)
    assert game.start().to_move is game.first
    for position in random_game(name, seed=11)[::9]:
        assert position.to_move is COLORS[position._side]
        assert position.to_move.side == position._side
        assert position.fen().split()[{"talisman": 2}.get(name, 1)] == "wb"[position._side]


# --- Legality written once --------------------------------------------------------
#
# Where a game keeps a fast check beside its move generator (a match plays
# moves on positions that never list theirs), play() must accept exactly the
# listed moves all the same.  Each candidate is played on a fresh copy of a
# position whose moves were never listed, so the check, not the list, decides.

def spellable_moves(name: str) -> list[str]:
    """Every canonical move string the game's notation can spell, legal
    somewhere or nowhere."""
    if name == "troll":
        return [*troll.CELLS, "pass"]
    if name == "atoll":
        return [f"{c}{r}" for c in atoll.COLUMNS for r in range(1, 13)] + ["swap"]
    if name == "morris":
        plain = [*morris.POINTS, *(f"{p}-{q}" for p in morris.POINTS for q in morris.POINTS)]
        return plain + [f"{m}x{r}" for m in plain for r in morris.POINTS]
    points = talisman.POINTS
    return [*points, *(f"{p}-{q}" for p in points for q in points)]


# Positions a random game seldom reaches: Troll's forced pass, the drop after
# it and the full board where neither side can drop (specs/games/troll.md §6);
# Morris flying, flying into a mill, all pieces in mills, blocked and one
# ply before; Talisman blocked and one ply before (from the rule tests).
SPECIAL_POSITIONS = {
    "troll": ["BWBWBWBW/WBWBWBWB/BWBWBWBW/WBWBWBWB/BWBWBWBW/WBWBWBWB/1WBWBWBW/WBWBWBWB w 63",
              "BWBWBWBW/WBWBWBWB/BWBWBWBW/WBWBWBWB/BWBWBWBW/WBWBWBWB/1WBWBWBW/WBWBWBWB b 64",
              "BWBWBWBW/WBWBWBWB/BWBWBWBW/WBWBWBWB/BWBWBWBW/BBWBWBWB/BBBWBWBW/WBWBWBWB w 65"],
    "morris": ["2B/1W1/3/2B3/2W/B1B/W2 w 0 0 0 40", "W1W/3/B1W/2B1B1/BBB/3/1B1 w 0 0 6 58",
               "BBB/3/3/1WW3/3/3/WW1 w 0 1 0 40", "3/3/3/W4W/1W1/WBW/BBB b 0 0 1 41",
               "3/3/3/W4W/2W/WBW/BBB w 0 0 0 40"],
    "talisman": ["wbb/bb../b.b../b.bb/b.b ...../......./......./b...b w 0/5 1 42",
                 "wbb/bb../b..../bbbb/b.b ...../......./......./b...b b 0/5 0 41"],
}
# Positions checked per game and seed: the first two, every SAMPLE_EVERY-th,
# and the last LAST_PLIES of a random game (where Morris flies).  Morris spells
# 15000 candidates, so it samples fewer.
SAMPLE_EVERY = {"troll": 6, "atoll": 12, "morris": 24, "talisman": 10}
LAST_PLIES = 3


def never_listed(name: str, seed: int) -> list[Position]:
    """Positions of one random game, each a copy taken before anything
    (legal_moves, outcome) was asked of it."""
    rng = random.Random(seed)
    game = get_game(name)
    walk = []
    position = game.start()
    while True:
        walk.append(copy.copy(position))
        moves = position.legal_moves()
        if not moves:
            break
        position = position.play(rng.choice(moves))
    samples = [p for p in walk[:-LAST_PLIES] if p.ply < 2 or p.ply % SAMPLE_EVERY[name] == 0]
    return [game.from_fen(fen) for fen in SPECIAL_POSITIONS.get(name, [])] + samples + walk[-LAST_PLIES:]


def _slot_names(cls: type) -> tuple[str, ...]:
    return tuple(name for klass in cls.__mro__ for name in klass.__dict__.get("__slots__", ()))


def fresh(position: Position) -> Position:
    """What ``copy.copy(position)`` makes (a new object of the same class with
    the same slot values, shared, and the unset slots unset), in about a
    quarter of its time: the test below makes one per candidate move, 15000
    per Morris position, and copy.copy's generic reduce/reconstruct was
    40% of its time."""
    cls = type(position)
    copied = object.__new__(cls)
    for name in _slot_names(cls):
        try:
            value = getattr(position, name)
        except AttributeError:
            continue
        setattr(copied, name, value)
    return copied


def test_fresh_is_a_shallow_copy():
    """fresh() stands in for copy.copy above: same class, same slots, no dict
    (a Position class with an instance dict would need copy.copy again)."""
    for name in GAME_NAMES:
        position = get_game(name).start()
        position.legal_moves()
        copied = fresh(position)
        assert type(copied) is type(position) and copied is not position
        assert not hasattr(copied, "__dict__")
        for slot in _slot_names(type(position)):
            assert getattr(copied, slot, None) is getattr(position, slot, None)


def same_position(a: Position, b: Position) -> bool:
    return (a.fen(), a.outcome(), a.scores(), sorted(a.legal_moves())) == (
        b.fen(), b.outcome(), b.scores(), sorted(b.legal_moves()))


@games
@pytest.mark.parametrize("seed", [1, 2])
def test_play_accepts_exactly_the_listed_moves_on_never_listed_positions(name, seed):
    samples = never_listed(name, seed)
    listed = [fresh(p).legal_moves() for p in samples]
    candidates = sorted(set(spellable_moves(name)).union(*listed))
    for pristine, legal in zip(samples, listed, strict=True):
        reference = fresh(pristine)
        assert reference.legal_moves() == legal
        # The verdict, asked first as a match does, agrees with the list.
        assert (fresh(pristine).outcome() is None) == bool(legal), pristine.fen()
        for move in candidates:
            try:
                after = fresh(pristine).play(move)
            except IllegalMoveError:
                assert move not in legal, (pristine.fen(), move)
            else:
                assert move in legal, (pristine.fen(), move)
                assert same_position(after, reference.play(move)), (pristine.fen(), move)

"""Properties every game must have, written once against the shared interface
(``arbiter/games/base.py``), run for all four games.

Rule-by-rule tests live in ``tests/test_<game>.py``; these check the contract
the rest of the project relies on: listed moves play, position strings
round-trip, games terminate, and outcomes agree with the move lists.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arbiter.games import (
    GAME_NAMES,
    RESULTS,
    Color,
    IllegalMoveError,
    InvalidFenError,
    Termination,
    get_game,
    perft,
    perft_divide,
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


@games
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_position_strings_round_trip(name, seed):
    game = get_game(name)
    for position in random_game(name, seed)[::7]:
        fen = position.fen()
        assert "moves" not in fen.split(), "a position string must fit `position fen <...> moves ...`"
        again = game.from_fen(fen)
        assert again.fen() == fen
        assert again.to_move is position.to_move
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

"""Nine Men's Morris, rule by rule (specs/games/morris.md).

Positions are set up with position strings (§9) built from point lists, so each
test shows the pieces it is about.  Properties every game shares (listed moves
play, strings round-trip, games end) live in test_games_properties.py.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arbiter.games import (
    Color,
    IllegalMoveError,
    InvalidFenError,
    Termination,
    get_game,
    morris,
    perft,
)
from arbiter.games.morris import MILLS, POINTS, RANKS

GAME = get_game("morris")
START = "3/3/3/6/3/3/3 w 9 9 0 0"

# 58 plies from the start to the mid-game perft position of §10.
MIDGAME_MOVES = (
    "d7 g4 g1 b2 b6 d2 f2 f6 g7 e5 b4 c5 a7xf6 d5xb6 c4 e3 f4 e4xg1 a7-a4xb2 d5-d6 "
    "b4-b2 d6-d5xc4 d7-a7 g4-g1 b2-b4 d2-d3 f4-f6 c5-c4 f6-f4 c4-c3xf2 g7-g4 d3-d2 "
    "a4-a1 d5-c5 a1-a4 g1-d1 g4-g1 d2-d3xf4 g1-g4 c5-d5 b4-b2 d5-c5 a4-b4 d1-d2 "
    "b4-a4 e4-f4 b2-b4 e5-d5 g4-g1 c5-c4 g1-g4 d5-c5xa4 g4-d5 f4-e4 d5-e5 e4-f4 "
    "b4-g7 d2-d1"
).split()
MIDGAME = "W1W/3/B1W/2B1B1/BBB/3/1B1 w 0 0 6 58"


def fen(white: str = "", black: str = "", side: str = "w", hands: tuple[int, int] = (0, 0),
        quiet: int = 0, ply: int = 40) -> str:
    """A position string (§9) from blank-separated point lists."""
    owner = {p: "W" for p in white.split()} | {p: "B" for p in black.split()}
    ranks = []
    for rank in RANKS:
        text, run = "", 0
        for point in rank:
            if point in owner:
                text += (str(run) if run else "") + owner[point]
                run = 0
            else:
                run += 1
        ranks.append(text + (str(run) if run else ""))
    return f"{'/'.join(ranks)} {side} {hands[0]} {hands[1]} {quiet} {ply}"


def position(*args, **kwargs):
    return GAME.from_fen(fen(*args, **kwargs))


def in_mill(pieces: set[str], point: str) -> bool:
    return any(point in mill and set(mill) <= pieces for mill in MILLS)


# --- §1 the board -------------------------------------------------------------------


def test_board_has_24_points_16_mills_32_connections():
    assert len(POINTS) == len(set(POINTS)) == 24
    assert len(set(map(frozenset, MILLS))) == 16
    edges = {frozenset((p, q)) for p, qs in morris.ADJACENT.items() for q in qs}
    assert len(edges) == 32
    for point in POINTS:
        assert sum(point in mill for mill in MILLS) == 2
        for other in morris.ADJACENT[point]:
            assert point in morris.ADJACENT[other]
    assert set(morris.ADJACENT["d6"]) == {"b6", "f6", "d7", "d5"}
    assert set(morris.ADJACENT["a1"]) == {"d1", "a4"}
    assert "d5" not in morris.ADJACENT["d3"] and "e4" not in morris.ADJACENT["c4"]


@settings(max_examples=300, deadline=None)
@given(bits=st.integers(0, 2**24 - 1))
def test_mill_tables_agree_with_the_definition(bits):
    """The byte tables behind move generation say what §4 says."""
    points = {name for name in POINTS if bits & morris.BIT[name]}
    completion = {q for q in POINTS for mill in MILLS if q in mill and set(mill) - {q} <= points}
    in_mills = {p for p in points if in_mill(points, p)}
    names = lambda mask: {name for name in POINTS if mask & morris.BIT[name]}  # noqa: E731
    assert names(morris.completion_points(bits)) == completion
    assert names(morris.in_mills(bits)) == in_mills
    assert names(morris.removable(bits)) == ((points - in_mills) or points)


# --- start, notation, position strings ------------------------------------------------


def test_start_position():
    start = GAME.start()
    assert start.fen() == START
    assert start.to_move is Color.WHITE and start.ply == 0
    assert sorted(start.legal_moves()) == sorted(POINTS)
    assert start.in_hand == (9, 9)
    assert start.pieces() == {} and start.scores() is None and start.outcome() is None


def test_moves_are_case_insensitive_and_canonical():
    start = GAME.start()
    assert start.parse_move(" D2 ") == "d2"
    after = start.play("D2")
    assert after.fen() == "3/3/3/6/3/1W1/3 b 8 9 0 1"
    assert after.pieces() == {"d2": Color.WHITE}


def test_spec_examples_of_position_strings():
    """specs/games/morris.md §9."""
    assert GAME.position(None, "d2 d6 a1 g7 g1".split()).fen() == "2B/1B1/3/6/3/1W1/W1W b 6 7 0 5"


@pytest.mark.parametrize("text", [
    START,
    "3/3/3/6/3/1W1/3 b 8 9 0 1",
    "2B/1B1/3/6/3/1W1/W1W b 6 7 0 5",
    MIDGAME,
    "WBW/BWB/WBW/BWBWBW/3/3/3 w 0 0 100 300",
])
def test_position_strings_round_trip(text):
    assert GAME.from_fen(text).fen() == text


@pytest.mark.parametrize("text, reason", [
    ("3/3/3/6/3/3/3 w 9 9 0", "expected 6 fields"),
    ("3/3/3/6/3/3 w 9 9 0 0", "7 ranks"),
    ("3/3/3/6/3/3/3/3 w 9 9 0 0", "7 ranks"),
    ("3/3/3/6/3/3/2X w 9 9 0 0", "unexpected 'X'"),
    ("3/3/3/6/3/3/12 w 9 9 0 0", "two digits in a row"),
    ("3/3/3/6/3/3/0W2 w 9 9 0 0", "0 is not a count"),
    ("3/3/3/6/3/3/4 w 9 9 0 0", "rank 1 has 3 points"),
    ("3/3/3/5/3/3/3 w 9 9 0 0", "rank 4 has 6 points"),
    ("3/3/3/6/3/3/WBWB w 9 9 0 0", "rank 1 has 3 points"),
    ("3/3/3/6/3/3/3 x 9 9 0 0", "side to move must be 'w' or 'b'"),
    ("3/3/3/6/3/3/3 w 10 9 0 0", "white in hand must be at most 9"),
    ("3/3/3/6/3/3/3 w 9 -1 0 0", "black in hand must be a non-negative integer"),
    ("3/3/3/6/3/3/3 w 9 9 0 x", "ply must be a non-negative integer"),
    ("WWW/3/3/6/3/3/3 w 7 9 0 3", "white has 3 on the board and 7 in hand: more than 9"),
    ("3/3/3/6/3/3/3 w 9 9 5 0", "must be 0 while pieces are in hand"),
    ("W2/B2/B2/6/3/3/3 w 0 0 101 9", "at most 100"),
    ("W2/B2/B2/6/3/3/3 w 0 0 3 9", "black, who moved last, has fewer than three"),
])
def test_invalid_position_strings_say_why(text, reason):
    with pytest.raises(InvalidFenError) as info:
        GAME.from_fen(text)
    assert reason in info.value.reason


def test_side_to_move_below_three_is_accepted_and_over():
    over = position("a1 d1 g1", "a7 d7", side="b")
    assert over.outcome().termination is Termination.FEWER_THAN_THREE
    assert over.outcome().result == "1-0" and over.legal_moves() == []


def test_diagram_shows_the_pieces_on_the_classic_board():
    lines = position("a1 d2 g7", "b6 e4", side="b", hands=(6, 7), ply=5).diagram().splitlines()
    assert lines[0] == "7  .-----------.-----------W"
    assert lines[2] == "6  |   B-------.-------.   |"
    assert lines[6] == "4  .---.---.       B---.---."
    assert lines[10] == "2  |   .-------W-------.   |"
    assert lines[12] == "1  W-----------.-----------."
    assert lines[13] == "   a   b   c   d   e   f   g"
    assert "black to move" in lines[14] and "white 6, black 7" in lines[14]
    over = position("a1 d1 g1", "a7 d7", side="b").diagram().splitlines()[-1]
    assert over.startswith("game over: 1-0 (fewer-than-three)")


# --- §3-§5 moves -----------------------------------------------------------------------


def test_double_mill_removes_one_piece():
    """specs/games/morris.md §4: d1 closes a1-d1-g1 and d1-d2-d3 at once."""
    pos = position("a1 g1 d2 d3", "b6 f6 c5", hands=(3, 4))
    with_d1 = sorted(m for m in pos.legal_moves() if m.startswith("d1"))
    assert with_d1 == ["d1xb6", "d1xc5", "d1xf6"]
    after = pos.play("d1xf6")
    assert after.pieces().keys() >= {"a1", "d1", "g1", "d2", "d3", "b6", "c5"}
    assert "f6" not in after.pieces()
    assert after.piece_count(Color.BLACK) == 6
    with pytest.raises(IllegalMoveError):
        pos.play("d1xb6xf6")


def test_pieces_in_mills_are_removed_only_when_all_are():
    """specs/games/morris.md §4."""
    some_free = position("a1 d1 g4 c4", "a7 d7 g7 f2", side="w")
    assert sorted(m for m in some_free.legal_moves() if "x" in m) == ["g4-g1xf2"]
    with pytest.raises(IllegalMoveError, match="stands in a mill"):
        some_free.play("g4-g1xa7")
    all_in_mills = position("a1 d1 g4 c4", "a7 d7 g7", side="w", hands=(0, 1))
    assert sorted(m for m in all_in_mills.legal_moves() if "x" in m) == [
        "g4-g1xa7", "g4-g1xd7", "g4-g1xg7"]


def test_no_removal_when_the_opponent_has_no_piece_on_the_board():
    """specs/games/morris.md §4: the mill closes, nothing is removed."""
    pos = position("a1 d1", "", hands=(7, 9), ply=4)
    assert "g1" in pos.legal_moves()
    assert not any("x" in m for m in pos.legal_moves())
    with pytest.raises(IllegalMoveError, match="black has no piece on the board"):
        pos.play("g1xa4")
    after = pos.play("g1")
    assert after.in_hand == (6, 9) and after.outcome() is None


def test_a_mill_must_remove_and_a_non_mill_may_not():
    pos = position("a1 d1", "b4 c4", side="w", hands=(7, 7), ply=4)
    with pytest.raises(IllegalMoveError, match="closes a mill: name the black piece"):
        pos.play("g1")
    with pytest.raises(IllegalMoveError, match="closes no mill"):
        pos.play("g4xb4")
    assert pos.play("g1xb4").pieces().get("b4") is None


def test_flying_with_exactly_three_pieces():
    """specs/games/morris.md §5."""
    three = position("a1 d6 e3", "b2 f2 g7 c4", side="w")
    moves = three.legal_moves()
    assert "a1-g1" in moves and "e3-a7" in moves
    empty = 24 - 7
    assert len(moves) == 3 * empty
    # With four pieces, only slides; with pieces in hand, only placements.
    four = position("a1 d6 e3 f4", "b2 f2 g7 c4", side="w")
    with pytest.raises(IllegalMoveError, match="not adjacent"):
        four.play("a1-g1")
    assert sorted(m for m in four.legal_moves() if m.startswith("a1")) == ["a1-a4", "a1-d1"]
    placing = position("a1 d6 e3", "b2 f2 g7 c4", side="w", hands=(1, 0))
    assert all("-" not in m for m in placing.legal_moves())


def test_flying_into_a_mill_removes():
    pos = position("a7 g7 e5", "c3 d3 e3 c4 c5 f4 d1", side="w", quiet=6, ply=58)
    assert sorted(m for m in pos.legal_moves() if "x" in m) == ["e5-d7xd1", "e5-d7xf4"]


MOVING = dict(white="a1 d1 g4 c4", black="a7 d7 g7 f2")


@pytest.mark.parametrize("setup, move, reason", [
    (dict(), "d2-d3", "still has 9 piece(s) in hand and must place one"),
    (dict(), "xx", "malformed"),
    (dict(), "d2x", "malformed"),
    (dict(), "d4", "d4 is not a point of the board"),
    (dict(), "h1", "h1 is not a point of the board"),
    (dict(white="d2", black="a1", hands=(8, 8)), "d2", "d2 is occupied (by a white piece)"),
    (dict(white="d2", black="a1", hands=(8, 8)), "a1", "a1 is occupied (by a black piece)"),
    (MOVING, "a7", "white has no pieces left in hand"),
    (MOVING, "a7-a4", "no white piece on a7 (it holds a black piece)"),
    (MOVING, "e4-e5", "no white piece on e4 (it holds nothing)"),
    (MOVING, "a1-a1", "another point"),
    (MOVING, "a1-d1", "d1 is occupied (by a white piece)"),
    (MOVING, "a1-g1", "a1 and g1 are not adjacent (white has 4 pieces"),
    (MOVING, "g4-g1", "the move closes a mill: name the black piece to remove, e.g. 'g4-g1xf2'"),
    (MOVING, "a1-a4xf2", "closes no mill"),
    (MOVING, "g4-g1xc4", "no black piece on c4 to remove (it holds a white piece)"),
    (MOVING, "g4-g1xe5", "no black piece on e5 to remove (it holds nothing)"),
    (MOVING, "g4-g1xa7", "stands in a mill"),
    (dict(white="a1 d1 g1", black="a7 d7", side="b"), "a7-a4", "the game is already over"),
])
def test_illegal_moves_say_why(setup, move, reason):
    pos = position(**setup) if setup else GAME.start()
    with pytest.raises(IllegalMoveError) as info:
        pos.play(move)
    assert reason in info.value.reason
    assert not pos.is_legal(move)


def test_parse_move_accepts_exactly_the_listed_moves():
    """Every spelling that names a point is judged the same by parse_move
    (with its reasons) and by the move generator."""
    candidates = list(POINTS) + [f"{p}-{q}" for p in POINTS for q in POINTS if p != q]
    candidates += [f"{m}x{r}" for m in candidates for r in POINTS]
    rng = random.Random(7)
    samples = [GAME.start(), GAME.from_fen(MIDGAME),
               position("a1 g1 d2 d3", "b6 f6 c5", hands=(3, 4)),
               position("a1 d1 b4 c4", "a7 d7 g7", hands=(0, 1))]
    game = GAME.start()
    while not game.is_over():
        if rng.random() < 0.05:
            samples.append(game)
        game = game.play(rng.choice(game.legal_moves()))
    for pos in samples[:8]:
        legal = set(pos.legal_moves())
        accepted = {c for c in candidates if pos.is_legal(c)}
        assert accepted == legal, pos.fen()


# --- §6-§7 endings -----------------------------------------------------------------


def test_fewer_than_three_after_a_removal():
    pos = position("a1 d1 g4 b6", "b4 c5 e5")
    end = pos.play("g4-g1xb4")
    assert end.outcome().termination is Termination.FEWER_THAN_THREE
    assert end.outcome().winner is Color.WHITE and end.outcome().result == "1-0"
    assert end.legal_moves() == []
    with pytest.raises(IllegalMoveError, match="already over"):
        end.play("c5-c4")


def test_fewer_than_three_counts_pieces_in_hand():
    """specs/games/morris.md §11.3: one on the board plus one in hand is two."""
    pos = position("a1 d1", "b4", hands=(5, 2), ply=8)
    end = pos.play("g1xb4")
    assert end.in_hand == (4, 2)
    assert end.outcome().termination is Termination.FEWER_THAN_THREE
    assert end.outcome().result == "1-0"


def test_black_wins_by_fewer_than_three_too():
    pos = position("b4 c5 e5", "a1 d1 g4 b6", side="b")
    assert pos.play("g4-g1xc5").outcome().result == "0-1"


BLOCKING = dict(white="a4 g4 b2 f2 e3", black="a1 d1 g1 d2")


def test_blocked_side_to_move_loses():
    end = position(**BLOCKING).play("e3-d3")
    assert end.outcome().termination is Termination.BLOCKED
    assert end.outcome().result == "1-0" and end.legal_moves() == []


def test_blocked_beats_the_100_ply_rule():
    """specs/games/morris.md §7: a loss beats a draw rule."""
    end = position(**BLOCKING, quiet=99).play("e3-d3")
    assert end.plies_without_removal == 100
    assert end.outcome().termination is Termination.BLOCKED


SHUFFLE = dict(white="a7 b2 c3 e3", black="g1 f4 e4 c4")
CYCLE = ["a7-d7", "g1-d1", "d7-a7", "d1-g1"]


def test_threefold_repetition_counts_the_start():
    """specs/games/morris.md §7: the position the game starts from is the first
    occurrence, so the draw comes on ply 8, its third occurrence."""
    pos = position(**SHUFFLE)
    assert pos.repetitions() == 1
    for ply, move in enumerate(CYCLE * 2, start=1):
        assert pos.outcome() is None, ply
        pos = pos.play(move)
    assert pos.repetitions() == 3
    assert pos.outcome().termination is Termination.REPETITION
    assert pos.outcome().result == "1/2-1/2"


def test_repetition_beats_the_100_ply_rule():
    pos = position(**SHUFFLE, quiet=92)
    for move in CYCLE * 2:
        pos = pos.play(move)
    assert pos.plies_without_removal == 100
    assert pos.outcome().termination is Termination.REPETITION


def test_100_plies_without_removal_draw():
    pos = position(**SHUFFLE, quiet=98)
    pos = pos.play("a7-d7")
    assert pos.outcome() is None and pos.plies_without_removal == 99
    pos = pos.play("g1-d1")
    assert pos.outcome().termination is Termination.NO_PROGRESS
    assert pos.outcome().result == "1/2-1/2"


def test_a_removal_resets_the_counter():
    pos = position("a1 d1 g4 b6", "b4 c5 e5 a7", quiet=99)
    after = pos.play("g4-g1xb4")
    assert after.plies_without_removal == 0 and after.outcome() is None


def test_the_counter_starts_when_both_hands_are_empty():
    """specs/games/morris.md §6: plies while anyone holds pieces do not count."""
    pos = position("a1 d1 b4 c4", "a7 d7 f2", side="b", hands=(0, 1), ply=17)
    pos = pos.play("e5")  # Black's last placement
    assert pos.plies_without_removal == 0 and pos.in_hand == (0, 0)
    pos = pos.play("b4-b2")
    assert pos.plies_without_removal == 1
    # White slides while Black still has a piece in hand: not counted.
    early = position("a1 d1 b4 c4", "a7 d7 f2", hands=(0, 1), ply=16).play("b4-b2")
    assert early.plies_without_removal == 0


@pytest.mark.parametrize("seed", range(4))
def test_from_the_start_the_counter_starts_at_ply_19(seed):
    rng = random.Random(seed)
    pos = GAME.start()
    for _ in range(19):
        assert pos.plies_without_removal == 0
        move = rng.choice(pos.legal_moves())
        pos = pos.play(move)
    assert pos.in_hand == (0, 0)
    assert pos.plies_without_removal == (0 if "x" in move else 1)


# --- §10 perft ------------------------------------------------------------------------


@pytest.mark.parametrize("text, counts", [
    (START, [24, 552, 12144, 255024]),
    (MIDGAME, [43, 433, 18637, 200981]),
])
def test_perft(text, counts):
    pos = GAME.from_fen(text)
    assert [perft(pos, depth) for depth in range(1, len(counts) + 1)] == counts


def test_midgame_perft_position_is_reached_from_the_start():
    assert GAME.position(None, MIDGAME_MOVES).fen() == MIDGAME


# --- properties over random games ------------------------------------------------------


def counts(pos) -> dict[Color, int]:
    return {color: pos.piece_count(color) for color in Color}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_piece_counts_never_increase_and_removals_follow_mills(seed):
    """Piece counts only fall, by one, on a move with 'x'; a move has 'x'
    exactly when it closes a mill (the opponent always has pieces on the board
    in games from the start, §4); placements empty the hands one by one."""
    rng = random.Random(seed)
    pos = GAME.start()
    while not pos.is_over():
        move = rng.choice(pos.legal_moves())
        mover, other = pos.to_move, pos.to_move.other
        after = pos.play(move)
        before_counts, after_counts = counts(pos), counts(after)
        assert after_counts[mover] == before_counts[mover]
        assert after_counts[other] == before_counts[other] - ("x" in move)
        target = move.split("x")[0].split("-")[-1]
        mine = {p for p, c in after.pieces().items() if c is mover}
        assert ("x" in move) == in_mill(mine, target), (pos.fen(), move)
        hand_before = pos.in_hand[mover is Color.BLACK]
        assert after.in_hand[mover is Color.BLACK] == hand_before - ("-" not in move)
        pos = after


# --- cross-check with OpenSpiel (specs/games/morris.md §12) ----------------------------

# OpenSpiel's point ids, row by row from the top.
OPENSPIEL_POINTS = ("a7 d7 g7 b6 d6 f6 c5 d5 e5 a4 b4 c4 e4 f4 g4 c3 d3 e3 b2 d2 f2 a1 d1 g1").split()


def openspiel_moves(state) -> dict[str, tuple[int, ...]]:
    """OpenSpiel's legal moves in our notation, with the action ids that make
    each (a mill move is followed by a capture action of the same player)."""
    names = OPENSPIEL_POINTS
    moves = {}
    player = state.current_player()
    for action in state.legal_actions():
        if action < 24:
            plain = names[action]
        else:
            src, dst = divmod(action - 24, 24)
            plain = f"{names[src]}-{names[dst]}"
        child = state.child(action)
        if not child.is_terminal() and child.current_player() == player:
            for capture in child.legal_actions():
                moves[f"{plain}x{names[capture]}"] = (action, capture)
        else:
            moves[plain] = (action,)
    return moves


def test_move_generation_agrees_with_openspiel():
    pyspiel = pytest.importorskip("pyspiel")
    game = pyspiel.load_game("nine_mens_morris")
    plies = endings = 0
    seed = 0
    while plies < 600:
        rng = random.Random(seed)
        seed += 1
        ours, theirs = GAME.start(), game.new_initial_state()
        while not ours.is_over() and not theirs.is_terminal():
            expected = openspiel_moves(theirs)
            assert sorted(ours.legal_moves()) == sorted(expected), (seed, ours.fen())
            move = rng.choice(ours.legal_moves())
            for action in expected[move]:
                theirs.apply_action(action)
            ours = ours.play(move)
            plies += 1
        outcome = ours.outcome()
        if outcome and outcome.termination in (Termination.FEWER_THAN_THREE, Termination.BLOCKED):
            # Both must agree on the end and the winner (OpenSpiel returns +1 for the winner).
            assert theirs.is_terminal()
            assert theirs.returns()[0 if outcome.winner is Color.WHITE else 1] == 1.0
            endings += 1
    assert endings > 0


def test_midgame_perft_agrees_with_openspiel():
    pyspiel = pytest.importorskip("pyspiel")
    state = pyspiel.load_game("nine_mens_morris").new_initial_state()
    for move in MIDGAME_MOVES:
        for action in openspiel_moves(state)[move]:
            state.apply_action(action)

    def openspiel_perft(state, depth):
        if depth == 0:
            return 1
        total = 0
        for actions in openspiel_moves(state).values():
            child = state
            for action in actions:
                child = child.child(action)
            if not child.is_terminal() or depth == 1:
                total += openspiel_perft(child, depth - 1)
        return total

    assert [openspiel_perft(state, d) for d in (1, 2, 3)] == [43, 433, 18637]


def test_an_engine_builds_the_move_tables_before_any_clock_runs():
    """The slide and flight tables are built on first use (importing the game
    costs nothing); an SDK engine of Morris builds them at start-up and when
    the game is chosen in its handshake, so no search pays for them
    (arbiter/games/base.py ``Game.prepare``)."""
    import subprocess
    import sys
    code = ("import arbiter.games.morris as m; from arbiter.sdk import Engine; "
            "assert m._SLIDES is None and m._FLY is None; Engine('troll'); "
            "assert m._SLIDES is None; e = Engine('troll'); e.select_game('morris'); "
            "assert m._SLIDES is not None and m._FLY is not None")
    subprocess.run([sys.executable, "-c", code], check=True)

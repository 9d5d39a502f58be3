"""Troll referee: the rules of specs/games/troll.md, section by section.

An independent brute-force referee (``Naive*`` below: a dict board, rules
written straight from the spec, no bitboards) cross-checks move generation,
flips, wins and perft.
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
    perft,
)
from arbiter.games.troll import GAME, TrollPosition

SEED_1993 = "8/8/5W2/1WB1WWBB/BWWWBBB1/1BBW4/3W4/3W4 b 19"
CHECKERBOARD = "/".join("BWBWBWBW" if r % 2 == 0 else "WBWBWBWB" for r in range(8))


# -- an independent referee, written from the spec ----------------------------

FILES = "abcdefgh"
DIRS = [(df, dr) for df in (-1, 0, 1) for dr in (-1, 0, 1) if (df, dr) != (0, 0)]


def naive_board(position: TrollPosition) -> dict[tuple[int, int], str]:
    """(file 0-7, rank 1-8) -> 'W'/'B' from pieces()."""
    return {(FILES.index(name[0]), int(name[1])): "W" if c is Color.WHITE else "B"
            for name, c in position.pieces().items()}


def naive_flips(board, f, r, me):
    them = "B" if me == "W" else "W"
    out = []
    for df, dr in DIRS:
        line = []
        x, y = f + df, r + dr
        while 0 <= x < 8 and 1 <= y <= 8 and board.get((x, y)) == them:
            line.append((x, y))
            x, y = x + df, y + dr
        if line and 0 <= x < 8 and 1 <= y <= 8 and board.get((x, y)) == me:
            out += line
    return out


def naive_restricted(f, r, me):
    """§3: corners and the opponent's edges need a flip."""
    corner = f in (0, 7) and r in (1, 8)
    opponent_edge = (f in (0, 7)) if me == "W" else (r in (1, 8))
    return corner or opponent_edge


def naive_drops(board, me):
    """{cell name: flipped cells} for every legal drop of ``me``."""
    out = {}
    for r in range(1, 9):
        for f in range(8):
            if (f, r) in board:
                continue
            flipped = naive_flips(board, f, r, me)
            if flipped or not naive_restricted(f, r, me):
                out[f"{FILES[f]}{r}"] = flipped
    return out


def naive_connected(board, me):
    """§5: an orthogonal chain of ``me`` from one of its edges to the other."""
    if me == "W":
        start = [(f, 1) for f in range(8) if board.get((f, 1)) == me]
        goal = lambda f, r: r == 8  # noqa: E731
    else:
        start = [(0, r) for r in range(1, 9) if board.get((0, r)) == me]
        goal = lambda f, r: f == 7  # noqa: E731
    seen, todo = set(start), list(start)
    while todo:
        f, r = todo.pop()
        if goal(f, r):
            return True
        for df, dr in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            n = (f + df, r + dr)
            if n not in seen and board.get(n) == me:
                seen.add(n)
                todo.append(n)
    return False


def naive_state(board, me):
    """(legal moves, outcome-ish) for a position not already won."""
    drops = naive_drops(board, me)
    if drops:
        return sorted(drops), None
    other = "B" if me == "W" else "W"
    if naive_drops(board, other):
        return ["pass"], None
    return [], "draw"


def naive_play(board, me, move):
    board = dict(board)
    if move != "pass":
        f, r = FILES.index(move[0]), int(move[1])
        for cell in naive_flips(board, f, r, me):
            board[cell] = me
        board[(f, r)] = me
    return board


def naive_perft(board, me, depth, won=False):
    if depth == 0:
        return 1
    if won:
        return 0
    moves, _ = naive_state(board, me)
    other = "B" if me == "W" else "W"
    total = 0
    for move in moves:
        after = naive_play(board, me, move)
        if depth == 1:
            total += 1
        else:
            total += naive_perft(after, other, depth - 1, naive_connected(after, me))
    return total


def changed_cells(before: TrollPosition, after: TrollPosition) -> set[str]:
    a, b = before.pieces(), after.pieces()
    return {cell for cell in b if a.get(cell) != b[cell]}


# -- §8 the 1993 example -------------------------------------------------------

def test_seed_example_1993():
    """specs/games/troll.md §8: the r.g.a example, X = Black, @ = White."""
    pos = GAME.from_fen(SEED_1993)
    assert pos.to_move is Color.BLACK
    for move in ("b2", "c2", "h2", "e1", "c7"):
        assert pos.is_legal(move), move
    assert changed_cells(pos, pos.play("e1")) == {"e1", "d2"}  # e1 is legal through a flip

    after = pos.play("d5")
    assert changed_cells(pos, after) == {"d5", "c4", "e5", "f5"}
    assert after.pieces()["d5"] is Color.BLACK
    assert after.outcome() is None
    assert after.to_move is Color.WHITE

    # "he is able to do a continuous path by playing a3, a5 or b6"
    again = GAME.from_fen(after.fen().replace(" w ", " b "))
    for move in ("a3", "a5", "b6"):
        won = again.play(move)
        outcome = won.outcome()
        assert outcome is not None and outcome.termination is Termination.CONNECTION
        assert outcome.winner is Color.BLACK and outcome.result == "0-1"
        assert won.legal_moves() == []

    # "White can defend by playing g6 for example"
    defended = after.play("g6")
    assert changed_cells(after, defended) == {"g6", "f5", "e4"}
    for move in ("a3", "a5", "b6"):
        assert defended.play(move).outcome() is None


def test_seed_diagram_orientation_matches_fen():
    pos = GAME.from_fen(SEED_1993)
    pieces = pos.pieces()
    assert pieces["d1"] is Color.WHITE and pieces["a4"] is Color.BLACK and pieces["h5"] is Color.BLACK
    assert len(pieces) == 19


# -- §1-§4 drops and flips -------------------------------------------------------

def test_start_position():
    pos = GAME.start()
    assert GAME.first is Color.WHITE and pos.to_move is Color.WHITE and pos.ply == 0
    legal = pos.legal_moves()
    # §3: 36 interior cells + White's own non-corner edge cells b1-g1, b8-g8
    assert len(legal) == 48
    assert not {"a1", "h1", "a8", "h8", "a4", "h5"} & set(legal)
    assert {"b1", "g8", "d4"} <= set(legal)
    assert pos.outcome() is None


def test_own_edge_always_legal_opponent_edge_needs_flip():
    """§3 for Black: own file a/h free, White's ranks and corners need a flip."""
    pos = GAME.from_fen("8/8/8/8/8/8/8/8 b 0")
    assert pos.is_legal("a4") and pos.is_legal("h7")
    with pytest.raises(IllegalMoveError, match="opponent's edge must flip at least one stone"):
        pos.play("d1")
    with pytest.raises(IllegalMoveError, match="corner h8 must flip at least one stone"):
        pos.play("h8")


def test_corner_drop_with_a_flip():
    """§3/§4: a corner opens when it brackets something (for either side)."""
    pos = GAME.from_fen("8/8/8/8/8/2W5/1B6/8 w")  # B b2, W c3, White to move
    assert "a1" in pos.legal_moves()
    assert changed_cells(pos, pos.play("a1")) == {"a1", "b2"}
    black = GAME.from_fen("8/8/8/8/8/8/8/1WB5 b")  # W b1, B c1
    assert "a1" in black.legal_moves()
    assert black.play("a1").pieces()["b1"] is Color.BLACK


def test_flips_every_bracketed_line_and_only_those():
    """§4: all bracketed directions flip at once; a line ending in an empty
    cell (d3, then d2 empty) does not."""
    fen = "8/8/1W1W1W2/2BBB3/1WB1BW2/2BBB3/1W3W2/8 w"
    pos = GAME.from_fen(fen)
    after = pos.play("d4")
    assert changed_cells(pos, after) == {"d4", "d5", "c5", "e5", "c4", "e4", "c3", "e3"}
    assert after.pieces()["d3"] is Color.BLACK


def test_flipping_is_mandatory_and_not_chained():
    """§4: b1 c1 flip; the flipped b1 would bracket b2 with b3, but flips do not chain."""
    pos = GAME.from_fen("8/8/8/8/8/1W6/1B6/1BBW4 w")
    after = pos.play("a1")
    assert changed_cells(pos, after) == {"a1", "b1", "c1"}
    assert after.pieces()["b2"] is Color.BLACK


# -- §5 connection ------------------------------------------------------------

def test_white_wins_by_column():
    pos = GAME.from_fen("3W4/3W4/3W4/8/3W4/3W4/3W4/3W4 w 7")
    won = pos.play("d5")
    assert won.outcome().termination is Termination.CONNECTION
    assert won.outcome().winner is Color.WHITE and won.outcome().result == "1-0"
    assert won.legal_moves() == []
    with pytest.raises(IllegalMoveError, match="the game is already over"):
        won.play("e5")


def test_corner_counts_for_white_along_file_a():
    """§2/§5: a1 and a8 are on White's ranks too; the corner drop a1 flips a2
    (bracketed by a3) and completes a1-a8."""
    pos = GAME.from_fen("W7/W7/W7/W7/W7/W7/B7/8 w")
    won = pos.play("a1")
    assert changed_cells(pos, won) == {"a1", "a2"}
    assert won.outcome().termination is Termination.CONNECTION
    assert won.outcome().winner is Color.WHITE


def test_corner_counts_for_black_along_rank_1():
    pos = GAME.from_fen("8/8/8/8/8/8/8/1WBBBBBB b")
    won = pos.play("a1")
    assert changed_cells(pos, won) == {"a1", "b1"}
    assert won.outcome().winner is Color.BLACK and won.outcome().result == "0-1"


def test_win_through_a_flipped_stone_not_the_dropped_one():
    """§5: the dropped stone b2 has no orthogonal friend; the diagonal flip of
    d4 (with c3) closes file d."""
    pos = GAME.from_fen("3W4/3W4/3W4/3WW3/3B4/2BW4/3W4/3W4 w")
    after = pos.play("b2")
    assert changed_cells(pos, after) == {"b2", "c3", "d4"}
    assert after.outcome().termination is Termination.CONNECTION
    assert after.outcome().winner is Color.WHITE


def test_diagonal_chain_is_not_a_connection():
    """§5: b1 c2 d3 e4 f5 g6 g7 g8 touches both ranks but only diagonally."""
    pos = GAME.from_fen("8/6W1/6W1/5W2/4W3/3W4/2W5/1W6 w")
    after = pos.play("g8")
    assert after.outcome() is None
    straight = GAME.from_fen("8/6W1/6W1/6W1/6W1/6W1/6W1/6W1 w")
    assert straight.play("g8").outcome().winner is Color.WHITE


# -- §6 pass and the draw ------------------------------------------------------

def test_full_board_without_connection_is_a_draw():
    pos = GAME.from_fen(f"{CHECKERBOARD} w 64")
    outcome = pos.outcome()
    assert outcome.termination is Termination.NO_MOVES
    assert outcome.winner is None and outcome.result == "1/2-1/2"
    assert pos.legal_moves() == []
    with pytest.raises(IllegalMoveError, match="already over"):
        pos.play("pass")


def test_forced_pass():
    """§6: White's only empty cell is a2 on Black's file, where White flips
    nothing; Black can drop there, so White must pass."""
    rows = CHECKERBOARD.split("/")
    rows[6] = "1" + rows[6][1:]  # rank 2 (7th row from the top): empty a2
    pos = GAME.from_fen(" ".join(["/".join(rows), "w", "63"]))
    assert pos.legal_moves() == ["pass"]
    assert pos.outcome() is None
    with pytest.raises(IllegalMoveError, match="opponent's edge must flip.*must play 'pass'"):
        pos.play("a2")
    after = pos.play("pass")
    assert after.to_move is Color.BLACK and after.ply == 64
    assert after.pieces() == pos.pieces()
    assert after.legal_moves() == ["a2"]
    final = after.play("a2")
    assert changed_cells(after, final) == {"a2", "a3", "b2"}
    assert final.outcome().termination is Termination.NO_MOVES


def test_pass_refused_while_a_drop_exists():
    with pytest.raises(IllegalMoveError, match=r"pass is only legal when no drop is \(white has 48 legal drops\)"):
        GAME.start().play("pass")


# -- illegal move reasons --------------------------------------------------------

@pytest.mark.parametrize("text", ["z9", "d9", "i1", "", "d", "d 5", "pas", "a0", "d55"])
def test_malformed_moves(text):
    with pytest.raises(IllegalMoveError) as info:
        GAME.start().play(text)
    assert info.value.reason.startswith(f"malformed move {text!r}")


def test_occupied_and_spellings():
    pos = GAME.start().play("d5")
    with pytest.raises(IllegalMoveError, match="cell d5 is occupied"):
        pos.play("d5")
    assert pos.parse_move(" E4 ") == "e4"
    assert GAME.start().play(" D5") == GAME.start().play("d5")


# -- §7 position strings ----------------------------------------------------------

def test_fen_examples_from_the_spec():
    assert GAME.start().fen() == "8/8/8/8/8/8/8/8 w 0"
    assert GAME.start().play("d4").play("e5").fen() == "8/8/8/4B3/3W4/8/8/8 w 2"
    assert GAME.from_fen(SEED_1993).fen() == SEED_1993
    assert GAME.from_fen("8/8/8/4B3/3W4/8/8/8 w").ply == 2  # ply defaults to the stones


def test_fen_of_a_finished_game_round_trips():
    won = GAME.from_fen("3W4/3W4/3W4/8/3W4/3W4/3W4/3W4 w 7").play("d5")
    again = GAME.from_fen(won.fen())
    assert again.outcome() == won.outcome() and again.fen() == won.fen()


@pytest.mark.parametrize("fen, reason", [
    ("8/8/8/8/8/8/8/8", "expected 2 or 3 fields"),
    ("8/8/8/8/8/8/8/8 w 0 1", "expected 2 or 3 fields"),
    ("8/8/8/8/8/8/8 w", "8 ranks"),
    ("8/8/8/8/8/8/8/8/8 w", "8 ranks"),
    ("8/8/8/8/8/8/8/7X w", "bad character 'X' in rank 1"),
    ("8/8/8/8/8/8/8/9 w", "bad character '9' in rank 1"),
    ("8/8/8/8/8/8/8/0 w", "bad character '0' in rank 1"),
    ("8/8/8/8/8/8/8/7 w", "rank 1 ('7') describes 7 cells instead of 8"),
    ("8/8/8/8/8/8/8/8W w", "describes 9 cells"),
    ("8/8/8/8/WWWWWWWWW/8/8/8 w", "rank 4"),
    ("8/8/8/8/8/8/8/8 x", "side to move must be 'w' or 'b'"),
    ("8/8/8/8/8/8/8/8 W", "side to move must be 'w' or 'b'"),
    ("8/8/8/8/8/8/8/8 w -1", "ply must be a non-negative integer"),
    ("8/8/8/8/8/8/8/8 w x", "ply must be a non-negative integer"),
    ("8/8/8/8/8/8/8/WB6 w 1", "ply 1 is less than the 2 stones"),
    ("3W4/3W4/3W4/3W4/3W4/3W4/3W4/3W4 w", "side to move (white) already connects"),
    ("3W4/3W4/3W4/3W4/3W4/3W4/3W4/3W4 w 8", "side to move (white) already connects"),
    ("", "expected 2 or 3 fields"),
])
def test_fen_errors(fen, reason):
    with pytest.raises(InvalidFenError) as info:
        GAME.from_fen(fen)
    assert reason in info.value.reason


def test_fen_with_the_last_mover_connected_is_terminal():
    pos = GAME.from_fen("3W4/3W4/3W4/3W4/3W4/3W4/3W4/3W4 b 15")
    assert pos.outcome().winner is Color.WHITE
    assert pos.legal_moves() == []


def test_pieces_and_diagram():
    pos = GAME.from_fen(SEED_1993)
    text = pos.diagram()
    lines = text.splitlines()
    assert lines[0].split() == list("abcdefgh")
    assert lines[4].split() == ["5", ".", "W", "B", ".", "W", "W", "B", "B", "5"]
    assert lines[8].split() == ["1", ".", ".", ".", "W", ".", ".", ".", ".", "1"]
    assert "black to move" in text


def test_registry_and_description():
    game = get_game("troll")
    assert game is GAME and game.name == "troll" and "\n" not in game.description
    assert type(GAME.start()).game is GAME


# -- §9 perft -----------------------------------------------------------------

def test_perft_start_by_hand():
    """§9: 48 = 36 interior + 12 own edge; 2268 = 36 x 47 + 12 x 48."""
    assert perft(GAME.start(), 1) == 48
    assert perft(GAME.start(), 2) == 36 * 47 + 12 * 48 == 2268


def test_perft_start_depth3_against_naive():
    assert perft(GAME.start(), 3) == naive_perft({}, "W", 3) == 104940


def test_perft_seed_position_against_naive():
    pos = GAME.from_fen(SEED_1993)
    board = naive_board(pos)
    values = [perft(pos, d) for d in (1, 2, 3)]
    assert values == [naive_perft(board, "B", d) for d in (1, 2, 3)]
    assert values == [31, 1064, 31368]


# -- properties over random games ---------------------------------------------------

def random_game(seed: int, stop: int | None = None):
    rng = random.Random(seed)
    positions = [GAME.start()]
    while positions[-1].legal_moves() and (stop is None or len(positions) <= stop):
        pos = positions[-1]
        positions.append(pos.play(rng.choice(pos.legal_moves())))
    return positions


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_random_games_agree_with_naive_referee(seed):
    """Legal moves, flips and endings equal the brute-force referee's."""
    positions = random_game(seed)
    for before, after in zip(positions, positions[1:], strict=False):
        me = "W" if before.to_move is Color.WHITE else "B"
        board = naive_board(before)
        moves, _ = naive_state(board, me)
        assert sorted(before.legal_moves()) == moves
        move = next(m for m in moves if before.play(m) == after)
        expected = naive_play(board, me, move)
        assert naive_board(after) == expected
        connected = naive_connected(expected, me)
        outcome = after.outcome()
        if connected:
            assert outcome.termination is Termination.CONNECTION and outcome.winner is before.to_move
        else:
            other = "B" if me == "W" else "W"
            assert not naive_connected(expected, other)
            _, draw = naive_state(expected, other)
            assert (outcome is not None) == (draw == "draw")
    assert positions[-1].outcome() is not None


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32))
def test_flipping_never_reduces_the_mover(seed):
    """§4/§5: a drop adds 1 + flips to the mover and takes flips from the
    opponent; a pass changes nothing; only the mover can win."""
    positions = random_game(seed)
    for before, after in zip(positions, positions[1:], strict=False):
        mine = [before.white, before.black][before.to_move is Color.BLACK]
        theirs = [before.white, before.black][before.to_move is Color.WHITE]
        mine2 = [after.white, after.black][before.to_move is Color.BLACK]
        theirs2 = [after.white, after.black][before.to_move is Color.WHITE]
        total = (before.white | before.black).bit_count()
        total2 = (after.white | after.black).bit_count()
        assert mine2 & mine == mine                 # the mover loses nothing
        assert theirs2 & ~theirs == 0               # the opponent gains nothing
        gained = mine2.bit_count() - mine.bit_count()
        lost = theirs.bit_count() - theirs2.bit_count()
        if after.pieces() == before.pieces():
            assert before.legal_moves() == ["pass"] and total2 == total
        else:
            assert gained == lost + 1 and total2 == total + 1
        assert after.ply == before.ply + 1 and after.to_move is before.to_move.other
        if after.outcome() and after.outcome().winner is not None:
            assert after.outcome().winner is before.to_move

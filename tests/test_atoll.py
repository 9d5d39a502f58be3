"""Atoll referee: the rules of specs/games/atoll.md, section by section.

``naive_*`` below is an independent brute-force referee written from the
spec's words (coordinates and a BFS, no bitmasks, no groups); it cross-checks
the geometry, the wins and perft.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbiter.games import (
    Color,
    IllegalMoveError,
    InvalidFenError,
    Termination,
    get_game,
    perft,
)
from arbiter.games.atoll import GAME, AtollPosition

START = "BBBBWWWW/W9B/W10B/W9B/W10B/W9B/10/B9W/B10W/B9W/B10W/B9W/WWWWBBBB b 0"
# §7: Black wins with f2 or g3 (f3..f10 + g2 black; j2..j10 white).
THREAT = "BBBBWWWW/W9B/W10B/W9B/W10B/W1BBBBBBBBB/B9/B9W/B10W/BWWWWWWWWWW/B10W/B9W/WWWWBBBB b 18"
# THREAT after f2: Black has just connected North to South.
WON_BY_BLACK = THREAT.replace("W1BBBBBBBBB", "WBBBBBBBBBB").replace(" b 18", " w 19")
LATE = ("BBBBWWWW/W2BBWB1WWB/W1WWW1W1WBBB/WWBB1BBBWBB/WWB1WW1BW1WB/W2W3BB1B/WWWBW1B1BW/"
        "BBW1BBWBWBW/BBWWBWWBBWBW/BBWBBWWBB1W/B1B3BBBWWW/BWBW1WB1WWW/WWWWBBBB b 78")

# -- an independent referee, from the spec text --------------------------------

COLS = "abcdefghijklm"
N_ROWS = {"a": (3, 10), "m": (3, 10), "g": (2, 11)}
N_ROWS.update({c: (1, 12) for c in "ceik"})
N_ROWS.update({c: (1, 11) for c in "bdfhjl"})
N_CELLS = {(c, r) for c in COLS for r in range(N_ROWS[c][0], N_ROWS[c][1] + 1)}
N_ISLANDS = {
    ("B", "N"): ["b11", "c12", "d11", "e12", "f11"], ("B", "S"): ["h1", "i1", "j1", "k1", "l1"],
    ("B", "E"): ["m7", "m8", "m9", "m10"], ("B", "W"): ["a3", "a4", "a5", "a6"],
    ("W", "N"): ["h11", "i12", "j11", "k12", "l11"], ("W", "S"): ["b1", "c1", "d1", "e1", "f1"],
    ("W", "E"): ["m3", "m4", "m5", "m6"], ("W", "W"): ["a7", "a8", "a9", "a10"],
}


def cell(name):
    return name[0], int(name[1:])


def naive_neighbours(c, r):
    """§1 word for word."""
    out = [(c, r - 1), (c, r + 1)]
    i = COLS.index(c)
    rows = (r - 1, r) if c in "acegikm" else (r, r + 1)
    for j in (i - 1, i + 1):
        if 0 <= j < 13:
            out += [(COLS[j], rows[0]), (COLS[j], rows[1])]
    return [x for x in out if x in N_CELLS]


def naive_board(position: AtollPosition):
    return {cell(n): "W" if c is Color.WHITE else "B" for n, c in position.pieces().items()}


def naive_connected(board, me):
    """§5: BFS from one island of each pair over ``me``'s cells."""
    for a, b in (("N", "S"), ("E", "W")):
        start = [cell(n) for n in N_ISLANDS[me, a]]
        goal = {cell(n) for n in N_ISLANDS[me, b]}
        seen, todo = set(start), list(start)
        while todo:
            x = todo.pop()
            if x in goal:
                return True
            for y in naive_neighbours(*x):
                if y not in seen and board.get(y) == me:
                    seen.add(y)
                    todo.append(y)
    return False


def naive_moves(board, ply):
    island = {cell(n) for names in N_ISLANDS.values() for n in names}
    moves = sorted(f"{c}{r}" for (c, r) in N_CELLS if (c, r) not in island and (c, r) not in board)
    return moves + (["swap"] if ply == 1 else [])


def naive_perft(board, me, ply, depth):
    if depth == 0:
        return 1
    total = 0
    other = "W" if me == "B" else "B"
    for move in naive_moves(board, ply):
        if depth == 1:
            total += 1
            continue
        after = dict(board)
        if move == "swap":
            (stone,) = [x for x, v in board.items() if v == "B" and x not in
                        {cell(n) for n in N_ISLANDS["B", "N"] + N_ISLANDS["B", "S"]
                         + N_ISLANDS["B", "E"] + N_ISLANDS["B", "W"]}]
            del after[stone]
            after[(COLS[12 - COLS.index(stone[0])], stone[1])] = "W"
            total += naive_perft(after, "B", ply + 1, depth - 1)
            continue
        after[cell(move)] = me
        if not naive_connected(after, me):
            total += naive_perft(after, other, ply + 1, depth - 1)
    return total


# -- §1-§2 geometry --------------------------------------------------------------

def test_geometry_matches_the_spec():
    pos = GAME.start()
    assert len(N_CELLS) == 140
    assert len(pos.legal_moves()) == 104
    islands = {n for names in N_ISLANDS.values() for n in names}
    assert len(islands) == 36
    pieces = pos.pieces()
    assert set(pieces) == islands
    for (side, _), names in N_ISLANDS.items():
        for n in names:
            assert pieces[n] is (Color.BLACK if side == "B" else Color.WHITE)


def test_neighbours_against_the_words_of_the_spec():
    from arbiter.games.atoll import CELLS, INDEX, NEIGHBOURS
    assert set(CELLS) == {f"{c}{r}" for c, r in N_CELLS}
    for name in CELLS:
        mine = {CELLS[j] for j in range(len(CELLS)) if NEIGHBOURS[INDEX[name]] >> j & 1}
        assert mine == {f"{c}{r}" for c, r in naive_neighbours(*cell(name))}, name
    examples = {"e5": "d4 d5 e4 e6 f4 f5", "f5": "e5 e6 f4 f6 g5 g6", "a3": "a4 b2 b3",
                "c12": "b11 c11 d11"}
    for name, expected in examples.items():
        assert {f"{c}{r}" for c, r in naive_neighbours(*cell(name))} == set(expected.split())


# -- §3-§4 placement and swap -------------------------------------------------------

def test_start_position():
    pos = GAME.start()
    assert GAME.first is Color.BLACK and pos.to_move is Color.BLACK and pos.ply == 0
    assert pos.fen() == START and pos.outcome() is None
    assert "swap" not in pos.legal_moves()


def test_swap_replaces_the_stone_by_its_mirror():
    """§4: e5 swap -> a white stone on i5, Black to move, ply 2."""
    first = GAME.start().play("e5")
    assert first.to_move is Color.WHITE and first.legal_moves()[-1] == "swap"
    assert len(first.legal_moves()) == 104  # 103 cells + swap
    swapped = first.play("swap")
    assert swapped.to_move is Color.BLACK and swapped.ply == 2
    placed = {n: c for n, c in swapped.pieces().items() if n not in GAME.start().pieces()}
    assert placed == {"i5": Color.WHITE}
    assert swapped.legal_moves() == [m for m in GAME.start().legal_moves() if m != "i5"]


def test_swap_on_column_g_keeps_the_cell():
    swapped = GAME.start().play("g7").play("swap")
    assert swapped.pieces()["g7"] is Color.WHITE


def test_swap_is_a_colour_exchange():
    """§4: mirroring maps each island onto an island of the other colour
    (North to North, South to South, East to West), so opposite pairs map to
    opposite pairs."""
    from arbiter.games.atoll import MIRROR
    image = {"N": "N", "S": "S", "E": "W", "W": "E"}
    for (side, part), names in N_ISLANDS.items():
        other = "W" if side == "B" else "B"
        assert {MIRROR[n] for n in names} == set(N_ISLANDS[other, image[part]])


@pytest.mark.parametrize("moves, ply", [((), 1), (("e5", "f5"), 3), (("e5", "swap"), 3),
                                        (("e5", "f5", "g5"), 4)])
def test_swap_only_on_ply_2(moves, ply):
    pos = GAME.position(None, moves)
    with pytest.raises(IllegalMoveError) as info:
        pos.play("swap")
    assert info.value.reason == (
        f"swap is only allowed on ply 2 (White's first move); this would be ply {ply}")


def test_swap_from_position_strings():
    """§7: the ply decides; a string past ply 2 never allows a swap."""
    at_ply_1 = GAME.from_fen("BBBBWWWW/W9B/W10B/W9B/W3B6B/W9B/10/B9W/B10W/B9W/B10W/B9W/WWWWBBBB w")
    assert at_ply_1.ply == 1 and "swap" in at_ply_1.legal_moves()
    after_swap = GAME.from_fen("BBBBWWWW/W9B/W10B/W9B/W10B/W9B/10/B9W/B3W6W/B9W/B10W/B9W/WWWWBBBB b")
    assert after_swap.ply == 2 and not after_swap.is_legal("swap")
    later = GAME.from_fen(THREAT)
    assert not later.is_legal("swap")


# -- §5 connection ----------------------------------------------------------------

def test_black_wins_north_south():
    pos = GAME.from_fen(THREAT)
    assert sorted(m for m in pos.legal_moves() if pos.play(m).outcome()) == ["f2", "g3"]
    won = pos.play("f2")
    outcome = won.outcome()
    assert outcome.termination is Termination.CONNECTION
    assert outcome.winner is Color.BLACK and outcome.result == "0-1"
    assert won.legal_moves() == []
    with pytest.raises(IllegalMoveError, match="the game is already over"):
        won.play("b5")


def naive_component(board, start):
    """The cells connected to ``start`` through cells of its colour."""
    me = board[start]
    seen, todo = {start}, [start]
    while todo:
        for y in naive_neighbours(*todo.pop()):
            if y not in seen and board.get(y) == me:
                seen.add(y)
                todo.append(y)
    return seen


def test_white_wins_east_west_through_islands():
    """§5: a7 (White West) - b7 c7 ... k7 - l6 - m6 (White East); the island
    stones are part of the chain.  Black fills row 3 meanwhile, which links
    nothing of his."""
    path = ["b7", "c7", "d7", "e7", "f7", "g7", "h7", "i7", "j7", "k7", "l6"]
    blacks = ["b3", "c3", "d3", "e3", "f3", "g3", "h3", "i3", "j3", "k3", "l3"]
    pos = GAME.start()
    for black, white in zip(blacks[:-1], path[:-1], strict=False):
        pos = pos.play(black).play(white)
    pos = pos.play(blacks[-1])
    assert pos.outcome() is None
    won = pos.play(path[-1])
    assert won.outcome().termination is Termination.CONNECTION
    assert won.outcome().winner is Color.WHITE and won.outcome().result == "1-0"
    chain = naive_component(naive_board(won), cell("l6"))
    assert cell("a7") in chain and cell("m6") in chain


def test_non_opposite_islands_do_not_win():
    """§5: Black links West (a3) to South (h1) via b3 c3 d2 e2 f2 g2: no pair."""
    pos = GAME.start()
    whites = iter(["c9", "d9", "e9", "f9", "g9", "h9", "i9", "j9"])
    for n in ["b3", "c3", "d2", "e2", "f2", "g2"]:
        pos = pos.play(n)
        assert pos.outcome() is None
        pos = pos.play(next(whites))
    chain = naive_component(naive_board(pos), cell("a3"))
    assert cell("h1") in chain  # West and South really are linked
    assert pos.outcome() is None and pos.legal_moves()


def test_full_boards_always_have_exactly_one_winner():
    """§6: the no-draw property on random full boards (300k checked by hand)."""
    from arbiter.games.atoll import PLAYABLE_CELLS
    rng = random.Random(2008)
    base = naive_board(GAME.start())
    for _ in range(150):
        p = rng.random()
        board = dict(base)
        for n in PLAYABLE_CELLS:
            board[cell(n)] = "W" if rng.random() < p else "B"
        assert naive_connected(board, "W") != naive_connected(board, "B")


# -- illegal move reasons ---------------------------------------------------------

@pytest.mark.parametrize("text", ["z9", "n3", "e", "e5x", "", "5e", "swapp", "e123"])
def test_malformed_moves(text):
    with pytest.raises(IllegalMoveError) as info:
        GAME.start().play(text)
    assert info.value.reason.startswith(f"malformed move {text!r}")


@pytest.mark.parametrize("text, reason", [
    ("a1", "there is no cell a1: column a has rows 3-10"),
    ("g12", "there is no cell g12: column g has rows 2-11"),
    ("e13", "there is no cell e13: column e has rows 1-12"),
    ("a3", "cell a3 is part of black's west island"),
    ("k12", "cell k12 is part of white's north island"),
    ("e5", "cell e5 is occupied"),
])
def test_illegal_cells(text, reason):
    pos = GAME.start().play("e5").play("f5")
    with pytest.raises(IllegalMoveError) as info:
        pos.play(text)
    assert info.value.reason == reason


def test_spellings():
    assert GAME.start().parse_move(" E5 ") == "e5"
    assert GAME.start().play("E5") == GAME.start().play("e5")
    assert GAME.start().play("e5").parse_move("SWAP") == "swap"


# -- §7 position strings ----------------------------------------------------------

def test_fen_examples_from_the_spec():
    assert GAME.start().play("e5").fen() == (
        "BBBBWWWW/W9B/W10B/W9B/W3B6B/W9B/10/B9W/B10W/B9W/B10W/B9W/WWWWBBBB w 1")
    assert GAME.start().play("e5").play("swap").fen() == (
        "BBBBWWWW/W9B/W10B/W9B/W10B/W9B/10/B9W/B3W6W/B9W/B10W/B9W/WWWWBBBB b 2")
    for fen in (START, THREAT, LATE):
        assert GAME.from_fen(fen).fen() == fen
        assert GAME.from_fen(fen.rsplit(" ", 1)[0]).fen() == fen  # ply derived


def test_finished_game_round_trips():
    won = GAME.from_fen(THREAT).play("g3")
    again = GAME.from_fen(won.fen())
    assert again.outcome() == won.outcome() and again.legal_moves() == []


@pytest.mark.parametrize("fen, reason", [
    ("BBBBWWWW/W9B/W10B/W9B/W10B/W9B/10/B9W/B10W/B9W/B10W/B9W/WWWWBBBB", "expected 2 or 3 fields"),
    ("BBBBWWWW/W9B/W10B/W9B/W10B/W9B/10/B9W/B10W/B9W/B10W/B9W b 0", "13 columns a-m"),
    ("BBBBWWWW/W9B/W10B/W9B/W10B/W9B/10/B9W/B10W/B9W/B10W/B9W/WWWWBBBB/ b 0", "13 columns a-m"),
    ("BBBBWWWW/W9B/W10B/W9B/W10B/W9B/10/B9W/B10W/B9W/B10W/B9W/WWWWBBBX b 0",
     "bad character 'X' in column m"),
    ("BBBBWWWW/W9B/W10B/W9B/W10B/W9B/010/B9W/B10W/B9W/B10W/B9W/WWWWBBBB b 0",
     "bad run length '010' in column g"),
    ("BBBBWWWW/W9B/W10B/W9B/W10B/W9B/11/B9W/B10W/B9W/B10W/B9W/WWWWBBBB b 0",
     "column g ('11') describes 11 cells; it has 10 (rows 2-11)"),
    ("BBBBWWWW/W9B/W9B/W9B/W10B/W9B/10/B9W/B10W/B9W/B10W/B9W/WWWWBBBB b 0",
     "column c ('W9B') describes 11 cells; it has 12 (rows 1-12)"),
    ("BBBWWWWW/W9B/W10B/W9B/W10B/W9B/10/B9W/B10W/B9W/B10W/B9W/WWWWBBBB b 0",
     "cell a6 is on black's west island and must hold 'B'"),
    ("BBBBWWWW/10B/W10B/W9B/W10B/W9B/10/B9W/B10W/B9W/B10W/B9W/WWWWBBBB b 0",
     "cell b1 is on white's south island and must hold 'W'"),
    ("BBBBWWWW/W9B/W10B/W9B/W10B/W9B/10/B9W/B10W/B9W/B10W/B9W/WWWWBBBB x 0",
     "side to move must be 'b' or 'w'"),
    ("BBBBWWWW/W9B/W10B/W9B/W10B/W9B/10/B9W/B10W/B9W/B10W/B9W/WWWWBBBB b one",
     "ply must be a non-negative integer"),
    ("BBBBWWWW/W9B/W10B/W9B/W10B/W9B/10/B9W/B10W/B9W/B10W/B9W/WWWWBBBB b 2",
     "ply 2 does not match the board: 0 white stones with black to move is ply 0"),
    ("BBBBWWWW/W9B/W10B/W9B/W10B/W9B/10/B9W/B10W/B9W/B10W/B9W/WWWWBBBB w",
     "0 black and 0 white stones cannot occur with white to move"),
    ("BBBBWWWW/WB8B/W10B/W9B/W10B/W9B/10/B9W/B10W/B9W/B10W/B9W/WWWWBBBB b",
     "1 black and 0 white stones cannot occur with black to move"),
    ("BBBBWWWW/WBB7B/W10B/W9B/W10B/W9B/10/B9W/B10W/B9W/B10W/B9W/WWWWBBBB w",
     "2 black and 0 white stones cannot occur"),
    ("BBBBWWWW/W9B/W10B/W9B/W10B/W9B/10/B9W/B10W/B9W/B10W/B1W7W/WWWWBBBB w",
     "0 black and 1 white stones cannot occur with white to move"),
    (WON_BY_BLACK.replace("/B9W/WWWW", "/B3W5W/WWWW").replace(" w 19", " b 20"),
     "side to move (black) already connects"),
])
def test_fen_errors(fen, reason):
    with pytest.raises(InvalidFenError) as info:
        GAME.from_fen(fen)
    assert reason in info.value.reason, info.value.reason


def test_fen_with_the_last_mover_connected_is_terminal():
    pos = GAME.from_fen(WON_BY_BLACK)
    assert pos.outcome().termination is Termination.CONNECTION
    assert pos.outcome().winner is Color.BLACK and pos.legal_moves() == []
    assert pos == GAME.from_fen(THREAT).play("f2")


def test_diagram_staggers_the_columns():
    lines = GAME.start().diagram().splitlines()
    assert lines[0].split() == list(COLS)
    # row 12 of the low columns c, e, i, k is on the first board line, with
    # the high columns' row 11 one line lower (half a cell)
    assert lines[1].split() == ["12", "b", "b", "w", "w"]
    assert lines[2].split() == ["b", "b", "b", "w", "w", "w", "11"]
    assert "black to move" in GAME.start().diagram()


def test_registry_and_description():
    game = get_game("atoll")
    assert game is GAME and game.name == "atoll" and "\n" not in game.description
    assert type(GAME.start()).game is GAME


# -- §8 perft -----------------------------------------------------------------

def test_perft_start_closed_form():
    """§8: 104; 104 x (103 + swap); 104 x (103 x 102 + 103 after a swap)."""
    start = GAME.start()
    assert [perft(start, d) for d in (1, 2, 3)] == [104, 104 * 104, 104 * 103 * 103]
    assert naive_perft(naive_board(start), "B", 0, 2) == 104 * 104


@pytest.mark.parametrize("fen, values", [(THREAT, [86, 7140]), (LATE, [26, 625, 15000])])
def test_perft_against_naive(fen, values):
    pos = GAME.from_fen(fen)
    me = "B" if pos.to_move is Color.BLACK else "W"
    assert [perft(pos, d) for d in range(1, len(values) + 1)] == values
    assert [naive_perft(naive_board(pos), me, pos.ply, d) for d in range(1, len(values) + 1)] == values


def test_perft_threat_depth3():
    assert perft(GAME.from_fen(THREAT), 3) == 599760


# -- properties over random games ---------------------------------------------------

def random_game(seed: int):
    rng = random.Random(seed)
    positions = [GAME.start()]
    while positions[-1].legal_moves():
        pos = positions[-1]
        positions.append(pos.play(rng.choice(pos.legal_moves())))
    return positions


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32))
def test_stones_only_increase_and_islands_never_change(seed):
    """§3-§5: one stone per ply (the swap keeps the count), islands fixed,
    the winner is the mover, and the game ends by connection."""
    positions = random_game(seed)
    islands = GAME.start().pieces()
    for before, after in zip(positions, positions[1:], strict=False):
        a, b = before.pieces(), after.pieces()
        assert {n: b[n] for n in islands} == islands
        if before.ply == 1 and len(b) == len(a):  # the swap
            assert after.ply == 2 and after.to_move is Color.BLACK
            assert Color.BLACK not in {c for n, c in b.items() if n not in islands}
        else:
            assert len(b) == len(a) + 1
            assert all(b[n] is c for n, c in a.items())
            (new,) = set(b) - set(a)
            assert b[new] is before.to_move
        if after.outcome() is not None:
            assert after.outcome().winner is before.to_move
    final = positions[-1].outcome()
    assert final.termination is Termination.CONNECTION


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32))
def test_random_games_agree_with_naive_referee(seed):
    positions = random_game(seed)
    for pos in positions:
        board = naive_board(pos)
        assert sorted(pos.legal_moves()) == (sorted(naive_moves(board, pos.ply)) if pos.outcome() is None else [])
        just_moved = "W" if pos.to_move is Color.BLACK else "B"
        assert (pos.outcome() is not None) == naive_connected(board, just_moved)
        assert not naive_connected(board, "B" if just_moved == "W" else "W")

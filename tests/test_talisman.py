"""Talisman rule by rule (specs/games/talisman.md; § numbers refer to it).

Positions are built with :func:`fen` from piece letters, so each test shows
its board.  The geometry below is copied from the spec's tables, not from the
module, so that the module's derivation from the 15 lines is checked against
an independent list; :func:`reference_moves` is a deliberately naive move
generator (dicts of letters, walking the lines) that the bitboard generator
must agree with over random games.
"""

from __future__ import annotations

import random
from pathlib import Path

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
    perft_divide,
    talisman,
)

GAME = get_game("talisman")
SPEC = Path(__file__).resolve().parents[1] / "specs" / "games" / "talisman.md"

# -- the geometry as the spec lists it (§2) ----------------------------------
ROWS = ("ABC", "DEFG", "HIJKL", "MNOP", "QRS")
LINES = ("ABC DEFG HIJKL MNOP QRS ADH BEIM CFJNQ GKOR LPS CGL BFKP AEJOS DINR HMQ").split()
EDGE = "ABCDGHLMPQRS"
BANDS = (
    ("ADE", "ABE", "BEF", "BCF", "CFG"),
    ("DHI", "DEI", "EIJ", "EFJ", "FJK", "FGK", "GKL"),
    ("HIM", "IMN", "IJN", "JNO", "JKO", "KOP", "KLP"),
    ("MNQ", "NQR", "NOR", "ORS", "OPS"),
)
UNITS = tuple(t for band in BANDS for t in band)
BIGS = {
    "ACJ": {"ABE", "BCF", "BEF", "EFJ"}, "AHJ": {"ADE", "DHI", "DEI", "EIJ"},
    "BIK": {"BEF", "EIJ", "EFJ", "FJK"}, "CJL": {"CFG", "FJK", "FGK", "GKL"},
    "DFN": {"DEI", "EIJ", "EFJ", "IJN"}, "EGO": {"EFJ", "FJK", "FGK", "JKO"},
    "EMO": {"EIJ", "IMN", "IJN", "JNO"}, "FNP": {"FJK", "JNO", "JKO", "KOP"},
    "HJQ": {"HIM", "IMN", "IJN", "MNQ"}, "IKR": {"IJN", "JNO", "JKO", "NOR"},
    "JLS": {"JKO", "KOP", "KLP", "OPS"}, "JQS": {"JNO", "NQR", "NOR", "ORS"},
}

AFTER_PLACEMENT = "wbw/b..w/b...w/b..w/bwb ...../......./......./..... w 0/0 0 12"


def fen(white: str = "", black: str = "", owners: dict[str, str] | None = None,
        captures: tuple[int, int] = (0, 0), no_claim: int = 0, ply: int = 30) -> str:
    """A position string (§10) from piece letters and {triangle: 'w'|'b'}."""
    owners = owners or {}
    points = "/".join(
        "".join("w" if p in white else "b" if p in black else "." for p in row) for row in ROWS
    )
    triangles = "/".join("".join(owners.get(t, ".") for t in band) for band in BANDS)
    side = "w" if ply % 2 == 0 else "b"
    return f"{points} {triangles} {side} {captures[0]}/{captures[1]} {no_claim} {ply}"


def owned_by(colour: str, *names: str) -> dict[str, str]:
    return {name: colour for name in names}


def reason(position, move: str) -> str:
    with pytest.raises(IllegalMoveError) as info:
        position.play(move)
    return info.value.reason


# -- §2 geometry ---------------------------------------------------------------


def test_geometry_derived_from_the_lines_has_the_spec_counts():
    assert talisman.POINTS == "".join(ROWS) and len(talisman.POINTS) == 19
    assert len(talisman.ADJACENT) == 42
    assert talisman.UNIT_TRIANGLES == UNITS  # same triangles, same position-string order
    assert {name: set(units) for name, units in talisman.BIG_TRIANGLES.items()} == BIGS
    assert talisman.EDGE_POINTS == EDGE
    assert all(len(talisman.NEIGHBOURS[p]) == 6 for p in "EFIJKNO")
    for example in ("BIK", "EGO", "DFN", "EMO"):  # the seed's examples
        assert example in talisman.BIG_TRIANGLES


def test_every_unit_triangle_has_mutually_adjacent_corners_on_the_lines():
    adjacent = {frozenset(line[i:i + 2]) for line in LINES for i in range(len(line) - 1)}
    assert len(adjacent) == 42
    for triangle in UNITS:
        a, b, c = triangle
        assert {frozenset(a + b), frozenset(b + c), frozenset(a + c)} <= adjacent


def test_the_spec_lists_every_triangle():
    text = SPEC.read_text()
    for name in list(UNITS) + list(BIGS):
        assert f"`{name}`" in text or name in text.split(), name


# -- §4 placement --------------------------------------------------------------


def test_placement_is_on_empty_edge_points_for_twelve_plies():
    position = GAME.start()
    assert sorted(position.legal_moves()) == sorted(EDGE)
    for ply, point in enumerate("ABCDGHLMPQRS"):
        assert position.in_placement and position.ply == ply
        assert point in position.legal_moves()
        position = position.play(point)
        assert point not in position.legal_moves()
    assert not position.in_placement
    assert position.fen() == AFTER_PLACEMENT
    assert position.pieces() == {p: Color.WHITE if i % 2 == 0 else Color.BLACK
                                 for i, p in enumerate("ABCDGHLMPQRS")}


def test_interior_points_and_occupied_points_are_refused_during_placement():
    start = GAME.start()
    for point in "EFIJKNO":
        assert "not an edge point" in reason(start, point)
    assert "occupied" in reason(start.play("A"), "A")
    assert "placement phase" in reason(start, "A-B")


def test_an_edge_point_emptied_later_does_not_reopen_placement():
    position = GAME.from_fen(AFTER_PLACEMENT).play("A-E")  # A is empty again
    assert "A" not in position.pieces()
    assert all("-" in move for move in position.legal_moves())
    position = position.play("B-F")
    assert "placement is over" in reason(position, "A")


# -- §5 moves and captures ----------------------------------------------------


def test_seed_example_1_d_takes_e_landing_on_f():
    position = GAME.from_fen(fen(white="ADHQRS", black="BCEGLP", ply=20))
    assert "D-F" in position.legal_moves()
    after = position.play("D-F")
    assert after.pieces()["E"] is Color.WHITE  # turned over, not removed
    assert after.pieces()["F"] is Color.WHITE and "D" not in after.pieces()
    assert len(after.pieces()) == 12
    assert after.scores() == (1, 0)
    assert after.fen().split()[3] == "1/0"


def test_seed_example_2_a_takes_e_and_j_landing_on_o():
    position = GAME.from_fen(fen(white="ADHQRS", black="BCEGJL", ply=20))
    assert "A-O" in position.legal_moves()
    after = position.play("A-O")
    pieces = after.pieces()
    assert pieces["E"] is pieces["J"] is pieces["O"] is Color.WHITE
    assert sum(c is Color.WHITE for c in pieces.values()) == 8
    # O, R, S are now white: that triangle is claimed as part of the same move.
    assert after.triangle_owners() == {"ORS": Color.WHITE}
    assert after.scores() == (2 + 5, 0)


def test_captures_are_optional_and_do_not_chain():
    position = GAME.from_fen(fen(white="ADHQRS", black="BCEGJL", ply=20))
    moves = set(position.legal_moves())
    assert {"A-O", "D-I", "D-E"} & moves == {"A-O", "D-I"}  # D-E is occupied
    after = position.play("A-O")
    assert after.to_move is Color.BLACK  # one jump, then the turn passes


def test_a_run_must_be_all_opponent_pieces_and_end_on_an_empty_point():
    # A white, E black, J empty: A-J captures E, A-O would jump an empty point.
    position = GAME.from_fen(fen(white="ADHQRS", black="BCEGKP", ply=20))
    assert "A-J" in position.legal_moves() and "A-O" not in position.legal_moves()
    assert "empty point J" in reason(position, "A-O")
    # A white, E black, J white: nothing to land on beyond E along that line.
    blocked = GAME.from_fen(fen(white="ADHJQR", black="BCEGKP", ply=20))
    assert not any(m.startswith("A-") and m[2] in "JOS" for m in blocked.legal_moves())
    assert "own piece on J" in reason(blocked, "A-S")


def test_multi_piece_capture_along_a_long_line():
    # M, I, E, B on line BEIM: M white jumps I and E (black) to the empty B.
    position = GAME.from_fen(fen(white="ADGLMR", black="CEIJPQ", owners=owned_by("b", "EIJ"),
                                 captures=(2, 2), no_claim=3, ply=30))
    after = position.play("M-B")
    assert after.pieces()["I"] is after.pieces()["E"] is Color.WHITE
    # A, B, D, E, I are white now: ADE, ABE and DEI are claimed by the same move.
    assert after.triangle_owners() == {"EIJ": Color.BLACK, "ADE": Color.WHITE,
                                       "ABE": Color.WHITE, "DEI": Color.WHITE}
    assert after.scores() == (2 + 2 + 15, 7)


def test_three_pieces_in_one_jump():
    # C white; F, J, N black on line CFJNQ; Q empty.
    position = GAME.from_fen(fen(white="ABCDGH", black="FJLNPS", ply=20))
    assert "C-Q" in position.legal_moves()
    after = position.play("C-Q")
    assert [after.pieces()[p] for p in "FJNQ"] == [Color.WHITE] * 4
    assert after.scores() == (3, 0) and after.triangle_owners() == {}


# -- §6 triangles and score ----------------------------------------------------

MULTI_CLAIM = fen(white="EFIKNS", black="ACHLOQ", owners=owned_by("w", "BEF"), ply=40, no_claim=10)


def test_one_move_claims_six_triangles_and_the_size2_bonus_on_top():
    position = GAME.from_fen(MULTI_CLAIM)
    assert position.scores() == (5, 0)
    after = position.play("S-J")  # jumps O: J and O become white
    claimed = {"EFJ", "EIJ", "FJK", "IJN", "JNO", "JKO"}
    assert set(after.triangle_owners()) == claimed | {"BEF"}
    # 1 capture + 6 x 5 + 20 for BIK (BEF EIJ FJK EFJ), whose 4 units are now white
    assert after.scores() == (5 + 1 + 30 + 20, 0)
    assert after.no_claim_plies == 0


def test_a_triangle_owned_by_the_opponent_stays_his_when_the_mover_fills_it():
    # EIJ belongs to black; white moves H-I and holds E, I and J: nothing changes.
    position = GAME.from_fen(fen(white="EHJQRS", black="ABCDGL", owners=owned_by("b", "EIJ")))
    after = position.play("H-I")
    assert all(after.pieces()[p] is Color.WHITE for p in "EIJ")
    assert after.triangle_owners() == {"EIJ": Color.BLACK}
    assert after.scores() == position.scores() == (0, 5)
    assert after.no_claim_plies == position.no_claim_plies + 1


def test_big_triangles_are_not_claimed_by_their_corners():
    # White holds B, I, K (corners of BIK) and nothing inside: no triangle is claimed.
    position = GAME.from_fen(fen(white="ABIKLS", black="CDGHMQ", ply=20))
    assert position.triangle_owners() == {}
    after = position.play("S-O")
    assert after.triangle_owners() == {}
    assert after.scores() == (0, 0)


# -- §8 endings ------------------------------------------------------------------

# White's only piece sits on A, every line from A is black up to the edge.
BLOCKED_WHITE = "BCDHEJOSMPQ"


def test_blocked_player_loses_whatever_the_score():
    before = fen(white="A", black="BCDHENOSMPQ", owners={**owned_by("b", "OPS", "MNQ")},
                 captures=(0, 5), ply=41)
    position = GAME.from_fen(before)
    assert "A-J" in GAME.from_fen(before.replace(" b ", " w ").replace(" 41", " 42")).legal_moves()
    after = position.play("N-J")  # black closes white's last way out
    assert after.legal_moves() == []
    assert after.outcome().termination is Termination.BLOCKED
    assert after.outcome().winner is Color.BLACK
    # White ahead on points but still blocked: the loss stands (catch-up is possible).
    owners = {**owned_by("b", "OPS"), **owned_by("w", "ADE", "ABE", "BEF", "BCF")}
    leading = GAME.from_fen(fen(white="A", black=BLOCKED_WHITE, owners=owners,
                                captures=(0, 5), ply=42))
    assert leading.scores() == (20, 10)
    assert leading.outcome().termination is Termination.BLOCKED
    assert leading.outcome().result == "0-1"


def test_cannot_catch_up_comes_before_blocked():
    white_owns = [t for t in UNITS if t not in ("OPS", "MNQ", "NOR", "ORS")]
    owners = {**owned_by("w", *white_owns), **owned_by("b", "OPS", "MNQ")}
    position = GAME.from_fen(fen(white="A", black=BLOCKED_WHITE, owners=owners,
                                 captures=(0, 5), ply=42))
    assert position.legal_moves() == []  # white is blocked ...
    outcome = position.outcome()
    assert outcome.termination is Termination.CANNOT_CATCH_UP  # ... but cannot be caught
    assert outcome.winner is Color.WHITE


def test_cannot_catch_up_after_a_move_uses_the_issue_formula():
    ring = ("ADE", "ABE", "BCF", "CFG", "DHI", "DEI", "FGK", "GKL", "BEF")
    position = GAME.from_fen(fen(white="EFIKNS", black="ACHLOQ", owners=owned_by("w", *ring),
                                 ply=40))
    # 45 for white; black could still reach 0 + 5*15 + 20*6 untouched + 6 pieces = 201.
    assert position.scores() == (45, 0) and position.outcome() is None
    after = position.play("S-J")
    # white: 1 + 15*5 + 6 size-2 (ACJ AHJ BIK CJL DFN EGO) * 20 = 196;
    # black could reach 0 + 9*5 + 20*0 + 7 white pieces = 52 < 196.
    assert after.scores() == (196, 0)
    assert after.outcome().termination is Termination.CANNOT_CATCH_UP
    assert after.outcome().result == "1-0"
    assert after.legal_moves() == []


def test_the_last_triangle_ends_the_game_before_cannot_catch_up():
    top = ("ADE", "ABE", "BCF", "CFG", "DHI", "DEI", "FGK", "GKL", "BEF")
    bottom = ("HIM", "IMN", "KOP", "KLP", "MNQ", "NQR", "NOR", "ORS", "OPS")
    position = GAME.from_fen(fen(white="EFIKNS", black="ACHLOQ",
                                 owners={**owned_by("w", *top), **owned_by("b", *bottom)}))
    assert position.scores() == (45, 45) and position.outcome() is None
    after = position.play("S-J")  # claims the last six, around J
    # Black could now reach only 45 + 0 + 0 + 7 < 196: cannot-catch-up holds too.
    assert after.scores() == (196, 45)
    assert len(after.triangle_owners()) == 24
    assert after.outcome().termination is Termination.ALL_TRIANGLES
    assert after.outcome().winner is Color.WHITE


def test_all_triangles_with_equal_scores_is_a_draw():
    owners = {**owned_by("w", *BANDS[0], *BANDS[1]), **owned_by("b", *BANDS[2], *BANDS[3])}
    position = GAME.from_fen(fen(white="ADHQRS", black="BCEGLP", owners=owners, ply=20))
    assert position.scores() == (60 + 80, 60 + 80)  # 4 size-2 triangles each
    assert position.outcome().termination is Termination.ALL_TRIANGLES
    assert position.outcome().result == "1/2-1/2"
    assert position.legal_moves() == []


SHUFFLE = ["A-E", "B-F", "E-A", "F-B"]


def test_threefold_repetition_counts_from_the_position_string():
    position = GAME.from_fen(AFTER_PLACEMENT)
    for move in SHUFFLE * 2:
        assert position.outcome() is None
        position = position.play(move)
    assert position.fen().split()[:3] == AFTER_PLACEMENT.split()[:3]
    assert position.outcome().termination is Termination.REPETITION
    assert position.outcome().result == "1/2-1/2"


def test_repetition_comes_before_fifty_plies():
    start = AFTER_PLACEMENT.replace(" 0 12", " 42 54")
    position = GAME.from_fen(start)
    for move in SHUFFLE * 2:
        position = position.play(move)
    assert position.no_claim_plies == 50
    assert position.outcome().termination is Termination.REPETITION


def test_fifty_movement_plies_without_a_claim_and_scores_decide():
    position = GAME.from_fen(fen(white="ACGLPR", black="BDHMQS", owners=owned_by("w", "HIM"),
                                 no_claim=48, ply=60))
    position = position.play("A-E").play("B-F")
    outcome = position.outcome()
    assert position.no_claim_plies == 50
    assert outcome.termination is Termination.NO_PROGRESS
    assert outcome.winner is Color.WHITE  # 5 to 0


def test_fifty_plies_come_before_blocked():
    position = GAME.from_fen(fen(white="A", black=BLOCKED_WHITE, owners=owned_by("b", "OPS"),
                                 captures=(0, 5), no_claim=50, ply=100))
    assert position.outcome().termination is Termination.NO_PROGRESS
    assert position.outcome().winner is Color.BLACK


def test_no_claim_counter_counts_only_movement_plies_and_resets_on_a_claim():
    position = GAME.start()
    for point in "ABCDGHLMPQRS":
        position = position.play(point)
        assert position.no_claim_plies == 0
    position = position.play("A-E")
    assert position.no_claim_plies == 1
    claimed = GAME.from_fen(MULTI_CLAIM).play("S-J")
    assert claimed.no_claim_plies == 0


# -- §9 notation and reasons -----------------------------------------------------

MID = "w.b/wb.w/.bb.w/w..b/bw. ...../..b..../......./..... w 2/2 3 30"


@pytest.mark.parametrize("move, expected", [
    ("A", "placement is over"),
    ("A-A", "same point"),
    ("B-F", "B holds no piece"),
    ("C-F", "C holds black's piece"),
    ("A-B", None),
    ("D-E", "point E is occupied"),
    ("A-K", "neither adjacent nor on a common line"),
    ("A-S", "cannot jump over empty point O"),
    ("D-H", None),
    ("A-O", None),
    ("M-B", None),
    ("G-O", "cannot jump over empty point K"),
    ("Q-S", "Q holds black's piece"),
    ("R-Q", "point Q is occupied"),
    ("E-B", "E holds black's piece"),
    ("A-H", "cannot jump over own piece on D"),
    ("T", "malformed"),
    ("A-", "malformed"),
    ("AB", "malformed"),
    ("A--B", "malformed"),
    ("", "malformed"),
])
def test_illegal_moves_say_why(move, expected):
    position = GAME.from_fen(MID)
    if expected is None:
        assert position.parse_move(move) == move
        return
    assert expected in reason(position, move)


def test_spellings_are_forgiven_and_canonicalised():
    position = GAME.from_fen(MID)
    assert position.parse_move(" a - o ") == "A-O"
    assert position.play("a-o").fen() == position.play("A-O").fen()
    assert GAME.start().parse_move("b") == "B"


def test_no_move_is_accepted_after_the_end():
    position = GAME.from_fen(fen(white="A", black=BLOCKED_WHITE, owners=owned_by("b", "OPS"),
                                 captures=(0, 5), no_claim=50, ply=100))
    assert "already over" in reason(position, "A-E")


# -- §10 position strings ----------------------------------------------------------


def test_start_position_string():
    assert GAME.start().fen() == ".../..../...../..../... ...../......./......./..... w 0/0 0 0"


@pytest.mark.parametrize("text", [AFTER_PLACEMENT, MID, MULTI_CLAIM,
                                  "w.b/...w/...../..../... ...../......./......./..... b 0/0 0 3"])
def test_position_strings_round_trip(text):
    position = GAME.from_fen(text)
    assert position.fen() == text
    assert GAME.from_fen(position.fen()).legal_moves() == position.legal_moves()


@pytest.mark.parametrize("text, expected", [
    ("", "expected 6 fields"),
    (".../..../...../..../... w 0/0 0 0", "expected 6 fields"),
    (".../..../..... ...../......./......./..... w 0/0 0 0", "expected 5 rows"),
    (".../.../...../..../... ...../......./......./..... w 0/0 0 0", "row 2 (D-G) needs 4"),
    ("x../..../...../..../... ...../......./......./..... w 0/0 0 0", "'x' on point A"),
    (".../..../...../..../... ...../......./....... w 0/0 0 0", "expected 4 bands"),
    (".../..../...../..../... ...../....../......./..... w 0/0 0 0", "band 2 needs 7"),
    (".../..../...../..../... ...../......./......./....q w 0/0 0 0", "'q' on triangle OPS"),
    (".../..../...../..../... ...../......./......./..... x 0/0 0 0", "side to move"),
    (".../..../...../..../... ...../......./......./..... w 0-0 0 0", "captures must be"),
    (".../..../...../..../... ...../......./......./..... w 0/0 -1 0", "no-claim counter must be"),
    (".../..../...../..../... ...../......./......./..... w 0/0 0 x", "ply must be"),
    (".../..../...../..../... ...../......./......./..... b 0/0 0 0", "at ply 0 white is to move"),
    ("w../..../...../..../... ...../......./......./..... w 0/0 0 0", "white has placed 0"),
    ("w../.w../...../..../... ...../......./......./..... b 0/0 0 1", "only edge points"),
    ("w../..../...../..../... ...../......./......./..... b 1/0 0 1", "nothing can have been"),
    ("w../..../...../..../... w..../......./......./..... b 0/0 0 1", "no triangle can be owned"),
    ("w../..../...../..../... ...../......./......./..... b 0/0 1 1", "no-claim counter 1 exceeds"),
    ("wbw/b..w/b...w/b..w/bw. ...../......./......./..... w 0/0 0 30", "always has 12 pieces"),
    ("wbw/b..w/b...w/b..w/bwb ...../......./......./..... w 1/0 0 30", "do not match the board"),
    ("wbw/b..w/b...w/b..w/bwb ...../......./......./..... w 0/0 51 100", "exceeds 50"),
    ("wbw/b..w/b...w/b..w/bwb ...../......./......./..... w 0/0 5 14", "the 2 movement plies"),
    (fen(white="EFIJRS", black="ABCDGH", ply=20), "neutral triangle EIJ has white pieces"),
])
def test_bad_position_strings_say_why(text, expected):
    with pytest.raises(InvalidFenError) as info:
        GAME.from_fen(text)
    assert expected in info.value.reason


DIAGRAM_AFTER_MULTI_CLAIM = r"""
    B---.---B              A---B---C
   / \ /w\ / \            / \ / \ / \
  .---W---W---.          D---E---F---G
 / \ /w\w/w\ / \        / \ / \ / \ / \
B---W---W---W---B      H---I---J---K---L
 \ / \w/w\w/ \ /        \ / \ / \ / \ /
  .---W---W---.          M---N---O---P
   \ / \ / \ /            \ / \ / \ /
    B---.---.              Q---R---S

black to move, ply 41 (movement), no claim for 0 plies
score: white 56 (1 captured), black 0 (0 captured)"""[1:]


def test_diagram_shows_pieces_owners_names_and_scores():
    assert GAME.from_fen(MULTI_CLAIM).play("S-J").diagram() == DIAGRAM_AFTER_MULTI_CLAIM


# -- perft (§11) -------------------------------------------------------------------


def test_perft_from_the_start():
    start = GAME.start()
    assert [perft(start, d) for d in (1, 2, 3)] == [12, 132, 1320]


def test_perft_in_the_movement_phase_with_multi_piece_captures():
    position = GAME.from_fen(MID)
    assert [perft(position, d) for d in (1, 2, 3)] == [15, 221, 3209]
    divide = perft_divide(position, 2)
    assert divide["A-O"] == 12 and divide["M-B"] == 12
    assert perft(GAME.from_fen(AFTER_PLACEMENT), 3) == 1069


# -- Talisman properties over random games -------------------------------------------


def reference_moves(board: dict[str, str], side: str, ply: int) -> set[str]:
    """The moves of §4-§5 straight from the prose: walk every line both ways."""
    if ply < 12:
        return {p for p in EDGE if p not in board}
    other = "b" if side == "w" else "w"
    moves = set()
    for line in LINES:
        for seq in (line, line[::-1]):
            for i, point in enumerate(seq):
                if board.get(point) != side:
                    continue
                j = i + 1
                while j < len(seq) and board.get(seq[j]) == other:
                    j += 1
                if j < len(seq) and seq[j] not in board:
                    moves.add(f"{point}-{seq[j]}")
    return moves


def reference_play(board, owners, captured, side, move):
    """Apply a move the slow way; returns (board, owners, captured)."""
    board, owners, captured = dict(board), dict(owners), dict(captured)
    if "-" not in move:
        board[move] = side
    else:
        source, target = move.split("-")
        line = next(ln for ln in LINES if source in ln and target in ln)
        i, j = line.index(source), line.index(target)
        jumped = line[min(i, j) + 1:max(i, j)]
        del board[source]
        board[target] = side
        for point in jumped:
            board[point] = side
        captured[side] += len(jumped)
    for triangle in UNITS:
        if triangle not in owners and all(board.get(p) == side for p in triangle):
            owners[triangle] = side
    return board, owners, captured


def reference_score(owners, captured, side):
    mine = {t for t, o in owners.items() if o == side}
    return captured[side] + 5 * len(mine) + 20 * sum(units <= mine for units in BIGS.values())


def random_positions(seed: int):
    rng = random.Random(seed)
    position = GAME.start()
    positions = [position]
    while position.legal_moves():
        position = position.play(rng.choice(position.legal_moves()))
        positions.append(position)
    return positions


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_move_generation_and_play_agree_with_the_naive_reference(seed):
    rng = random.Random(seed)
    position = GAME.start()
    board, owners, captured = {}, {}, {"w": 0, "b": 0}
    letter = {Color.WHITE: "w", Color.BLACK: "b"}
    while position.legal_moves():
        side = letter[position.to_move]
        assert set(position.legal_moves()) == reference_moves(board, side, position.ply)
        move = rng.choice(position.legal_moves())
        position = position.play(move)
        board, owners, captured = reference_play(board, owners, captured, side, move)
        assert {p: letter[c] for p, c in position.pieces().items()} == board
        assert {t: letter[c] for t, c in position.triangle_owners().items()} == owners
        assert position.scores() == (reference_score(owners, captured, "w"),
                                     reference_score(owners, captured, "b"))
    outcome = position.outcome()
    if outcome.termination is Termination.BLOCKED:
        assert not reference_moves(board, letter[position.to_move], position.ply)
        assert outcome.winner is position.to_move.other


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_owned_triangles_keep_their_owner_and_scores_never_decrease(seed):
    """§6: claims are for good and only the mover's; scores only grow."""
    positions = random_positions(seed)
    for before, after in zip(positions, positions[1:], strict=False):
        owned_before = before.triangle_owners()
        owned_after = after.triangle_owners()
        assert owned_after.items() >= owned_before.items()
        new = set(owned_after) - set(owned_before)
        assert all(owned_after[t] is before.to_move for t in new)  # only the mover claims
        assert all(b <= a for b, a in zip(before.scores(), after.scores(), strict=False))
        assert len(after.pieces()) == min(after.ply, 12)
    # §8 "which endings can coincide": these two only start on a claiming ply.
    final = positions[-1]
    if final.outcome().termination in (Termination.CANNOT_CATCH_UP, Termination.ALL_TRIANGLES):
        assert final.no_claim_plies == 0 and final.ply > 12


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_every_position_of_a_game_is_accepted_as_a_position_string(seed):
    # In particular no neutral triangle is ever left with three same-coloured corners.
    for position in random_positions(seed):
        assert GAME.from_fen(position.fen()).fen() == position.fen()

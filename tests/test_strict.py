"""Strict mode (specs/match.md §Strict mode): the checks over a finished
game's record, in-process on records made by hand, and on records of real
games between real engine processes that lie (tests/bad_engines/lying.py)."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from cli import invoke

from arbiter.games import get_game
from arbiter.record import GameRecord, Ply
from arbiter.strict import SEARCH_TIME_SLACK_MS, StrictCheck, StrictWarning, check_game

TROLL = get_game("troll")
LYING = Path(__file__).resolve().parent / "bad_engines" / "lying.py"


def record(plies: list[Ply], result: str = "1-0", termination: str = "connection") -> GameRecord:
    return GameRecord(game="troll", white="w", black="b", result=result, termination=termination,
                      termination_detail="", moves=plies)


def honest(moves: list[str], **changes) -> list[Ply]:
    """Plies of ``moves`` from the start, each with a pv of the move itself,
    ``cp 0`` and an info time 5 ms under the measured 50; ``changes`` maps a
    ply's index to the fields to change."""
    plies = []
    for index, move in enumerate(moves):
        fields = dict(move=move, color="white" if index % 2 == 0 else "black", time_ms=50,
                      engine_time_ms=45, score="cp 0", pv=[move])
        fields.update(changes.get(str(index), {}))
        plies.append(Ply(**fields))
    return plies


def first_moves(count: int) -> list[str]:
    position, moves = TROLL.start(), []
    for _ in range(count):
        move = position.legal_moves()[0]
        moves.append(move)
        position = position.play(move)
    return moves


MOVES = first_moves(6)


def test_an_honest_record_has_no_warning():
    assert check_game(record(honest(MOVES)), TROLL) == []


def test_a_pv_with_an_illegal_move_is_one_warning_per_engine_with_its_count():
    """§Strict mode: the pv is replayed from the position the engine searched;
    the first ply that failed is named, the others counted."""
    changes = {"1": {"pv": [MOVES[1], MOVES[1]]},  # the same cell twice: occupied
               "3": {"pv": ["z9"]},  # not a cell
               "4": {"pv": [MOVES[4], "pass"]}}  # pass while drops are legal
    warnings = check_game(record(honest(MOVES, **changes)), TROLL)
    assert [(w.check, w.engine, w.color, w.ply, w.count) for w in warnings] == [
        (StrictCheck.ILLEGAL_PV, "w", "white", 5, 1), (StrictCheck.ILLEGAL_PV, "b", "black", 2, 2)]
    black = warnings[1].detail
    assert black.startswith(f"Black's principal variation at ply 2 ({MOVES[1]} {MOVES[1]}) has an "
                            f"illegal move {MOVES[1]!r} (its move 2): ")


def test_a_pv_spelled_another_way_is_legal():
    """A pv move the referee reads (parse_move) in another spelling is legal."""
    assert check_game(record(honest(MOVES, **{"0": {"pv": [MOVES[0].upper()]}})), TROLL) == []


def test_a_pv_past_the_end_of_the_game_is_illegal():
    position, line = TROLL.start(), []
    while not position.is_over():
        move = position.legal_moves()[0]
        line.append(move)
        position = position.play(move)
    plies = honest(MOVES[:1], **{"0": {"pv": [*line, "a1"]}})
    (warning,) = check_game(record(plies), TROLL)
    assert warning.check is StrictCheck.ILLEGAL_PV and "the game is already over" in warning.detail


@pytest.mark.parametrize("result, termination, white, black, flagged", [
    ("0-1", "connection", "mate 3", "cp 0", ["white"]),  # White claimed a win and lost
    ("1/2-1/2", "no-moves", "mate 5", "mate 2", ["white", "black"]),  # both claimed, a draw
    ("1-0", "connection", "mate -2", "cp 0", ["white"]),  # White claimed a loss and won
    ("1-0", "connection", "mate 3", "mate -4", []),  # both right
    ("0-1", "time-forfeit", "mate 3", "cp 0", []),  # not an ending by the rules
    ("0-1", "adjudicated-resign", "mate 3", "cp 0", []),
    ("0-1", "illegal-move", "mate 3", "cp 0", []),
])
def test_a_mate_score_the_result_by_the_rules_contradicts(result, termination, white, black, flagged):
    plies = honest(MOVES, **{"0": {"score": white}, "1": {"score": black}})
    warnings = check_game(record(plies, result, termination), TROLL)
    assert [(w.check, w.color, w.ply) for w in warnings] == [
        (StrictCheck.MATE_CONTRADICTED, color, 1 if color == "white" else 2) for color in flagged]


def test_the_mate_warning_says_what_was_claimed():
    plies = honest(MOVES, **{"2": {"score": "mate 1"}, "4": {"score": "mate 3"}})
    (warning,) = check_game(record(plies, "0-1"), TROLL)
    assert warning.detail == ("White reported mate 1 at ply 3 (a forced win in 1 plies) but lost by "
                              "the rules (0-1, connection)")
    assert warning.count == 2
    assert str(warning).endswith("(2 plies in all)")


@pytest.mark.parametrize("engine_time, time, comp, warned", [
    (50 + SEARCH_TIME_SLACK_MS + 1, 50, None, True),
    (50 + SEARCH_TIME_SLACK_MS, 50, None, False),  # the measure's own error
    (125 + SEARCH_TIME_SLACK_MS, 80, 45, False),  # a remote engine: the compensation is added back
    (126 + SEARCH_TIME_SLACK_MS, 80, 45, True),
    (None, 50, None, False),  # no info time: nothing to check
])
def test_a_reported_search_time_longer_than_measured(engine_time, time, comp, warned):
    plies = honest(MOVES, **{"1": {"engine_time_ms": engine_time, "time_ms": time, "comp_ms": comp,
                                   "rtt_ms": 5 if comp else None}})
    warnings = check_game(record(plies), TROLL)
    assert [w.check for w in warnings] == ([StrictCheck.SEARCH_TIME] if warned else [])
    if warned:
        assert warnings[0].detail == (f"Black reported a search of {engine_time} ms (info time) at "
                                      f"ply 2, but its go to its bestmove took {time + (comp or 0)} ms")


def test_plies_count_from_the_starting_position_with_the_opening():
    game = GameRecord(game="troll", white="w", black="b", result="1-0", termination="connection",
                      termination_detail="", opening_moves=MOVES[:2],
                      moves=honest(MOVES[2:4], **{"1": {"pv": ["z9"]}}))
    for ply in game.moves:  # the colours after a two-ply opening
        ply.color = "white" if ply is game.moves[0] else "black"
    (warning,) = check_game(game, TROLL)
    assert warning.ply == 4


def test_warnings_read_back_from_their_dict():
    warning = StrictWarning(StrictCheck.SEARCH_TIME, "w", "white", 3, 2, "why")
    assert StrictWarning.from_dict(json.loads(json.dumps(warning.to_dict()))) == warning


def test_a_record_that_is_not_a_game_is_an_error():
    with pytest.raises(ValueError, match="ply 1 of the record"):
        check_game(record([Ply(move="z9", color="white", time_ms=1)]), TROLL)


# -- real games between real processes --------------------------------------------


def lying(name: str, **env: str) -> str:
    words = [f"cmd={sys.executable}", f"arg={LYING}", f"name={name}"]
    words += [f"env.{key}='{value}'" for key, value in env.items()]
    return " ".join(words)


def played(*specs: str) -> GameRecord:
    run = invoke("play", "troll", "-e", specs[0], "-e", specs[1], "--tc", "10+0.1", "--json")
    assert run.returncode == 0, run.stderr
    return GameRecord.from_dict(json.loads(run.stdout))


def test_a_real_game_with_a_lying_pv():
    """An engine whose pv is a cell off the board, every move."""
    game = played(lying("liar", LIE_PV="z9"), lying("honest"))
    (warning,) = check_game(game, TROLL)
    assert (warning.check, warning.engine, warning.ply) == (StrictCheck.ILLEGAL_PV, "liar", 1)
    assert warning.count == sum(1 for ply in game.moves if ply.color == "white")


def test_a_real_game_with_mate_claimed_by_both():
    """Both engines claim mate in 3 with every move: the one that did not
    win by the rules gets the warning, the winner none."""
    game = played(lying("w", LIE_SCORE="mate 3"), lying("b", LIE_SCORE="mate 3"))
    assert game.termination == "connection"
    winner = "white" if game.result == "1-0" else "black"
    warnings = check_game(game, TROLL)
    assert [(w.check, w.color) for w in warnings] == [
        (StrictCheck.MATE_CONTRADICTED, "black" if winner == "white" else "white")]


def test_a_real_game_with_a_lying_search_time():
    """An engine that says each search took 100 s while it answered at once."""
    game = played(lying("honest"), lying("slowpoke", LIE_TIME="100000"))
    (warning,) = check_game(game, TROLL)
    assert (warning.check, warning.engine, warning.color) == (StrictCheck.SEARCH_TIME, "slowpoke",
                                                              "black")


def test_a_real_game_between_honest_engines_has_no_warning():
    """The sample engines report pv and scores: strict mode finds no illegal
    pv and no mate the result contradicts.  (Their times are checked too, but
    not asserted here: whether the arbiter is descheduled for more than
    SEARCH_TIME_SLACK_MS after a write depends on the machine's load.)"""
    game = played(f"cmd={sys.executable} arg=-m arg=sample_engines.mcts name=mcts",
                  f"cmd={sys.executable} arg=-m arg=sample_engines.greedy name=greedy")
    assert all(ply.pv for ply in game.moves) and any(ply.score for ply in game.moves)
    assert [w for w in check_game(game, TROLL) if w.check is not StrictCheck.SEARCH_TIME] == []


# -- a run with --strict (specs/tournament.md §Exit status) ------------------------


def test_a_match_with_strict_stores_counts_and_exits_4(tmp_path):
    """``--strict``: each warning stored with its game (a ``strict`` event
    keyed by the game), counted on stderr, exit 4; the same match without
    ``--strict`` exits 0 and stores none."""
    args = ["match", "troll", lying("liar", LIE_PV="z9"), lying("honest"), "--games", "2",
            "--tc", "10+0.1", "--plain"]
    run = invoke(*args, "--strict", "--db", tmp_path / "s.db")
    assert run.returncode == 4, run.stderr
    assert "strict: 2 warning(s) in 2 game(s)" in run.stderr
    with sqlite3.connect(tmp_path / "s.db") as db:
        events = db.execute("select engine, key, detail from events where kind = 'strict' "
                            "order by key").fetchall()
    assert [(engine, key) for engine, key, _ in events] == [("liar", "r1-p1-g1"), ("liar", "r1-p1-g2")]
    assert all(detail.startswith("illegal-pv: ") for _, _, detail in events)
    plain = invoke(*args, "--db", tmp_path / "p.db")
    assert plain.returncode == 0, plain.stderr
    with sqlite3.connect(tmp_path / "p.db") as db:
        assert db.execute("select count(*) from events where kind = 'strict'").fetchone() == (0,)

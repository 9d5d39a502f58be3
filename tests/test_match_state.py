"""The match's rules, in-process (arbiter/match/state.py): every termination,
fault attribution, clock rule and adjudication, fed as events to the pure
state; no engine, no trio, no real time (specs/match.md).  The record below
the match (arbiter/record.py) is tested here too.  tests/test_match.py plays
the same rules end to end with real engine processes."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

import pytest

from arbiter.clock import Clock, TimeControl
from arbiter.games import Color, GameError, Termination, get_game
from arbiter.match.adjudication import (
    MATE_CP,
    Adjudication,
    AdjudicationError,
    DrawRule,
    ResignRule,
    centipawns,
)
from arbiter.match.state import (
    DEADLINE_PASSED,
    BestMove,
    CanonicalSpellings,
    Disconnected,
    Faulted,
    GameOver,
    Go,
    MatchState,
    MatchStateError,
    Phase,
    Stop,
)
from arbiter.record import GameRecord, MatchTermination, Ply, ReportedInfo, Score, ScoreKind

M = MatchTermination
WHITE, BLACK = Color.WHITE, Color.BLACK


@dataclass
class Reply:
    """A bestmove as an engine gives it: the move, when it was read, its info."""

    move: str
    time: float
    info: ReportedInfo = field(default_factory=ReportedInfo)


def reported(fields: dict | None) -> ReportedInfo:
    """What an engine reported, from its info fields as the codec names them
    (``score_cp``, ``depth``, ...): the merge's own rule for the score."""
    fields = dict(fields or {})
    score = Score.from_info(fields)
    for key in ("score_cp", "score_mate", "score_winprob"):
        fields.pop(key, None)
    if "pv" in fields:
        fields["pv"] = tuple(fields["pv"])
    return ReportedInfo(**fields, score=score)


@dataclass(frozen=True)
class Fault:
    """An engine's fault as an engine reports it (arbiter.engine.EngineFault)."""

    kind: str
    detail: str
    time: float
    command: str | None = None
    searching: bool = False
    line: str | None = None


def new_state(game="troll", tc="10+0.1", *, white_tc=None, black_tc=None, margin=0, stall_ms=60_000,
              grace=0.5, **options) -> MatchState:
    clocks = {color: Clock(TimeControl.parse(own or tc), timemargin_ms=margin, stall_ms=stall_ms)
              for color, own in ((WHITE, white_tc), (BLACK, black_tc))}
    return MatchState(get_game(game), clocks, stop_grace={WHITE: grace, BLACK: grace}, **options)


class Table:
    """A state and the fake time of its driver: each search starts at `now`."""

    def __init__(self, state: MatchState):
        self.state = state
        self.now = 100.0
        self.action = state.start()

    def answer(self, move: str | None = None, seconds: float = 0.01, info: dict | None = None):
        """The mover answers after `seconds` (its first legal move by default)."""
        go = self.action
        assert isinstance(go, Go | Stop), go
        if move is None:
            move = self.state.position.legal_moves()[0]
        started = self.now
        self.now += seconds
        self.action = self.state.receive(BestMove(Reply(move, self.now, reported(info)), started))
        self.state.record_ply()
        return self.action

    def play(self, plies: int, seconds: float = 0.01):
        for _ in range(plies):
            self.answer(seconds=seconds)
        return self.action


def over(action) -> GameOver:
    assert isinstance(action, GameOver), action
    return action


# --- one game (specs/match.md §One game) -------------------------------------------------


def test_the_first_go_is_to_the_side_to_move_with_both_clocks():
    state = new_state(tc="60+1")
    go = state.start()
    assert isinstance(go, Go) and go.color is WHITE and go.mover_is_p1
    assert go.position == b"position startpos\n"
    assert (go.limits.time_ms, go.limits.inc_ms, go.limits.opponent_time_ms) == (60_000, 1000, 60_000)
    assert go.seconds == 60.0
    assert state.phase is Phase.SEARCHING and state.mover is WHITE


def test_atoll_black_moves_first_and_is_p1():
    go = new_state("atoll").start()
    assert go.color is BLACK and go.mover_is_p1
    table = Table(new_state("atoll"))
    second = table.answer()
    assert second.color is WHITE and not second.mover_is_p1


def test_each_ply_appends_to_the_position_line_and_is_recorded():
    table = Table(new_state(tc="40/20+0.5"))
    first = table.state.position.legal_moves()[0]
    go = table.answer(first, seconds=0.25, info={"depth": 3, "nodes": 99, "time": 240,
                                                 "score_cp": 35, "pv": (first, "x")})
    assert go.color is BLACK and go.position == f"position startpos moves {first}\n".encode()
    second = table.state.position.legal_moves()[0]
    go = table.answer(second)
    assert go.position == f"position startpos moves {first} {second}\n".encode()
    ply = table.state.moves[0]
    assert ply == Ply(first, "white", 250, 20_250, engine_time_ms=240, score=Score(ScoreKind.CP, 35),
                      depth=3, nodes=99, pv=[first, "x"])
    assert table.state.moves[1].score is None and table.state.moves[1].pv == []
    assert table.state.plies == 2


def test_the_ply_is_recorded_when_asked_and_its_info_read_only_then():
    """The driver records a ply while the next engine thinks: the info (lazily
    parsed by the engine) is not touched before."""

    class Lazy:
        move, time, reads = "d5", 1.5, 0

        @property
        def info(self):
            self.reads += 1
            return reported({"score_mate": -3})

    state = new_state()
    state.start()
    reply = Lazy()
    go = state.receive(BestMove(reply, 1.0))
    assert isinstance(go, Go) and reply.reads == 0
    ply, after = state.record_ply()
    assert reply.reads == 1 and str(ply.score) == "mate -3" and ply.time_ms == 500
    assert after is state.position and after.ply == 1
    assert state.record_ply() is None  # made once


def test_the_opening_is_checked_before_any_action_and_given_not_played():
    with pytest.raises(GameError, match="ply 1: illegal move 'zz'"):
        new_state(opening=["zz"])
    game = get_game("troll")
    opening = game.start().legal_moves()[:1]
    state = new_state(opening=opening)
    go = state.start()
    assert go.color is BLACK and go.position == f"position startpos moves {opening[0]}\n".encode()
    assert state.plies == 1 and state.moves == []


def test_a_non_canonical_spelling_is_recorded_canonical():
    table = Table(new_state())
    move = table.state.position.legal_moves()[0]
    go = table.answer(move.upper())
    assert table.state.moves[0].move == move
    assert go.position == f"position startpos moves {move}\n".encode()


def test_canonical_spellings_are_one_set_per_game():
    troll, morris = get_game("troll"), get_game("morris")
    assert CanonicalSpellings.of(troll) is CanonicalSpellings.of(troll)
    assert CanonicalSpellings.of(troll) is not CanonicalSpellings.of(morris)
    start = troll.start()
    move = start.legal_moves()[0]
    assert CanonicalSpellings.of(troll).judge(start, f" {move.upper()} ")[0] == move


@pytest.mark.parametrize("name", ["troll", "atoll", "morris", "talisman"])
@pytest.mark.parametrize("seed", range(3))
def test_rule_endings_are_the_referees(name, seed):
    """specs/match.md §Terminations: the rules' endings keep the referee's names
    and result; the detail says who won by what (and the scores)."""
    rng = random.Random(seed)
    table = Table(new_state(name))
    while isinstance(table.action, Go):
        table.answer(rng.choice(table.state.position.legal_moves()))
    end = over(table.action)
    outcome = table.state.position.outcome()
    assert outcome is not None and end.termination is outcome.termination
    assert end.winner is outcome.winner
    reason = outcome.termination.value
    scores = table.state.position.scores()
    tail = f" (scores {scores[0]}-{scores[1]})" if scores else ""
    side = {WHITE: "White", BLACK: "Black", None: None}[outcome.winner]
    assert end.detail == (f"draw by {reason}{tail}" if side is None else f"{side} wins by {reason}{tail}")
    assert len(table.state.moves) == table.state.plies


def test_troll_forced_pass_then_no_moves_is_a_draw():
    rows = ["BWBWBWBW" if r % 2 == 0 else "WBWBWBWB" for r in range(8)]
    rows[6] = "1" + rows[6][1:]
    table = Table(new_state(fen="/".join(rows) + " w 63"))
    assert table.action.position.startswith(b"position fen ")
    table.answer("pass")
    end = over(table.answer("a2"))
    assert (end.termination, end.winner) == (Termination.NO_MOVES, None)
    assert [m.move for m in table.state.moves] == ["pass", "a2"]


def test_an_opening_that_ends_the_game_needs_no_search():
    rng = random.Random(1)
    position, moves = get_game("troll").start(), []
    while position.outcome() is None:
        moves.append(rng.choice(position.legal_moves()))
        position = position.play(moves[-1])
    end = over(new_state(opening=moves).start())
    assert end.termination is position.outcome().termination


# --- the arbiter's endings (specs/match.md §Terminations) ------------------------------------


def test_illegal_move_loses_with_the_referees_reason():
    table = Table(new_state())
    first = table.state.position.legal_moves()[0]
    table.answer(first)
    end = over(table.answer(first))  # Black drops on the occupied cell
    assert (end.termination, end.winner, end.illegal_move) == (M.ILLEGAL_MOVE, WHITE, first)
    assert end.detail == f"Black played illegal move '{first}': cell {first} is occupied"
    assert len(table.state.moves) == 1  # the illegal move is not among the moves played
    assert table.state.phase is Phase.OVER


def test_words_that_are_no_move_are_illegal():
    end = over(Table(new_state()).answer("hello"))
    assert end.termination is M.ILLEGAL_MOVE and end.winner is BLACK
    assert end.detail.startswith("White played illegal move 'hello'")


@pytest.mark.parametrize("text", ["\ufffd\ufffd", "a\x01", "caf\u00e9"])
def test_a_move_outside_printable_ascii_is_a_malformed_bestmove(text):
    end = over(Table(new_state()).answer(text))
    assert (end.termination, end.winner, end.illegal_move) == (M.MALFORMED_BESTMOVE, BLACK, text)
    assert end.detail == f"White sent a malformed bestmove {text!r}"


@pytest.mark.parametrize("fault, termination, illegal", [
    (Fault("crash", "exited (status 3)", 5.0), M.CRASH, None),
    (Fault("crash", "closed its output but is still running", 5.0), M.CRASH, None),
    (Fault("stall", "did not answer stop within 0.5 s", 5.0), M.STALL, None),
    (Fault("protocol-error", "wrote a line longer than 1048576 bytes", 5.0), M.PROTOCOL_ERROR, None),
    (Fault("protocol-error", "wrote 'readyok': readyok without isready", 5.0, "readyok"),
     M.PROTOCOL_ERROR, None),
    (Fault("protocol-error", "wrote 'bestmove a2': bestmove 'a2' while not searching", 5.0,
           "bestmove", searching=False, line="bestmove a2"), M.PROTOCOL_ERROR, None),
    (Fault("protocol-error", "wrote 'bestmove': the move is missing", 5.0, "bestmove",
           searching=True, line="bestmove"), M.MALFORMED_BESTMOVE, "bestmove"),
])
@pytest.mark.parametrize("faulty", [WHITE, BLACK])
def test_a_fault_loses_for_its_engine_whoever_moves(fault, termination, illegal, faulty):
    """A fault ends the game at once, also the waiting engine's (it is not
    its turn: its opponent's search is not waited for)."""
    state = new_state()
    assert state.start().color is WHITE
    event = Faulted(white=fault) if faulty is WHITE else Faulted(black=fault)
    end = over(state.receive(event))
    assert (end.termination, end.winner.other, end.illegal_move) == (termination, faulty, illegal)
    assert end.detail == ("White " if faulty is WHITE else "Black ") + fault.detail


def test_the_first_fault_in_time_decides():
    """specs/match.md §Terminations, precedence."""
    state = new_state()
    state.start()
    early, late = Fault("crash", "exited (status 4)", 3.0), Fault("protocol-error", "wrote junk", 4.0)
    assert over(state.receive(Faulted(white=late, black=early))).winner is WHITE
    state = new_state()
    state.start()
    assert over(state.receive(Faulted(white=early, black=late))).winner is BLACK


def test_a_fault_read_with_the_bestmove_voids_it():
    """Two bestmove lines in one write: the fault is reported with (before) the
    move, which is not played; the opponent is never asked."""
    state = new_state()
    state.start()
    fault = Fault("protocol-error", "wrote 'bestmove b1': bestmove 'b1' while not searching",
                  1.5, "bestmove", line="bestmove b1")
    end = over(state.receive(Faulted(white=fault)))
    assert end.termination is M.PROTOCOL_ERROR and end.winner is BLACK
    with pytest.raises(MatchStateError):
        state.receive(BestMove(Reply("a1", 1.5), 1.0))
    assert state.moves == [] and state.phase is Phase.ERROR


def test_a_move_that_ended_the_game_stands_against_a_later_fault():
    rng = random.Random(2)
    table = Table(new_state())
    while isinstance(table.action, Go):
        table.answer(rng.choice(table.state.position.legal_moves()))
    end = over(table.action)
    assert table.state.receive(Faulted(black=Fault("crash", "exited", table.now + 1))) is end
    assert table.state.receive(Faulted(white=Fault("crash", "exited", table.now + 1))) is end


# --- clocks and deadlines (specs/match.md §Time controls) -------------------------------------


def test_a_bestmove_past_the_clock_is_a_time_forfeit():
    table = Table(new_state(tc="0.4+0"))
    end = over(table.answer(seconds=0.5))
    assert (end.termination, end.winner) == (M.TIME_FORFEIT, BLACK)
    assert end.detail == "White lost on time: bestmove after 0.500 s, allowed 0.400 s"


def test_the_margin_is_grace_not_debt():
    table = Table(new_state(tc="1+0.1", margin=200))
    assert table.action.seconds == pytest.approx(1.2)
    table.answer(seconds=1.15)  # in the margin: the clock goes to 0, then the increment
    assert table.state.moves[0].clock_ms == 100
    table.answer(seconds=0.1)
    go = table.action
    assert go.color is WHITE and go.limits.time_ms == 100 and go.seconds == pytest.approx(0.3)
    end = over(table.answer(seconds=0.31))
    assert end.termination is M.TIME_FORFEIT and "allowed 0.300 s" in end.detail


def test_increment_after_the_move_and_both_clocks_in_the_go():
    table = Table(new_state(tc="60+1"))
    table.answer(seconds=2.5)
    assert table.state.moves[0].clock_ms == 58_500  # 60 - 2.5 + 1
    go = table.action
    assert (go.limits.time_ms, go.limits.opponent_time_ms) == (60_000, 58_500)
    table.answer(seconds=1)
    assert table.action.limits.time_ms == 58_500 and table.action.limits.opponent_time_ms == 60_000


def test_moves_to_go_counts_down_and_the_period_restarts():
    table = Table(new_state(tc="2/10"))
    assert table.action.limits.moves_to_go == 2
    table.play(2, seconds=1)
    assert table.action.limits.moves_to_go == 1
    table.play(2, seconds=1)
    assert table.action.limits.moves_to_go == 2
    assert table.state.moves[2].clock_ms == 18_000  # 10 - 1 - 1 + 10


def test_no_bestmove_by_the_deadline_of_a_clock_is_a_time_forfeit():
    state = new_state(tc="0.4+0")
    go = state.start()
    assert go.seconds == pytest.approx(0.4)
    end = over(state.receive(DEADLINE_PASSED))
    assert (end.termination, end.winner) == (M.TIME_FORFEIT, BLACK)
    assert end.detail == "White lost on time: no bestmove within 0.400 s"


def test_a_movetime_flags_at_its_deadline_plus_margin():
    state = new_state(tc="st=0.2", margin=50)
    go = state.start()
    assert go.limits.movetime_ms == 200 and go.limits.time_ms is None
    assert go.seconds == pytest.approx(0.25)
    end = over(state.receive(DEADLINE_PASSED))
    assert end.detail == "White lost on time: no bestmove within 0.250 s"
    table = Table(new_state(tc="st=0.2"))
    assert over(table.answer(seconds=0.21)).termination is M.TIME_FORFEIT
    table = Table(new_state(tc="st=0.2"))
    assert isinstance(table.answer(seconds=0.19), Go) and table.state.moves[0].clock_ms is None


def test_a_mover_disconnected_at_its_deadline_loses_by_disconnect():
    """specs/wire.md §Disconnect and resume: the match decides the ending of
    a remote engine away when its time ran out; the rest is DeadlinePassed's."""
    state = new_state(tc="0.4+0")
    state.start()
    end = over(state.receive(Disconnected("far")))
    assert (end.termination, end.winner) == (M.DISCONNECT, BLACK)
    assert end.detail == "far was disconnected and did not come back before its time ran out"
    state = new_state(tc="inf", stall_ms=500, grace=0.7)
    state.start()
    assert state.receive(Disconnected("far")) == Stop(WHITE, 0.7)  # no clock: stop, then a stall
    assert over(state.receive(Disconnected("far"))).termination is M.STALL


def test_a_remote_replys_lag_figures_are_kept_in_its_ply():
    state = new_state()
    state.start()
    state.receive(BestMove(Reply(state.position.legal_moves()[0], 100.2), 100.0, lag=(12, 3)))
    state.receive(BestMove(Reply(state.position.legal_moves()[0], 100.4), 100.3))
    remote, local = state.moves
    assert (remote.rtt_ms, remote.comp_ms) == (12, 3) and remote.to_dict()["comp_ms"] == 3
    assert (local.rtt_ms, local.comp_ms) == (None, None) and "comp_ms" not in local.to_dict()


@pytest.mark.parametrize("tc", ["depth=4", "nodes=1000", "inf"])
def test_without_a_clock_the_stall_limit_means_stop_then_stall(tc):
    state = new_state(tc=tc, stall_ms=500, grace=0.7)
    go = state.start()
    assert go.seconds == 0.5
    stop = state.receive(DEADLINE_PASSED)
    assert stop == Stop(WHITE, 0.7) and state.phase is Phase.STOPPING
    end = over(state.receive(DEADLINE_PASSED))
    assert (end.termination, end.winner) == (M.STALL, BLACK)
    assert end.detail == "White stalled: no bestmove within the 0.5 s stall limit nor 0.7 s after stop"


def test_a_bestmove_after_stop_is_played():
    """`inf` means "think until the stall limit": the bestmove after stop counts."""
    state = new_state(tc="inf", stall_ms=500)
    go = state.start()
    state.receive(DEADLINE_PASSED)
    move = state.position.legal_moves()[0]
    nxt = state.receive(BestMove(Reply(move, 10.6), 10.0))
    assert isinstance(nxt, Go) and nxt.color is BLACK and nxt.limits.infinite
    assert state.moves[0].time_ms == 600 and go.limits.infinite


def test_a_fault_while_stopping_is_the_faults():
    state = new_state(tc="depth=3", stall_ms=500)
    state.start()
    state.receive(DEADLINE_PASSED)
    end = over(state.receive(Faulted(white=Fault("crash", "closed its input", 1.0))))
    assert end.termination is M.CRASH and end.winner is BLACK


def test_a_late_bestmove_without_a_clock_is_not_a_forfeit():
    table = Table(new_state(tc="depth=2", stall_ms=500))
    assert isinstance(table.answer(seconds=0.6), Go)


def test_each_search_has_its_own_deadline():
    """Per-engine time controls: the mover's decides its go and its deadline,
    whatever the other side's (a 0.2 s movetime beside a 10 s clock)."""
    table = Table(new_state(white_tc="st=0.2", black_tc="10+0"))
    assert table.action.seconds == pytest.approx(0.2) and table.action.limits.movetime_ms == 200
    go = table.answer(seconds=0.01)
    assert go.seconds == pytest.approx(10.0) and go.limits.time_ms == 10_000
    assert go.limits.opponent_time_ms is None  # White has no clock to show
    go = table.answer(seconds=0.4)
    assert go.seconds == pytest.approx(0.2)
    assert table.answer(seconds=0.01).seconds == pytest.approx(9.6)


def test_per_engine_time_controls_without_clocks():
    table = Table(new_state(white_tc="st=5", black_tc="depth=2", stall_ms=3000))
    go = table.answer()
    assert go.limits.depth == 2 and go.limits.time_ms is None and go.seconds == 3.0
    table.answer()
    assert all(m.clock_ms is None for m in table.state.moves)


# --- adjudication (specs/match.md §Terminations, max-plies) ------------------------------------


def test_max_plies_without_scores_is_a_draw():
    table = Table(new_state(maxplies=4))
    end = over(table.play(4))
    assert (end.termination, end.winner) == (M.MAX_PLIES, None)
    assert end.detail == "adjudicated a draw after 4 plies"
    assert len(table.state.moves) == 4


def test_max_plies_counts_the_opening():
    opening = ["b1", "b2", "c1"]
    table = Table(new_state(opening=opening, maxplies=5))
    over(table.play(2))
    assert len(table.state.moves) == 2 and table.state.plies == 5
    assert over(new_state(opening=opening, maxplies=3).start()).termination is M.MAX_PLIES


def scored_moves(seed: int = 0) -> list[str]:
    """Talisman moves after which the game goes on with unequal scores."""
    rng = random.Random(seed)
    position, moves = get_game("talisman").start(), []
    while True:
        if position.outcome() is not None:
            position, moves = get_game("talisman").start(), []
        moves.append(rng.choice(position.legal_moves()))
        position = position.play(moves[-1])
        white, black = position.scores()
        if position.outcome() is None and white != black:
            return moves


def test_max_plies_with_scores_gives_the_win_to_the_higher():
    moves = scored_moves()
    white, black = get_game("talisman").position(None, moves).scores()
    table = Table(new_state("talisman", opening=moves[:-2], maxplies=len(moves)))
    table.answer(moves[-2])
    end = over(table.answer(moves[-1]))
    winner = WHITE if white > black else BLACK
    assert (end.termination, end.winner) == (M.MAX_PLIES, winner)
    side = "White" if winner is WHITE else "Black"
    assert end.detail == f"adjudicated a win for {side} after {len(moves)} plies on scores {white}-{black}"


def test_the_rules_ending_comes_before_max_plies():
    rng = random.Random(3)
    position, moves = get_game("troll").start(), []
    while position.outcome() is None:
        moves.append(rng.choice(position.legal_moves()))
        position = position.play(moves[-1])
    table = Table(new_state(opening=moves[:-1], maxplies=len(moves)))
    assert over(table.answer(moves[-1])).termination is position.outcome().termination


# --- score adjudication (specs/match.md §Adjudication) ---------------------------------------


def adjudicated(resign: str | None = None, draw: str | None = None, **options) -> Table:
    return Table(new_state(adjudication=Adjudication.parse(resign, draw), **options))


def cp(value: int) -> dict:
    return {"score_cp": value, "depth": 3}


def test_resign_after_movecount_moves_at_or_below_minus_score():
    """One-sided: White's own score at -600 or worse on 3 moves in a row loses;
    Black's scores do not matter."""
    table = adjudicated("movecount=3 score=600")
    for white_score in (-650, -600):
        assert isinstance(table.answer(info=cp(white_score)), Go)
        assert isinstance(table.answer(info=cp(-5000)), Go)  # Black thinks it is lost too: one-sided
    end = over(table.answer(info={"score_mate": -4}))  # a mate counts beyond any threshold
    assert (end.termination, end.winner) == (M.ADJUDICATED_RESIGN, BLACK)
    assert end.detail == ("adjudicated a loss for White (resign): its score over its last 3 move(s) "
                          "was cp -650, cp -600, mate -4, at most -600 cp")
    assert len(table.state.moves) == 5 and str(table.state.moves[-1].score) == "mate -4"


@pytest.mark.parametrize("breaker", [cp(-599), {}, {"score_winprob": 0.5}])
def test_a_move_above_the_threshold_or_without_a_score_breaks_the_run(breaker):
    table = adjudicated("movecount=2 score=600")
    table.answer(info=cp(-900))
    table.answer()
    table.answer(info=breaker)  # White's second move does not complete the run
    table.answer()
    assert isinstance(table.answer(info=cp(-900)), Go)  # a new run of one
    table.answer()
    end = over(table.answer(info=cp(-900)))
    assert end.termination is M.ADJUDICATED_RESIGN and end.winner is BLACK


def test_resign_twosided_needs_both_engines_to_agree():
    table = adjudicated("movecount=2 score=300 twosided=true")
    table.answer(info=cp(-400))  # White: lost
    table.answer(info=cp(100))  # Black: not sure
    table.answer(info=cp(-400))
    assert isinstance(table.answer(info=cp(350)), Go)  # Black has one move at +300 or more
    table.answer(info=cp(-500))
    end = over(table.answer(info={"score_winprob": 0.99}))  # Black's second: 798 cp
    assert (end.termination, end.winner) == (M.ADJUDICATED_RESIGN, WHITE.other)
    assert end.detail == ("adjudicated a loss for White (resign): its score over its last 2 move(s) "
                          "was cp -400, cp -500, at most -300 cp, and Black's was cp 350, winprob 0.99, "
                          "at least +300 cp")


def test_draw_after_movenumber_with_both_sides_near_zero():
    """--draw movenumber=3 movecount=2 score=20: no verdict before 6 plies,
    then one once each side's last 2 moves are within 20 cp of zero."""
    table = adjudicated(draw="movenumber=3 movecount=2 score=20")
    for score in (0, 5, -10, 20):  # 4 plies: within, but before move 3
        assert isinstance(table.answer(info=cp(score)), Go)
    assert isinstance(table.answer(info=cp(25)), Go)  # ply 5, White: out of the band
    table.answer(info=cp(0))
    table.answer(info=cp(-20))
    assert isinstance(table.answer(info={"score_winprob": 0.51}), Go)  # ~7 cp; White's run has cp 25
    end = over(table.answer(info=cp(3)))
    assert (end.termination, end.winner) == (M.ADJUDICATED_DRAW, None)
    assert end.detail == ("adjudicated a draw: scores within 20 cp of zero over each side's last 2 "
                          "move(s) (White cp -20, cp 3; Black cp 0, winprob 0.51), from move 3")


def test_draw_counts_the_opening_plies_for_movenumber():
    table = adjudicated(draw="movenumber=2 movecount=1 score=0", opening=["b1", "b2", "c1"])
    assert isinstance(table.answer(info=cp(0)), Go)  # ply 4 is Black's first move: White has none yet
    end = over(table.answer(info=cp(0)))
    assert end.termination is M.ADJUDICATED_DRAW


def test_adjudication_is_off_by_default_and_comes_before_maxplies():
    table = Table(new_state(maxplies=6))
    for _ in range(5):
        assert isinstance(table.answer(info=cp(-10_000)), Go)
    assert over(table.answer(info=cp(-10_000))).termination is M.MAX_PLIES
    table = adjudicated("movecount=1 score=100", maxplies=1)
    assert over(table.answer(info=cp(-100))).termination is M.ADJUDICATED_RESIGN


def test_a_rule_ending_comes_before_adjudication():
    rng = random.Random(3)
    position, moves = get_game("troll").start(), []
    while position.outcome() is None:
        moves.append(rng.choice(position.legal_moves()))
        position = position.play(moves[-1])
    table = adjudicated("movecount=1 score=1", "movenumber=0 movecount=1 score=100000",
                        opening=moves[:-1])
    end = over(table.answer(moves[-1], info=cp(-5000)))
    assert end.termination is position.outcome().termination


def test_scores_on_one_scale():
    """specs/match.md §Adjudication: cp as given, mate as +-MATE_CP, winprob
    by the logistic 400 * log10(p / (1 - p)), clamped at 0.001 and 0.999."""
    assert centipawns(Score(ScoreKind.CP, -35)) == -35
    assert centipawns(Score(ScoreKind.MATE, 3)) == MATE_CP
    assert centipawns(Score(ScoreKind.MATE, -1)) == -MATE_CP
    assert centipawns(Score(ScoreKind.WINPROB, 0.5)) == 0
    assert centipawns(Score(ScoreKind.WINPROB, 0.76)) == pytest.approx(200.2, abs=0.1)
    assert centipawns(Score(ScoreKind.WINPROB, 1)) == pytest.approx(1199.8, abs=0.1)
    assert centipawns(Score(ScoreKind.WINPROB, 0)) == pytest.approx(-1199.8, abs=0.1)


@pytest.mark.parametrize("resign, draw, expected", [
    ("movecount=3 score=600", None, (ResignRule(3, 600), None)),
    ("score=600  movecount=3 twosided=true", None, (ResignRule(3, 600, True), None)),
    (None, "movenumber=40 movecount=8 score=10", (None, DrawRule(40, 8, 10))),
    (None, "movenumber=0 movecount=1 score=0", (None, DrawRule(0, 1, 0))),
])
def test_adjudication_options_parse_and_print_canonically(resign, draw, expected):
    rules = Adjudication.parse(resign, draw)
    assert (rules.resign, rules.draw) == expected
    for rule, kind in ((rules.resign, ResignRule), (rules.draw, DrawRule)):
        if rule is not None:
            assert kind.parse(str(rule)) == rule
    assert not Adjudication() and Adjudication.parse() == Adjudication()


@pytest.mark.parametrize("resign, draw, words", [
    ("movecount=3", None, "--resign 'movecount=3': score= is missing"),
    ("movecount=3 score=600 twosided=yes", None, "twosided must be true or false, not 'yes'"),
    ("movecount=0 score=600", None, "movecount must be from 1 to"),
    ("movecount=2 score=-5", None, "score must be from 1 to"),
    ("movecount=2 score=1e3", None, "score must be a whole number, not '1e3'"),
    ("movecount=2 score=5 movecount=3", None, "movecount given twice"),
    ("movecount=2 score=5 hash=1", None, "unknown key 'hash' (expected movecount, score, twosided)"),
    ("3 600", None, "'3' is not key=value"),
    (None, "movecount=8 score=10", "--draw 'movecount=8 score=10': movenumber= is missing"),
    (None, "movenumber=40 movecount=8 score=99999999999999999999", "score must be a whole number"),
])
def test_bad_adjudication_options_say_what_and_where(resign, draw, words):
    with pytest.raises(AdjudicationError) as info:
        Adjudication.parse(resign, draw)
    assert words in str(info.value)


# --- the state's own errors -----------------------------------------------------------------


def test_events_that_do_not_fit_are_errors():
    state = new_state()
    with pytest.raises(MatchStateError, match="BestMove in phase ready"):
        state.receive(BestMove(Reply("d5", 1.0), 0.5))
    assert state.phase is Phase.ERROR
    with pytest.raises(MatchStateError, match="unusable"):
        state.receive(Faulted(white=Fault("crash", "exited", 1.0)))
    state = new_state()
    state.start()
    with pytest.raises(MatchStateError, match="start"):
        state.start()
    state = new_state(tc="0.1+0")
    state.start()
    state.receive(DEADLINE_PASSED)
    with pytest.raises(MatchStateError, match="DeadlinePassed in phase over"):
        state.receive(DEADLINE_PASSED)
    state = new_state()
    state.start()
    with pytest.raises(MatchStateError, match="without a fault"):
        state.receive(Faulted())


# --- the record (arbiter/record.py; specs/match.md §The game record) -------------------------


@pytest.mark.parametrize("text, kind, value", [
    ("cp 35", ScoreKind.CP, 35), ("cp -1234", ScoreKind.CP, -1234), ("mate 3", ScoreKind.MATE, 3),
    ("mate -2", ScoreKind.MATE, -2), ("winprob 0.62", ScoreKind.WINPROB, 0.62),
    ("winprob 1e-05", ScoreKind.WINPROB, 1e-05), ("winprob 0", ScoreKind.WINPROB, 0.0),
])
def test_a_score_is_its_text_and_back(text, kind, value):
    score = Score.parse(text)
    assert (score.kind, score.value) == (kind, value)
    assert str(score) == text and Score.parse(str(score)) == score
    assert score != text and Score.parse(text) == score  # a score is not its text, it reads from it
    assert hash(score) == hash(Score.parse(text))


@pytest.mark.parametrize("text", ["cp", "cp 3.5", "mate x", "winprob -0.5", "winprob nan", "elo 3", 35, None])
def test_a_bad_score_is_refused(text):
    with pytest.raises(ValueError, match="bad score"):
        Score.parse(text)


def test_the_score_of_an_info_mate_first_and_winprob_as_written():
    assert Score.from_info({"score_cp": 10, "score_mate": 2}) == Score(ScoreKind.MATE, 2)
    assert str(Score.from_info({"score_winprob": 0.123456789})) == "winprob 0.123457"
    assert Score.from_info({"score_winprob": 0.123456789}) == Score.parse("winprob 0.123457")
    assert Score.from_info({"depth": 3}) is None


def test_a_ply_takes_its_score_as_text_and_writes_it_as_text():
    ply = Ply("d5", "white", 12, score="cp 35")
    assert ply.score == Score(ScoreKind.CP, 35)
    assert ply.color is Color.WHITE and ply.to_dict()["color"] == "white"  # a colour is its text
    assert json.loads(json.dumps(ply.to_dict()))["color"] == "white"
    assert ply.to_dict()["score"] == "cp 35"
    assert Ply.from_dict(ply.to_dict()) == ply
    with pytest.raises(ValueError, match="bad score"):
        Ply("d5", "white", 12, score="cp x")


def test_a_game_record_round_trips_through_json_with_todays_text():
    record = GameRecord(
        game="troll", white="a", black="b", result="1-0", termination=M.TIME_FORFEIT.value,
        termination_detail="Black lost on time: no bestmove within 0.400 s", opening_moves=["b1"],
        moves=[Ply("c1", "black", 5, 900, 4, Score.parse("winprob 0.62"), 3, 100, ["c1"])],
        time_control={"white": "1+0", "black": "1+0"}, scores=None)
    data = json.loads(json.dumps(record.to_dict()))
    assert data["moves"][0]["score"] == "winprob 0.62" and data["termination"] == "time-forfeit"
    assert list(data) == list(GameRecord.__dataclass_fields__)  # the fields in order, as before
    assert GameRecord.from_dict(data) == record
    assert record.plies == 2 and record.all_moves == ["b1", "c1"]
    data["moves"][0]["score"] = "cp many"
    with pytest.raises(ValueError, match=r"move 1: bad score 'cp many'"):
        GameRecord.from_dict(data)


def test_termination_values_are_unchanged():
    assert [t.value for t in MatchTermination] == [
        "illegal-move", "malformed-bestmove", "time-forfeit", "crash", "stall", "protocol-error",
        "max-plies", "adjudicated-resign", "adjudicated-draw", "handshake-failure", "disconnect"]
    assert str(M.STALL) == "stall" and f"{M.CRASH}" == "crash" and M.CRASH == "crash"

"""The referee's verdict on a game read from a record file, and the record
it gives back (``specs/records.md`` §Replay, §Reading).

:func:`replay` plays a parsed game (:class:`~arbiter.pgn.ParsedGame`)
through the referee and returns a :class:`ReplayReport`: OK, the first
illegal move, or a result the final position contradicts.
:func:`position_at` is the position after a number of plies (``arbiter
show``); :func:`to_record` turns a game that replays OK back into a
:class:`~arbiter.record.GameRecord` for the database.  Writing records as
text is :mod:`arbiter.records`; nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arbiter.games import (
    RESULTS,
    Game,
    GameError,
    IllegalMoveError,
    Position,
    Result,
    get_game,
    result_for,
)
from arbiter.pgn import (
    UNFINISHED,
    MoveData,
    ParsedGame,
    RecordSyntaxError,
    is_number,
)
from arbiter.record import GameRecord, Ply, Score, as_result
from arbiter.records import (
    ARBITER_TERMINATION,
    MATCH_TERMINATIONS,
    MAX_PLIES,
    PGN_TERMINATIONS,
    RULE_TERMINATIONS,
    SIDE_TO_MOVE_LOSES,
    START_TAG,
    precise_termination,
    standard_termination,
)

__all__ = ["ReplayReport", "replay", "syntax_report", "position_at", "to_record"]


@dataclass
class ReplayReport:
    """The verdict on one game of a record file.

    ``ok`` is True when every move is legal and the result agrees with the
    final position (and the termination).  Otherwise ``error`` is one line
    naming file, line, game and what was wrong; ``kind`` classifies it:
    ``syntax``, ``tag``, ``unknown-game``, ``illegal-move``, ``result``."""

    filename: str
    number: int
    line: int
    ok: bool
    game: str | None = None
    white: str | None = None
    black: str | None = None
    result: str | None = None
    termination: str | None = None
    plies: int = 0
    kind: str | None = None
    error: str | None = None
    ply: int | None = None  # the illegal move's ply (1-based, from the movetext's first move)
    move: str | None = None
    final_fen: str | None = None
    skipped_variations: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}

    def summary(self) -> str:
        """One line for the CLI."""
        who = f"{self.white or '?'} - {self.black or '?'}"
        if self.ok:
            note = f", {self.skipped_variations} variation(s) skipped unchecked" if self.skipped_variations else ""
            return (f"game {self.number}: OK ({self.game}, {who}, {self.result} "
                    f"{self.termination or ''}, {self.plies} plies{note})").replace(" ,", ",")
        return str(self.error)


class _Bad(Exception):
    def __init__(self, kind: str, line: int, message: str, **extra: Any):
        self.kind = kind
        self.line = line
        self.message = message
        self.extra = extra


def syntax_report(error: RecordSyntaxError) -> ReplayReport:
    """A parse error as a per-game verdict."""
    return ReplayReport(
        filename=error.filename, number=error.game_number, line=error.line, ok=False,
        kind="syntax", error=str(error),
    )


def replay(parsed: ParsedGame) -> ReplayReport:
    """Play the game through the referee and check its tags and result."""
    report = ReplayReport(
        filename=parsed.filename, number=parsed.number, line=parsed.line, ok=False,
        white=parsed.tags.get("White"), black=parsed.tags.get("Black"),
        result=parsed.result, termination=_termination_tag(parsed.tags)[1],
        plies=len(parsed.moves), skipped_variations=parsed.skipped_variations,
    )
    try:
        _, _, position, _ = _replay(parsed)
    except _Bad as bad:
        report.kind = bad.kind
        report.error = f"{parsed.where(bad.line)}: {bad.message}"
        report.line = bad.line
        report.game = parsed.tags.get("Game")
        for key, value in bad.extra.items():
            setattr(report, key, value)
        return report
    report.ok = True
    report.game = position.game.name
    report.final_fen = position.fen()
    return report


def _resolve_game(parsed: ParsedGame) -> Game:
    name = parsed.tags.get("Game")
    if name is None:
        raise _Bad("unknown-game", parsed.line,
                   "no Game tag (troll, atoll, morris or talisman): the game cannot be replayed")
    try:
        return get_game(name)
    except GameError as exc:
        raise _Bad("unknown-game", parsed.tag_lines["Game"], f"tag Game: {exc}") from None


def _start(parsed: ParsedGame, game: Game) -> Position:
    """The start position: ``StartPosition``, or the old form ``FEN`` (with
    ``SetUp``, checked as PGN has it), or the game's start."""
    tags, lines = parsed.tags, parsed.tag_lines
    if START_TAG in tags and "FEN" in tags:
        raise _Bad("tag", lines["FEN"], f"tags {START_TAG} (line {lines[START_TAG]}) and FEN "
                   "both give a start position: give one")
    name = START_TAG if START_TAG in tags else "FEN"
    fen = tags.get(name)
    setup = tags.get("SetUp")
    if setup is not None and setup not in ("0", "1"):
        raise _Bad("tag", lines["SetUp"], f'tag SetUp must be "0" or "1", not {setup!r}')
    if fen is None:
        if setup == "1":
            raise _Bad("tag", lines["SetUp"],
                       f'tag SetUp is "1" but there is no {START_TAG} (or FEN) tag')
        return game.start()
    if setup == "0":
        raise _Bad("tag", lines["SetUp"], f'tag SetUp is "0" but a {name} tag is given')
    try:
        return game.from_fen(fen)
    except GameError as exc:
        raise _Bad("tag", lines[name], f"tag {name}: {exc}") from None


def _replay(parsed: ParsedGame) -> tuple[Game, Position, Position, list[str]]:
    """(game, start position, final position, canonical moves) or _Bad."""
    game = _resolve_game(parsed)
    _check_tags(parsed)
    position = start = _start(parsed, game)
    canonical: list[str] = []
    seen_engine_move = False
    for ply, move in enumerate(parsed.moves, start=1):
        if move.book and seen_engine_move:
            raise _Bad("syntax", move.line,
                       f"ply {ply}: move {move.text!r} is marked {{book}} after moves played by "
                       "engines (the opening must come first)", ply=ply, move=move.text)
        seen_engine_move |= not move.book
        try:
            text = position.parse_move(move.text)
            position = position.play(text)
        except IllegalMoveError as exc:
            raise _Bad("illegal-move", move.line,
                       f"ply {ply} ({_ply_name(position)}): illegal move {move.text!r}: "
                       f"{exc.reason}", ply=ply, move=move.text) from None
        canonical.append(text)
    _check_counts(parsed)
    _check_result(parsed, position)
    return game, start, position, canonical


def _check_counts(parsed: ParsedGame) -> None:
    """Tags that must agree with the movetext (checked after the moves, so
    that an illegal move is reported rather than its consequence)."""
    tags, lines = parsed.tags, parsed.tag_lines
    count = tags.get("PlyCount")
    if count is not None and int(count) != len(parsed.moves):
        raise _Bad("tag", lines["PlyCount"],
                   f"tag PlyCount says {count} plies but the movetext has {len(parsed.moves)}")
    result = tags.get("Result")
    if result is not None and result != parsed.result:
        raise _Bad("result", parsed.result_line,
                   f"the result token {parsed.result} differs from the Result tag {result} "
                   f"(line {lines['Result']})")


def _ply_name(position: Position) -> str:
    """``move 4, black``: where the ply is in the movetext's numbering."""
    return f"move {position.ply // 2 + 1}, {position.to_move.value}"


def _check_tags(parsed: ParsedGame) -> None:
    tags, lines = parsed.tags, parsed.tag_lines
    result = tags.get("Result")
    if result is not None and result not in RESULTS and result != UNFINISHED:
        raise _Bad("tag", lines["Result"],
                   f"tag Result {result!r}: expected 1-0, 0-1, 1/2-1/2 or *")
    count = tags.get("PlyCount")
    if count is not None and not is_number(count):
        raise _Bad("tag", lines["PlyCount"], f"tag PlyCount {count!r} is not a number")
    ours = tags.get(ARBITER_TERMINATION)
    standard = tags.get("Termination")
    known = ", ".join(sorted(RULE_TERMINATIONS | MATCH_TERMINATIONS))
    if ours is not None:
        if ours not in RULE_TERMINATIONS | MATCH_TERMINATIONS:
            raise _Bad("tag", lines[ARBITER_TERMINATION],
                       f"tag {ARBITER_TERMINATION} {ours!r} is not a known reason ({known})")
        if standard is not None and standard.lower() not in (ours, standard_termination(ours)):
            raise _Bad("tag", lines["Termination"],
                       f"tag Termination {standard!r} disagrees with {ARBITER_TERMINATION} {ours!r} "
                       f"(line {lines[ARBITER_TERMINATION]}), whose PGN value is "
                       f"{standard_termination(ours)!r}")
    elif standard is not None and _termination_kind(standard) is _UNKNOWN:
        pgn = ", ".join(PGN_TERMINATIONS)
        raise _Bad("tag", lines["Termination"],
                   f"tag Termination {standard!r} is not a known reason ({known}; or PGN's {pgn})")


_UNKNOWN = object()


def _termination_tag(tags: Mapping[str, str]) -> tuple[str, str | None]:
    """The tag that names the game's ending and its value:
    ``ArbiterTermination`` when given, else ``Termination``."""
    name = ARBITER_TERMINATION if ARBITER_TERMINATION in tags else "Termination"
    return name, tags.get(name)


def _termination_kind(value: str) -> Any:
    """None for a rule ending, the match reason for a match ending, _UNKNOWN."""
    if value in RULE_TERMINATIONS:
        return None
    if value in MATCH_TERMINATIONS:
        return value
    if value.lower() in PGN_TERMINATIONS:
        return PGN_TERMINATIONS[value.lower()]
    return _UNKNOWN


def _check_result(parsed: ParsedGame, position: Position) -> None:
    """The result must be what the final position (and the Termination) gives.

    ``specs/records.md`` §Replay: a rule ending must be reached on the board;
    a match ending must not be (the rules would have ended the game first)."""
    result = parsed.result
    line = parsed.result_line
    outcome = position.outcome()
    tag, termination = _termination_tag(parsed.tags)
    kind = _termination_kind(termination) if termination else None
    if result == UNFINISHED:
        if outcome is not None:
            raise _Bad("result", line,
                       f"result * (unfinished) but the final position is over: {outcome.result} "
                       f"by {outcome.termination.value}")
        return
    if kind is None:  # the rules ended the game
        if outcome is None:
            raise _Bad("result", line,
                       f"result {result} but the final position is not over "
                       f"({position.to_move.value} to move) and Termination does not name a "
                       "match ending")
        if outcome.result != result:
            raise _Bad("result", line,
                       f"result {result} contradicts the final position: {outcome.result} by "
                       f"{outcome.termination.value}")
        if termination in RULE_TERMINATIONS and termination != outcome.termination.value:
            raise _Bad("result", parsed.tag_lines[tag],
                       f"tag {tag} {termination!r} but the final position ends by "
                       f"{outcome.termination.value}")
        return
    if outcome is not None:
        raise _Bad("result", line,
                   f"Termination {termination!r} but the final position was already over by the "
                   f"rules: {outcome.result} by {outcome.termination.value}")
    if kind in SIDE_TO_MOVE_LOSES:
        loser = position.to_move
        expected = result_for(loser.other)
        if result != expected:
            raise _Bad("result", line,
                       f"result {result} contradicts Termination {termination!r}: "
                       f"{loser.value}, to move, is the side that failed, so the result is {expected}")
    elif kind == MAX_PLIES:
        scores = position.scores()
        expected = Result.DRAW
        if scores is not None and scores[0] != scores[1]:
            expected = Result.WHITE_WINS if scores[0] > scores[1] else Result.BLACK_WINS
        if result != expected:
            why = f"scores {scores[0]}-{scores[1]}" if scores is not None else "no scores: a draw"
            raise _Bad("result", line,
                       f"result {result} contradicts Termination 'max-plies' ({why}): "
                       f"expected {expected}")


def position_at(parsed: ParsedGame, ply: int | None = None) -> Position:
    """The position after ``ply`` plies (0: the start; None: the end).

    Raises ValueError naming the game when the ply is out of range or a move
    before it is illegal."""
    try:
        game = _resolve_game(parsed)
        position = _start(parsed, game)
    except _Bad as bad:
        raise ValueError(f"{parsed.where(bad.line)}: {bad.message}") from None
    total = len(parsed.moves)
    if ply is None:
        ply = total
    if not 0 <= ply <= total:
        raise ValueError(f"{parsed.where()}: ply {ply} out of range: the game has {total} plies")
    for index, move in enumerate(parsed.moves[:ply], start=1):
        try:
            position = position.play(position.parse_move(move.text))
        except IllegalMoveError as exc:
            raise ValueError(
                f"{parsed.where(move.line)}: ply {index}: illegal move {move.text!r}: {exc.reason}"
            ) from None
    return position


# --------------------------------------------------------------------------
# Back to records
# --------------------------------------------------------------------------

def to_record(parsed: ParsedGame) -> GameRecord:
    """The record of a game that replays OK (ValueError with the replay's
    message otherwise).  Moves become canonical; an unfinished game (``*``)
    cannot become a record.  What the text does not hold stays empty: nodes,
    pv, engine-reported time, engine authors, and the clock of a move
    without ``[%clk]``; a move without our comment has time 0
    (``specs/records.md`` §Reading).  The message is
    :func:`replay`'s error when the game does not replay OK."""
    try:
        game, start, final, canonical = _replay(parsed)
    except _Bad as bad:
        raise ValueError(f"{parsed.where(bad.line)}: {bad.message}") from None
    if parsed.result == UNFINISHED:
        raise ValueError(f"{parsed.where(parsed.result_line)}: an unfinished game (*) is not a record")
    if parsed.source_record is not None:
        return parsed.source_record
    tags = parsed.tags
    book = sum(1 for move in parsed.moves if move.book)
    termination = _record_termination(precise_termination(tags, parsed.result), final)
    moves = []
    mover = start.to_move
    for index, (move, text) in enumerate(zip(parsed.moves, canonical, strict=False)):
        if index >= book:
            data = move.data or MoveData(None, None, None)
            score = None if data.score is None else Score.parse(data.score)
            moves.append(Ply(move=text, color=mover, time_ms=data.time_ms or 0,
                             clock_ms=data.clock_ms, score=score, depth=data.depth))
        mover = mover.other
    scores = final.scores()
    return GameRecord(
        game=game.name,
        white=tags.get("White", "?"),
        black=tags.get("Black", "?"),
        result=as_result(parsed.result),
        termination=termination,
        termination_detail=parsed.closing_comment or "",
        fen=tags.get(START_TAG, tags.get("FEN")),
        opening_moves=canonical[:book],
        moves=moves,
        time_control=_record_time_control(tags),
        start_time=tags.get("GameStartTime", ""),
        end_time=tags.get("GameEndTime", ""),
        final_fen=final.fen(),
        scores=list(scores) if scores is not None else None,
        maxplies=len(canonical) if termination == MAX_PLIES else None,
        white_id={"name": tags["WhiteEngine"]} if "WhiteEngine" in tags else {},
        black_id={"name": tags["BlackEngine"]} if "BlackEngine" in tags else {},
    )


def _record_termination(precise: str | None, final: Position) -> str:
    """Our named reason (:func:`~arbiter.records.precise_termination`), or,
    without one (``normal``, no tag), the rules' reason the final position
    gives."""
    if precise is not None:
        return precise
    outcome = final.outcome()
    assert outcome is not None  # replay checked it
    return outcome.termination.value


def _record_time_control(tags: Mapping[str, str]) -> dict[str, str]:
    """Our forms when the ``...ArbiterTimeControl`` tags are there, else the
    PGN ones (an old file's, or a hand-written one's), ``?`` and ``-`` unknown."""
    prefix = "Arbiter" if any(f"{side}ArbiterTimeControl" in tags
                              for side in ("", "White", "Black")) else ""
    both = tags.get(f"{prefix}TimeControl")
    values = {"white": tags.get(f"White{prefix}TimeControl", both),
              "black": tags.get(f"Black{prefix}TimeControl", both)}
    return {side: tc for side, tc in values.items() if tc not in (None, "?", "-")}


"""PGN-like game records: finished games to text and back (``specs/records.md``).

The text is PGN in everything but the move syntax, so that the tools engine
testers already use (grep, PGN viewers' tag tables, scripts) read it:

* :func:`write_game` / :func:`write_games` / :func:`append_game` turn
  :class:`~arbiter.record.GameRecord` objects into text, byte-for-byte the same
  every time for the same records and tags;
* :func:`parse_games` reads text (ours or written by hand) into
  :class:`ParsedGame` objects, raising :class:`RecordSyntaxError` that names
  the file, line and game; :func:`read_games` does the same but goes on after
  a broken game so that every game of a file gets a verdict;
* :mod:`arbiter.replay` plays a parsed game through the referee (the
  verdict on a file's game) and turns it back into a record;
* :mod:`arbiter.record_jsonl` is the lossless alternative: one record dict
  per line (:func:`~arbiter.record_jsonl.write_jsonl`,
  :func:`~arbiter.record_jsonl.parse_jsonl`), read as the games
  :func:`parsed_from_record` gives.

Nothing here does I/O except :func:`append_game`; the CLI lives in
``arbiter/cli/records.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from arbiter.clock import TimeControl, TimeControlError
from arbiter.games import (
    Position,
    Result,
    Termination,
    get_game,
)
from arbiter.pgn import (
    BOOK_COMMENT,
    MoveData,
    ParsedGame,
    ParsedMove,
    RecordSyntaxError,
    comment_text,
    escape_tag_value,
    format_move_comment,
    format_seconds,
    parse_games,
    read_games,
)
from arbiter.record import GameRecord, MatchTermination, Ply

__all__ = [
    "LINE_WIDTH", "TAG_ORDER", "RECORD_TAGS", "ParsedGame", "ParsedMove", "MoveData",
    "RecordSyntaxError", "write_game", "write_games", "append_game",
    "record_tags", "parse_games", "read_games",
    "context_tags",
    "parsed_from_record", "round_label", "export_tags", "pgn_time_control", "START_TAG",
    "TAGS_KEY", "ARBITER_TERMINATION", "standard_termination", "precise_termination",
]

#: Longest movetext line (PGN export format's limit).
LINE_WIDTH = 80

#: The Seven Tag Roster, always written first and in this order.
SEVEN_TAG_ROSTER = ("Event", "Site", "Date", "Round", "White", "Black", "Result")

#: The order of every tag we write; tags given by the caller that are not
#: listed here follow in the order given.
TAG_ORDER = SEVEN_TAG_ROSTER + (
    "Game",
    "StartPosition",
    "PlyCount",
    "TimeControl",
    "WhiteTimeControl",
    "BlackTimeControl",
    "ArbiterTimeControl",
    "WhiteArbiterTimeControl",
    "BlackArbiterTimeControl",
    "Termination",
    "ArbiterTermination",
    "GameStartTime",
    "GameEndTime",
    "WhiteEngine",
    "BlackEngine",
)

#: The tag of the position string a game started from (``specs/records.md``
#: §3): not ``FEN``, which chess readers parse as a chess position and, when
#: they cannot, skip the whole game.
START_TAG = "StartPosition"

#: The old form of the start position (``SetUp "1"`` and ``FEN``), still read.
LEGACY_START_TAGS = ("SetUp", "FEN")

#: Tags computed from the record; a caller cannot override them (the old
#: start-position tags included, so that an old file's stay out of the extras).
RECORD_TAGS = (frozenset(TAG_ORDER) | frozenset(LEGACY_START_TAGS)) - {
    "Event", "Site", "Date", "Round"}

#: Match terminations (``specs/records.md`` §Replay) after which the side to
#: move when the game stopped is the one that lost: it failed to produce a
#: legal move in time.
SIDE_TO_MOVE_LOSES = frozenset(t.value for t in (
    MatchTermination.ILLEGAL_MOVE, MatchTermination.MALFORMED_BESTMOVE,
    MatchTermination.TIME_FORFEIT, MatchTermination.STALL))

#: ``max-plies`` adjudication: scores decide where the game keeps them, else a draw.
MAX_PLIES = MatchTermination.MAX_PLIES.value

#: Every termination a record may hold: the rules' and the arbiter's (a game
#: whose engine failed its handshake is never played, so never recorded).
RULE_TERMINATIONS = frozenset(t.value for t in Termination)
MATCH_TERMINATIONS = frozenset(t.value for t in MatchTermination) - {
    MatchTermination.HANDSHAKE_FAILURE.value}

#: The tag of our named reason (``specs/records.md`` §6); ``Termination``
#: holds PGN's standard value, which chess tools read.
ARBITER_TERMINATION = "ArbiterTermination"

#: PGN's standard ``Termination`` value of each of our endings
#: (``specs/records.md`` §6): the rules' endings are ``normal``.
STANDARD_TERMINATIONS: dict[str, str] = {
    **{value: "normal" for value in sorted(RULE_TERMINATIONS)},
    MatchTermination.TIME_FORFEIT: "time forfeit",
    MatchTermination.ILLEGAL_MOVE: "rules infraction",
    MatchTermination.MALFORMED_BESTMOVE: "rules infraction",
    MatchTermination.PROTOCOL_ERROR: "rules infraction",
    MatchTermination.CRASH: "abandoned",
    MatchTermination.STALL: "abandoned",
    MatchTermination.DISCONNECT: "abandoned",
    MatchTermination.MAX_PLIES: "adjudication",
    MatchTermination.ADJUDICATED_RESIGN: "adjudication",
    MatchTermination.ADJUDICATED_DRAW: "adjudication",
}

#: Standard PGN Termination values read without an ``ArbiterTermination``
#: (files by other programs or by hand, ``specs/records.md`` §6), and what
#: they mean here for replay (None: the rules ended the game).  An
#: ``adjudication`` becomes ``adjudicated-draw`` or ``adjudicated-resign``
#: by its result (:func:`precise_termination`).
PGN_TERMINATIONS: dict[str, str | None] = {
    "normal": None,
    "time forfeit": MatchTermination.TIME_FORFEIT.value,
    "rules infraction": MatchTermination.ILLEGAL_MOVE.value,
    "abandoned": MatchTermination.CRASH.value,
    "adjudication": MatchTermination.ADJUDICATED_RESIGN.value,
}


def standard_termination(termination: str) -> str:
    """PGN's ``Termination`` value for one of our endings; ValueError for a
    value that is none of them."""
    try:
        return STANDARD_TERMINATIONS[termination]
    except KeyError:
        raise ValueError(f"unknown termination {termination!r}") from None


def precise_termination(tags: Mapping[str, str], result: str) -> str | None:
    """Our named reason a game's tags give, when they give one without the
    final position: ``ArbiterTermination``, else a ``Termination`` holding
    one of ours (a file written before ``ArbiterTermination``), else the
    reason a PGN value stands for (``time forfeit``: ``time-forfeit``;
    ``adjudication``: ``adjudicated-draw`` for a draw, else
    ``adjudicated-resign``).  None for ``normal`` or no tag (the rules'
    reason, which the final position says) and for an unknown value."""
    value = tags.get(ARBITER_TERMINATION, tags.get("Termination"))
    if value is None or value in RULE_TERMINATIONS | MATCH_TERMINATIONS:
        return value
    standard = value.lower()
    if standard == "adjudication" and result == Result.DRAW:
        return MatchTermination.ADJUDICATED_DRAW.value
    return PGN_TERMINATIONS.get(standard)


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------


def _start_position(record: GameRecord) -> Position:
    game = get_game(record.game)
    return game.from_fen(record.fen) if record.fen else game.start()


def _pgn_date(iso: str | None) -> str:
    """``2024-05-01T12:00:00Z`` -> ``2024.05.01`` (``????.??.??`` if unknown)."""
    m = re.match(r"^(\d{4})-(\d{2})-(\d{2})", iso or "")
    return f"{m[1]}.{m[2]}.{m[3]}" if m else "????.??.??"


def round_label(round_number: int, seq: int, games_per_round: int) -> str:
    """The Round tag ``round.game`` of a scheduled game: its round and its
    number (1-based) within the round in schedule order, from its place
    ``seq`` (0-based) in the whole schedule (``specs/records.md`` §3)."""
    if games_per_round < 1:
        return f"{round_number}.{seq + 1}"
    return f"{round_number}.{seq - (round_number - 1) * games_per_round + 1}"


def pgn_time_control(text: str | None) -> str:
    """Our time control (``specs/match.md``) in PGN's ``TimeControl`` syntax
    (``specs/records.md`` §3): the clock, ``moves/seconds+increment`` or
    ``seconds+increment`` with whole seconds (PGN's unit) and the increment
    as written; ``-`` when there is no clock (``inf``, ``depth=``,
    ``nodes=``); ``?`` when unknown or when PGN has no form for it (``st=``,
    a base time that is not whole seconds)."""
    if text is None:
        return "?"
    try:
        tc = TimeControl.parse(text)
    except TimeControlError:
        return "?"
    if tc.base_ms is None:
        return "?" if tc.movetime_ms is not None else "-"
    if tc.base_ms % 1000:
        return "?"
    pgn = str(tc.base_ms // 1000)
    if tc.moves:
        pgn = f"{tc.moves}/{pgn}"
    if tc.inc_ms:
        pgn += "+" + format_seconds(tc.inc_ms).removesuffix("s")
    return pgn


def record_tags(record: GameRecord, tags: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """The tag pairs of a record, in the written order.

    ``tags`` gives what the record does not know (``Event``, ``Site``,
    ``Round`` as ``round.game``, optionally ``Date``) plus any extra tags;
    tags computed from the record (White, Result, Game, ...) cannot be
    overridden."""
    given = dict(tags or {})
    for name in given:
        if name in RECORD_TAGS:
            raise ValueError(f"tag {name!r} comes from the record and cannot be given")
        if not re.fullmatch(r"[A-Za-z0-9_]+", name):
            raise ValueError(f"tag name {name!r}: letters, digits and _ only")
    values: dict[str, str] = {
        "Event": given.pop("Event", "?"),
        "Site": given.pop("Site", "?"),
        "Date": given.pop("Date", _pgn_date(record.start_time)),
        "Round": given.pop("Round", "?"),
        "White": record.white,
        "Black": record.black,
        "Result": record.result,
        "Game": record.game,
    }
    if record.fen:
        values[START_TAG] = record.fen
    values["PlyCount"] = str(len(record.opening_moves) + len(record.moves))
    values.update(_time_control_tags(record))
    values["Termination"] = standard_termination(record.termination)
    values[ARBITER_TERMINATION] = record.termination
    if record.start_time:
        values["GameStartTime"] = record.start_time
    if record.end_time:
        values["GameEndTime"] = record.end_time
    white_full, black_full = _full_names(record)
    if white_full:
        values["WhiteEngine"] = white_full
    if black_full:
        values["BlackEngine"] = black_full
    ordered = [(name, values[name]) for name in TAG_ORDER if name in values]
    return ordered + list(given.items())


def _time_control_tags(record: GameRecord) -> dict[str, str]:
    """``TimeControl`` in PGN's syntax, ``ArbiterTimeControl`` in ours (left
    out when unknown); ``White...``/``Black...`` pairs when the sides differ."""
    tc = record.time_control or {}
    white, black = tc.get("white"), tc.get("black")
    tags: dict[str, str] = {}
    if white == black:
        tags["TimeControl"] = pgn_time_control(white)
        if white is not None:
            tags["ArbiterTimeControl"] = str(white)
        return tags
    tags["WhiteTimeControl"] = pgn_time_control(white)
    tags["BlackTimeControl"] = pgn_time_control(black)
    for side, value in (("White", white), ("Black", black)):
        if value is not None:
            tags[f"{side}ArbiterTimeControl"] = str(value)
    return tags


def _full_names(record: GameRecord) -> tuple[str | None, str | None]:
    """The names the engines declared (``id name``), when known."""
    return (record.white_id or {}).get("name"), (record.black_id or {}).get("name")


def _score_text(ply: Ply) -> str | None:
    """A ply's score as the text forms write it (``cp 35``), None without one."""
    return None if ply.score is None else str(ply.score)


def movetext_tokens(record: GameRecord) -> list[str]:
    """The movetext as units kept on one line when they fit: a move (with
    its number) and its comment, the closing comment, the result."""
    start = _start_position(record)
    first = start.game.first
    number = start.ply // 2 + 1
    mover = start.to_move
    tokens: list[str] = []
    plies: list[tuple[str, str]] = [(m, BOOK_COMMENT) for m in record.opening_moves]
    plies += [(m.move, format_move_comment(_score_text(m), m.depth, m.time_ms, m.clock_ms))
              for m in record.moves]
    for index, (move, comment) in enumerate(plies):
        if mover is first:
            move = f"{number}. {move}"
        elif index == 0:
            move = f"{number}... {move}"
        tokens.append(f"{move} {{{comment}}}")
        if mover is not first:
            number += 1
        mover = mover.other
    detail = comment_text(record.termination_detail or "")
    if detail:
        tokens.append("{" + detail + "}")
    tokens.append(record.result)
    return tokens


def wrap_tokens(units: Sequence[str], width: int = LINE_WIDTH) -> list[str]:
    """Lines of at most ``width`` characters.  A unit (``12. d5``, a
    comment) goes whole onto a line when it fits; a unit longer than a line
    is broken at its spaces, as PGN allows inside comments."""
    lines: list[str] = []
    current = ""
    for unit in units:
        pieces = [unit] if len(unit) <= width else unit.split(" ")
        for piece in pieces:
            if not current:
                current = piece
            elif len(current) + 1 + len(piece) <= width:
                current += " " + piece
            else:
                lines.append(current)
                current = piece
    if current:
        lines.append(current)
    return lines


def write_game(record: GameRecord, tags: Mapping[str, str] | None = None) -> str:
    """One game as text, ending with a blank line (``specs/records.md`` §2):
    games are only ever concatenated, so ``cat a.pgn b.pgn`` is a record file
    (PGN readers end a game's movetext at a blank line)."""
    head = [f'[{name} "{escape_tag_value(value)}"]' for name, value in record_tags(record, tags)]
    return "\n".join(head + [""] + wrap_tokens(movetext_tokens(record))) + "\n\n"


def write_games(games: Iterable[tuple[GameRecord, Mapping[str, str] | None]]) -> str:
    """Several games, one after the other (each ends with its blank line)."""
    return "".join(write_game(record, tags) for record, tags in games)


def append_game(path: str | Path, record: GameRecord, tags: Mapping[str, str] | None = None) -> None:
    """Append one game to a record file (``--pgn FILE``), as each game ends.

    The text is written with one ``write`` call on a file opened for
    appending, so a concurrent reader sees whole games or a truncated last
    game, which the parser reports.  A file that does not end with a blank
    line (written by hand, or by an arbiter before games ended with one)
    gets the line breaks it lacks first."""
    text = write_game(record, tags).encode("utf-8")
    with open(path, "a+b") as out:
        size = out.seek(0, 2)
        if size:
            out.seek(max(size - 2, 0))
            tail = out.read(2)
            if tail.endswith(b"\n\n") or tail == b"\n":  # a blank line, or a file of one
                missing = b""
            else:
                missing = b"\n" if tail.endswith(b"\n") else b"\n\n"
            text = missing + text
        out.write(text)


#: The key of a stored record dict holding the tags an imported game came
#: with, so that exporting it again gives back the same tags.
TAGS_KEY = "tags"


def round_tag(tournament: dict[str, Any], row: dict[str, Any]) -> str:
    """The Round tag of a stored game (``specs/records.md`` §3)."""
    config = tournament.get("config") or {}
    rounds = config.get("rounds") or 1
    per_round = (tournament.get("total_games") or 0) // rounds
    return round_label(row["round"], row["seq"], per_round)


def export_tags(tournament: dict[str, Any], row: dict[str, Any]) -> dict[str, str]:
    """The tags a stored game does not hold in its record: Event (the
    tournament's name), Site (unknown), Round; an imported game keeps its own
    (the same text that ``tournament --pgn`` appends)."""
    stored = row["record"].get(TAGS_KEY)
    if isinstance(stored, dict):
        return {str(k): str(v) for k, v in stored.items()}
    return {"Event": tournament.get("name") or "?", "Site": "?",
            "Round": round_tag(tournament, row)}


def parsed_from_record(record: GameRecord, tags: Mapping[str, str] | None, filename: str,
                       number: int, line: int) -> ParsedGame:
    """A record as :func:`parse_games` would read its text (for replaying a
    JSONL file); every line number is ``line``."""
    context = {k: v for k, v in (tags or {}).items() if k not in RECORD_TAGS}
    pairs = record_tags(record, context)
    moves = [ParsedMove(text=m, line=line, book=True) for m in record.opening_moves]
    moves += [ParsedMove(text=m.move, line=line, data=MoveData(_score_text(m), m.depth, m.time_ms, m.clock_ms))
              for m in record.moves]
    return ParsedGame(
        filename=filename, number=number, line=line, tags=dict(pairs),
        tag_lines={name: line for name, _ in pairs}, moves=moves, result=record.result,
        result_line=line, closing_comment=record.termination_detail or None,
        source_record=record,
    )


#: Tags that :func:`to_record` turns into record fields; the rest are the
#: caller's (Event, Site, Round, Date, extras).
def context_tags(parsed: ParsedGame) -> dict[str, str]:
    """The tags a record does not hold (Event, Site, Date, Round, extras),
    to give back to :func:`write_game`."""
    return {k: v for k, v in parsed.tags.items() if k not in RECORD_TAGS}

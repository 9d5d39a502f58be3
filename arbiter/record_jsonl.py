"""JSONL record files: one game record a line, lossless (``specs/records.md`` §8 JSONL).

The other form of a record file beside the PGN-like text of
:mod:`arbiter.records`: :func:`jsonl_line` / :func:`write_jsonl` write a
record with the tags its PGN form would carry (and, for an export, the
tournament it was stored in, so that an import keeps tournaments apart);
:func:`iter_jsonl` / :func:`read_jsonl` read a file back as parsed games
(each as :func:`arbiter.records.parsed_from_record` gives it, so that
:mod:`arbiter.replay` checks it like a PGN game), every malformed or too
long line (:data:`MAX_JSONL_LINE_CHARS`) as its :class:`RecordSyntaxError`,
never a traceback; :func:`parse_jsonl` is the strict inverse of
:func:`write_jsonl`.  Nothing here does I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from arbiter.pgn import (
    MAX_RECORD_GAMES,
    MAX_TAGS,
    Line,
    LongLine,
    ParsedGame,
    RecordSyntaxError,
)
from arbiter.record import GameRecord
from arbiter.records import context_tags, parsed_from_record, record_tags

__all__ = ["jsonl_line", "write_jsonl", "MAX_JSONL_LINE_CHARS", "jsonl_text_lines", "read_jsonl",
           "iter_jsonl", "parse_jsonl"]


def jsonl_line(record: GameRecord, tags: Mapping[str, str] | None = None,
               tournament: Mapping[str, Any] | None = None) -> str:
    """One game as a JSONL line (with its newline): ``{"record": ...,
    "tags": ..., "tournament": {"id": N, "name": ...}}``, ``tags`` the pairs
    the PGN form writes, ``tournament`` (left out when None) the one the game
    was stored in, so that an import keeps tournaments apart."""
    line: dict[str, Any] = {"tags": dict(record_tags(record, tags)), "record": record.to_dict()}
    if tournament is not None:
        line["tournament"] = {"id": tournament["id"], "name": tournament["name"]}
    return json.dumps(line, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def write_jsonl(games: Iterable[tuple[GameRecord, Mapping[str, str] | None]]) -> str:
    """Several games as JSONL lines (:func:`jsonl_line`, without ``tournament``)."""
    return "".join(jsonl_line(record, tags) for record, tags in games)


#: Longest line of a JSONL record file, in characters: one line holds a whole
#: game's record (every ply with its eval, depth, nodes and a pv of up to 64
#: moves: under 1 KB a ply), so 4 MiB is a game of thousands of plies; a
#: longer line is refused unread (a 50 MB one once cost a minute and 4.7 GB).
MAX_JSONL_LINE_CHARS = 4 << 20


def jsonl_text_lines(text: str) -> Iterator[Line]:
    """The lines of a JSONL text (LF breaks only: JSON strings may hold
    U+2028 and the like raw), each one over :data:`MAX_JSONL_LINE_CHARS`
    as a :class:`~arbiter.pgn.LongLine`."""
    for number, line in enumerate(text.split("\n"), start=1):
        yield LongLine(number, len(line)) if len(line) > MAX_JSONL_LINE_CHARS else line


def read_jsonl(text: str, filename: str) -> list[ParsedGame | RecordSyntaxError]:
    """Every record of a JSONL text (:func:`iter_jsonl`)."""
    return list(iter_jsonl(jsonl_text_lines(text), filename))


def iter_jsonl(lines: Iterable[Line], filename: str) -> Iterator[ParsedGame | RecordSyntaxError]:
    """Every record of a JSONL file given line by line, as a parsed game (its
    moves, tags and closing comment as the PGN form would give them, every
    line number the JSONL line) so that :func:`replay` checks it; a malformed
    line, or a :class:`~arbiter.pgn.LongLine`, becomes its error.
    :func:`to_record` gives back the whole stored record."""
    number = 0
    for lineno, line in enumerate(lines, start=1):
        if isinstance(line, str) and not line.strip():
            continue
        number += 1
        if number > MAX_RECORD_GAMES:
            yield RecordSyntaxError(filename, lineno, number, f"more than {MAX_RECORD_GAMES} "
                                    "games in the file (the limit): the rest is not read")
            return
        if isinstance(line, LongLine):
            yield RecordSyntaxError(filename, lineno, number, f"line {lineno} is {line.length} "
                                    f"characters long, over the limit of {MAX_JSONL_LINE_CHARS}")
            continue
        yield _jsonl_game(line, filename, number, lineno)


def _jsonl_game(line: str, filename: str, number: int, lineno: int) -> ParsedGame | RecordSyntaxError:
    try:
        data = json.loads(line)
        if not isinstance(data, dict) or not isinstance(data.get("record"), dict):
            raise ValueError('expected an object with a "record" object')
        tags = data.get("tags", {})
        if not isinstance(tags, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in tags.items()):
            raise ValueError('"tags" must map names to strings')
        if len(tags) > MAX_TAGS:
            raise ValueError(f'more than {MAX_TAGS} "tags" (the limit)')
        record = GameRecord.from_dict(data["record"])
        _check_record_types(record)
        parsed = parsed_from_record(record, tags, filename, number, lineno)
        parsed.source_tournament = _source_tournament(data.get("tournament"))
    except Exception as exc:  # any malformed line: its error, never a traceback
        return RecordSyntaxError(filename, lineno, number, f"bad JSONL record: {exc}")
    return parsed


def parse_jsonl(text: str, filename: str = "<text>") -> list[tuple[GameRecord, dict[str, str]]]:
    """Inverse of :func:`write_jsonl` (no replay); RecordSyntaxError at the
    first malformed line."""
    games = []
    for item in read_jsonl(text, filename):
        if isinstance(item, RecordSyntaxError):
            raise item
        games.append((item.source_record, context_tags(item)))
    return games


def _source_tournament(value: Any) -> tuple[int, str] | None:
    """A JSONL line's ``tournament`` as (id, name); ValueError when malformed."""
    if value is None:
        return None
    if (not isinstance(value, dict) or not isinstance(value.get("id"), int)
            or not isinstance(value.get("name"), str)):
        raise ValueError('"tournament" must be an object with an integer "id" and a string "name"')
    return value["id"], value["name"]


def _check_record_types(record: GameRecord) -> None:
    """What a JSONL line must hold for the record to be used at all."""
    for name in ("game", "white", "black", "result", "termination"):
        if not isinstance(getattr(record, name), str):
            raise ValueError(f"record field {name!r} must be a string")
    if record.fen is not None and not isinstance(record.fen, str):
        raise ValueError("record field 'fen' must be a string or null")
    if not all(isinstance(m, str) for m in record.opening_moves):
        raise ValueError("record field 'opening_moves' must be a list of strings")
    for ply, move in enumerate(record.moves, start=1):
        if not isinstance(move.move, str) or not isinstance(move.time_ms, int):
            raise ValueError(f"move {ply}: 'move' must be a string and 'time_ms' an integer")
        if move.depth is not None and not isinstance(move.depth, int):
            raise ValueError(f"move {ply}: 'depth' must be an integer or null")
    if not isinstance(record.time_control, dict):
        raise ValueError("record field 'time_control' must be an object")

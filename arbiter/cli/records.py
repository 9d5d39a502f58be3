"""Record commands: ``export``, ``replay``, ``show``, ``import`` (``specs/records.md``).

The text format itself is :mod:`arbiter.records`; this module adds the files
and the database: which games a tournament holds, in which order, with which
Event/Site/Round tags, and how an imported file becomes a tournament whose
games count in ``standings``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import typer

from arbiter import records
from arbiter.games import Position
from arbiter.pgn import is_number
from arbiter.record import GameRecord
from arbiter.records import TAGS_KEY, ParsedGame, RecordSyntaxError, ReplayReport, export_tags
from arbiter.store import DEFAULT_DB, FINISHED, Store, StoreError, explain

from .app import app, fail

#: exit status of ``replay`` / ``import`` when a game in the file is bad
EXIT_BAD_GAME = 1

#: exit status of ``import`` when the database failed (nothing is imported then)
EXIT_NOT_STORED = 1

#: ``tournaments.format`` of a tournament made by ``arbiter import``
IMPORTED_FORMAT = "imported"



# --- reading files -------------------------------------------------------------------


#: Largest record file read (bytes).  A file is read whole before its games
#: are checked, so this bounds the memory a typo (``/dev/zero``, a disk image)
#: can cost; an export of 100,000 games is about 300 MB.
MAX_RECORD_FILE_BYTES = 1 << 30


def read_text(path: str) -> str:
    """The file's text, or ``fail()`` saying why it cannot be read: not a
    regular file (a device or a pipe has no size to check first), or over
    :data:`MAX_RECORD_FILE_BYTES`."""
    try:
        info = os.stat(path)
        if stat.S_ISREG(info.st_mode) and info.st_size > MAX_RECORD_FILE_BYTES:
            fail(f"{path}: {info.st_size} bytes, over the limit of {MAX_RECORD_FILE_BYTES} for a record file")
        if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
            fail(f"{path}: not a regular file (a device, pipe or socket cannot be a record file)")
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        fail(f"{path}: no such file")
    except IsADirectoryError:
        fail(f"{path}: is a directory, not a record file")
    except UnicodeDecodeError as exc:
        line = Path(path).read_bytes()[: exc.start].count(b"\n") + 1
        fail(f"{path}:{line}: not UTF-8 text ({exc.reason} at byte {exc.start})")
    except OSError as exc:
        fail(f"{path}: cannot read: {exc.strerror}")


def is_jsonl(path: str, text: str) -> bool:
    """A ``.jsonl`` file, or one whose first line is a JSON object (a
    PGN-like file may start with a ``{comment}``, not with one that parses
    as JSON)."""
    if path.lower().endswith(".jsonl"):
        return True
    first = text.lstrip().split("\n", 1)[0]
    if not first.startswith("{"):
        return False
    try:
        return isinstance(json.loads(first), dict)
    except ValueError:
        return False


def load_games(path: str, text: str) -> list[ParsedGame | RecordSyntaxError]:
    """Every game of a PGN-like or a JSONL file, a broken one as its error."""
    if is_jsonl(path, text):
        return records.read_jsonl(text, path)
    return records.read_games(text, path)


def check_games(path: str, text: str) -> list[tuple[ReplayReport, ParsedGame | None]]:
    """The referee's verdict on every game of a file."""
    checked: list[tuple[ReplayReport, ParsedGame | None]] = []
    for item in load_games(path, text):
        if isinstance(item, RecordSyntaxError):
            checked.append((records.syntax_report(item), None))
        else:
            checked.append((records.replay(item), item))
    return checked


# --- export ----------------------------------------------------------------------------


def open_store(db: str, *, readonly: bool) -> Store:
    try:
        return Store(db, readonly=readonly)
    except StoreError as exc:
        fail(str(exc))


def stored_tournaments(store: Store, tournament_id: int | None) -> list[dict[str, Any]]:
    """The tournament asked for (``fail()`` if there is none), or every one, by id."""
    if tournament_id is None:
        return store.tournaments()
    one = store.tournament(tournament_id)
    if one is None:
        fail(f"{store.path}: no tournament {tournament_id}")
    return [one]


def stored_games(store: Store, tournaments: list[dict[str, Any]]
                 ) -> Iterator[tuple[GameRecord, dict[str, str], dict[str, Any]]]:
    """Every finished game of the tournaments, in schedule order, with its
    tags and its tournament, one at a time (:meth:`Store.iter_games`)."""
    for tournament in tournaments:
        for row in store.iter_games(tournament["id"]):
            yield GameRecord.from_dict(row["record"]), export_tags(tournament, row), tournament


def write_export(store: Store, tournaments: list[dict[str, Any]], format: str,
                 out: BinaryIO) -> int:
    """Write the games to ``out`` as they are read, one game in memory at a
    time; returns how many were written."""
    count = 0
    for record, tags, tournament in stored_games(store, tournaments):
        if format == "pgn":
            text = records.write_game(record, tags)
        else:
            text = records.jsonl_line(record, tags, tournament)
        out.write(text.encode("utf-8"))  # the same bytes whatever the locale
        count += 1
    return count


@app.command()
def export(
    db: str = typer.Option(DEFAULT_DB, "--db", help="the results database"),
    tournament: int | None = typer.Option(None, "--tournament", help="only this tournament"),
    format: str = typer.Option("pgn", "--format", help="pgn or jsonl"),
    out: str | None = typer.Option(None, "--out", help="write to FILE instead of stdout"),
) -> None:
    """Write every finished game as a record file, in schedule order."""
    if format not in ("pgn", "jsonl"):
        fail(f"--format must be pgn or jsonl, not {format!r}")
    with open_store(db, readonly=True) as store:
        tournaments = stored_tournaments(store, tournament)
        if out is None:
            sys.stdout.flush()
            _export_to(store, tournaments, format, sys.stdout.buffer, db)
            sys.stdout.buffer.flush()
            return
        try:
            with open(out, "wb") as handle:
                count = _export_to(store, tournaments, format, handle, db, partial=out)
        except OSError as exc:
            fail(f"{out}: cannot write: {exc.strerror}")
    typer.echo(f"{count} games written to {out}", err=True)


def _export_to(store: Store, tournaments: list[dict[str, Any]], format: str, out: BinaryIO,
               db: str, partial: str | None = None) -> int:
    """:func:`write_export`, or ``fail()`` naming a damaged row (a file
    written in part is removed: an export is whole or absent)."""
    try:
        return write_export(store, tournaments, format, out)
    except (KeyError, TypeError, ValueError, ArithmeticError, AttributeError) as exc:
        if partial is not None:
            out.close()
            Path(partial).unlink(missing_ok=True)
        fail(f"{db}: a stored game cannot be written as a record: {exc!r}")


# --- replay ----------------------------------------------------------------------------


@app.command()
def replay(
    file: str = typer.Argument(..., help="a record file (PGN-like, or JSONL from export)"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Replay every game of a record file through the referee."""
    checked = check_games(file, read_text(file))
    reports = [report for report, _ in checked]
    bad = sum(1 for report in reports if not report.ok)
    if as_json:
        typer.echo(json.dumps({"file": file, "games": len(reports), "bad": bad,
                               "reports": [r.to_dict() for r in reports]}))
    else:
        for report in reports:
            typer.echo(report.summary())
        if reports:
            typer.echo(f"{len(reports)} games: {len(reports) - bad} OK, {bad} bad")
    if not reports:
        fail(f"{file}: no games in the file", EXIT_BAD_GAME)
    if bad:
        raise typer.Exit(EXIT_BAD_GAME)


# --- show ------------------------------------------------------------------------------


def describe(parsed: ParsedGame, position: Position, ply: int) -> list[str]:
    tags = parsed.tags
    total = len(parsed.moves)
    head = (f"game {parsed.number}: {tags.get('White', '?')} (White) - "
            f"{tags.get('Black', '?')} (Black), {position.game.name}, {tags.get('Result', parsed.result)}")
    lines = [head, f"after ply {ply} of {total}" + (
        f": {parsed.moves[ply - 1].text}" if ply else " (where the game starts)")]
    lines += ["", position.diagram().rstrip("\n"), ""]
    lines.append(f"fen: {position.fen()}")
    outcome = position.outcome()
    if outcome is not None:
        lines.append(f"game over: {outcome.result} by {outcome.termination.value}")
    else:
        lines.append(f"to move: {position.to_move.value}")
    scores = position.scores()
    if scores is not None:
        lines.append(f"scores: white {scores[0]}, black {scores[1]}")
    return lines


@app.command()
def show(
    file: str = typer.Argument(..., help="a record file"),
    game: int = typer.Option(..., "--game", help="which game of the file (1-based)"),
    ply: int | None = typer.Option(None, "--ply", help="after this many plies (default: the end)"),
    svg: str | None = typer.Option(None, "--svg", help="also write the position as an SVG picture to this file"),
) -> None:
    """Show a game's position as a text diagram (and, with --svg, as a picture)."""
    items = load_games(file, read_text(file))
    if not 1 <= game <= len(items):
        fail(f"{file}: no game {game}: the file has {len(items)} game(s)")
    item = items[game - 1]
    if isinstance(item, RecordSyntaxError):
        fail(str(item))
    if ply is not None and ply < 0:
        fail(f"--ply must be >= 0, not {ply}")
    try:
        position = records.position_at(item, ply)
    except ValueError as exc:
        fail(str(exc))
    shown = len(item.moves) if ply is None else ply
    if svg is not None:
        write_svg(svg, item, position, shown)
    for line in describe(item, position, shown):
        typer.echo(line)


def write_svg(path: str, parsed: ParsedGame, position: Position, ply: int) -> None:
    """``show --svg``: the picture of ``position`` (after ``ply`` plies, its
    last move marked) written to ``path``, or ``fail()`` saying why not."""
    from arbiter.svg import render_svg

    tags = parsed.tags
    title = f"{tags.get('White', '?')} - {tags.get('Black', '?')}, ply {ply} of {len(parsed.moves)}"
    last = parsed.moves[ply - 1].text if ply else None
    try:
        Path(path).write_text(render_svg(position, last_move=last, title=title), encoding="utf-8")
    except OSError as exc:
        fail(f"{path}: cannot write the SVG: {exc.strerror or exc}")


# --- import ----------------------------------------------------------------------------


def _pairings(games: list[tuple[GameRecord, dict[str, str]]]) -> list[tuple[int, int, int, int]]:
    """(round, pairing, index, pair) for imported games: pairings numbered
    by first appearance of the two engines, a pairing's games paired two by
    two in file order (as the schedule pairs them)."""
    pairing_of: dict[frozenset[str], int] = {}
    count: dict[int, int] = {}
    index: dict[tuple[int, int], int] = {}
    out = []
    for record, tags in games:
        pairing = pairing_of.setdefault(frozenset((record.white, record.black)), len(pairing_of) + 1)
        c = count.get(pairing, 0)
        count[pairing] = c + 1
        round_text = tags.get("Round", "").split(".")[0]
        round_number = int(round_text) if is_number(round_text) and int(round_text) > 0 else 1
        index[(round_number, pairing)] = index.get((round_number, pairing), 0) + 1
        out.append((round_number, pairing, index[(round_number, pairing)], c // 2 + 1))
    return out


def import_games(store: Store, path: str, text: str,
                 games: list[tuple[GameRecord, dict[str, str]]]) -> list[tuple[int, str, int]]:
    """Store validated games as new tournaments (one per game kind in the
    file); returns (tournament id, name, games) for each.

    All or nothing: the whole import is one transaction (the check that the
    file is not imported yet included), so a failure half-way (a full disk)
    leaves no tournament behind, and importing again once the cause is
    fixed works."""
    with store.transaction():
        return _import_games(store, path, text, games)


def _import_games(store: Store, path: str, text: str,
                  games: list[tuple[GameRecord, dict[str, str]]]) -> list[tuple[int, str, int]]:
    by_game: dict[str, list[tuple[GameRecord, dict[str, str]]]] = {}
    for record, tags in games:
        by_game.setdefault(record.game, []).append((record, tags))
    identities = {name: "import:" + hashlib.sha256(f"{name}\n{text}".encode()).hexdigest()
                  for name in by_game}
    for identity in identities.values():
        existing = store.find_tournament(identity)
        if existing is not None:
            fail(f"{path}: already imported into {store.path} as tournament {existing['id']} "
                 f"({existing['name']})", EXIT_BAD_GAME)
    created = []
    for game_name, members in by_game.items():
        identity = identities[game_name]
        events = {tags.get("Event", "?") for _, tags in members}
        name = events.pop() if len(events) == 1 else f"import of {Path(path).name}"
        if name in ("", "?"):
            name = f"import of {Path(path).name}"
        engines: list[str] = []
        for record, _ in members:
            for engine in (record.white, record.black):
                if engine not in engines:
                    engines.append(engine)
        tournament_id = store.create_tournament(
            name=name, game=game_name, format=IMPORTED_FORMAT, identity=identity,
            config={"imported_from": str(path), "game": game_name},
            engines=[{"name": engine} for engine in engines], total_games=len(members))
        for seq, ((record, tags), (rnd, pairing, index, pair)) in enumerate(
                zip(members, _pairings(members), strict=False)):
            data = record.to_dict()
            data[TAGS_KEY] = tags
            store.save_game(tournament_id, key=f"import-{seq + 1}", seq=seq, round=rnd,
                            pairing=pairing, index=index, pair=pair,
                            opening={"source": "import", "fen": record.fen,
                                     "moves": record.opening_moves},
                            record=data)
        store.set_status(tournament_id, FINISHED, note=f"imported from {path}")
        created.append((tournament_id, name, len(members)))
    return created


@app.command("import")
def import_command(
    file: str = typer.Argument(..., help="a record file (PGN-like, or JSONL from export)"),
    db: str = typer.Option(DEFAULT_DB, "--db", help="the results database"),
) -> None:
    """Import a record file's games into the database (all must replay OK)."""
    text = read_text(file)
    checked = check_games(file, text)
    if not checked:
        fail(f"{file}: no games in the file", EXIT_BAD_GAME)
    errors = [report.error for report, _ in checked if not report.ok]
    games: list[tuple[GameRecord, dict[str, str]]] = []
    for report, parsed in checked:
        if report.ok and parsed is not None:
            try:
                games.append((records.to_record(parsed), records.context_tags(parsed)))
            except ValueError as exc:  # an unfinished game (*)
                errors.append(str(exc))
    if errors:
        for error in errors:
            print(f"arbiter: error: {error}", file=sys.stderr)
        fail(f"{file}: nothing imported: {len(errors)} of {len(checked)} games are bad",
             EXIT_BAD_GAME)
    with open_store(db, readonly=False) as store:
        try:
            created = import_games(store, file, text, games)
        except StoreError as exc:
            fail(f"{exc}; nothing imported")
        except sqlite3.Error as exc:  # a full disk, a lock held too long ...: all rolled back
            fail(f"{db}: nothing imported: {explain(exc, store.busy_timeout)} ({exc})",
                 EXIT_NOT_STORED)
    for tournament_id, name, count in created:
        typer.echo(f"imported {count} games into {db} as tournament {tournament_id} ({name})")

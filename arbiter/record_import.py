"""``arbiter import``: games of a record file into the database, in bounded
memory and never twice (``specs/records.md`` §9).

An import makes two passes over the games.  The first (:meth:`Importer.plan`,
no write lock held) checks every game and works out where each goes: games
already in the database, or earlier in the file, are left out; the rest are
grouped into tournaments (one per ``Game`` and, for a JSONL export, per
tournament it came from).  The second (:meth:`Importer.write`) stores them
in one transaction: all or nothing.  Neither pass holds more than one game
at a time: what the passes must remember of every game, a digest saying
which game it is, lives in a scratch SQLite file (``sqlite3.connect("")``,
removed when closed), so memory stays bounded whatever the sizes of the
file and the database.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arbiter.pgn import comment_text, is_number
from arbiter.record import GameRecord
from arbiter.records import TAGS_KEY
from arbiter.store import RunStatus, Store, game_record

__all__ = ["IMPORTED_FORMAT", "Importer", "ImportedGame", "game_digest"]

#: ``tournaments.format`` of a tournament made by ``arbiter import``
IMPORTED_FORMAT = "imported"

#: ``known.game`` of a game found in the database before the first pass, and
#: of one stored there by someone else between the passes
IN_DATABASE, ADDED_MEANWHILE = 0, -1

#: A game to import: its number in the file (1-based), record, context tags
#: and the (id, name) of the tournament a JSONL export says it came from.
ImportedGame = tuple[int, GameRecord, dict[str, str], tuple[int, str] | None]


def game_digest(record: Mapping[str, Any]) -> str:
    """Which game a record is, whatever the file or database it is in: the
    game, both names, result, termination and its detail (as a PGN comment
    holds it), start position, every move and both times (a game exported
    and imported again has the same digest)."""
    moves = [m["move"] if isinstance(m, Mapping) else str(m) for m in record.get("moves") or []]
    detail = comment_text(str(record.get("termination_detail") or ""))
    key = [record.get("game"), record.get("white"), record.get("black"), record.get("result"),
           record.get("termination"), detail, record.get("fen"),
           list(record.get("opening_moves") or []), moves, record.get("start_time") or "",
           record.get("end_time") or ""]
    return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode("utf-8")).hexdigest()


def _digest_of(record: GameRecord) -> str:
    return game_digest({"game": record.game, "white": record.white, "black": record.black,
                        "result": record.result, "termination": record.termination,
                        "termination_detail": record.termination_detail, "fen": record.fen, "opening_moves": record.opening_moves,
                        "moves": [m.move for m in record.moves],
                        "start_time": record.start_time, "end_time": record.end_time})


@dataclass
class _Group:
    """The games of the file that become one tournament."""

    game: str
    source: tuple[int, str] | None
    events: set[str] = field(default_factory=set)  # at most two: is there a common one?
    engines: dict[str, None] = field(default_factory=dict)  # in order of appearance
    count: int = 0
    tournament_id: int | None = None
    stored: int = 0
    name: str = ""
    pairing_of: dict[frozenset[str], int] = field(default_factory=dict)
    per_pairing: dict[int, int] = field(default_factory=dict)
    per_round: dict[tuple[int, int], int] = field(default_factory=dict)

    def place(self, record: GameRecord, tags: Mapping[str, str]) -> tuple[int, int, int, int]:
        """(round, pairing, index, pair) of the group's next game: pairings
        numbered by first appearance of the two engines, a pairing's games
        paired two by two in file order (as the schedule pairs them)."""
        pairing = self.pairing_of.setdefault(frozenset((record.white, record.black)),
                                             len(self.pairing_of) + 1)
        before = self.per_pairing.get(pairing, 0)
        self.per_pairing[pairing] = before + 1
        round_text = tags.get("Round", "").split(".")[0]
        round_number = int(round_text) if is_number(round_text) and int(round_text) > 0 else 1
        index = self.per_round.get((round_number, pairing), 0) + 1
        self.per_round[(round_number, pairing)] = index
        return round_number, pairing, index, before // 2 + 1


class Importer:
    """One import of the file at ``path``: :meth:`learn` the database's
    games, :meth:`plan` every game of the file, then :meth:`write` them.

    After the first pass, :attr:`new` games are to be stored and
    :attr:`duplicates` are left out; :attr:`duplicate_of` is a tournament
    holding one of those."""

    def __init__(self, path: str):
        self.path = path
        self.known = sqlite3.connect("")  # a private file SQLite removes when closed
        self.known.execute("create table known (digest text primary key, game integer not null, "
                           "tournament integer)")
        self.last_id = 0  # the last database game learnt
        self.groups: dict[tuple[str, tuple[int, str] | None], _Group] = {}
        self.new = 0
        self.duplicates = 0
        self.duplicate_of: int | None = None
        self.added_meanwhile = 0

    def close(self) -> None:
        self.known.close()

    # -- the database's games -------------------------------------------------

    def learn(self, store: Store, *, meanwhile: bool = False) -> None:
        """Remember the digest of every game stored in ``store`` after the
        last one learnt (``meanwhile``: stored between the passes, so left
        out even when the first pass planned it)."""
        mark = ADDED_MEANWHILE if meanwhile else IN_DATABASE
        cursor = store.db.conn.execute(
            "select id, tournament, record, move_data from games where id > ? order by id", [self.last_id])
        for game_id, tournament, text, moves in cursor:
            digest = game_digest(game_record({"record": text, "move_data": moves}))
            self.known.execute("insert into known values (?, ?, ?) on conflict (digest) do "
                               "update set game = excluded.game, tournament = excluded.tournament",
                               [digest, mark, tournament])
            self.last_id = game_id

    def _known(self, digest: str) -> tuple[int, int | None] | None:
        return self.known.execute("select game, tournament from known where digest = ?",
                                  [digest]).fetchone()

    # -- first pass ---------------------------------------------------------------

    def plan(self, number: int, record: GameRecord, tags: Mapping[str, str],
             source: tuple[int, str] | None) -> None:
        """Account for game ``number`` of the file (a good one)."""
        digest = _digest_of(record)
        known = self._known(digest)
        if known is not None:
            self.duplicates += 1
            if self.duplicate_of is None and known[1] is not None:
                self.duplicate_of = known[1]
            return
        self.known.execute("insert into known values (?, ?, null)", [digest, number])
        group = self.groups.setdefault((record.game, source), _Group(record.game, source))
        group.count += 1
        if len(group.events) < 2:
            group.events.add(tags.get("Event", "?"))
        for engine in (record.white, record.black):
            group.engines.setdefault(engine, None)
        self.new += 1

    # -- second pass -----------------------------------------------------------------

    def write(self, store: Store, games: Iterable[ImportedGame], file_digest: str
              ) -> list[tuple[int, str, int]]:
        """Store the planned games (``games``: the file's good games again,
        in the same order) in one transaction; returns (tournament id, name,
        games) of each tournament made.  An exception from ``games`` (the
        file changed) rolls everything back."""
        with store.transaction():
            self.learn(store, meanwhile=True)
            for number, record, tags, source in games:
                known = self._known(_digest_of(record))
                if known is None or known[0] != number:
                    self.added_meanwhile += known is not None and known[0] == ADDED_MEANWHILE
                    continue  # in the database, or earlier in the file
                group = self.groups[(record.game, source)]
                if group.tournament_id is None:
                    self._create(store, group, file_digest)
                self._save(store, group, record, tags)
            made = [g for g in self.groups.values() if g.tournament_id is not None]
            for group in made:
                assert group.tournament_id is not None
                if group.stored != group.count:  # games stored by another process meanwhile
                    store.db.conn.execute("update tournaments set total_games = ? where id = ?",
                                          [group.stored, group.tournament_id])
                store.set_status(group.tournament_id, RunStatus.FINISHED, note=f"imported from {self.path}")
            return [(g.tournament_id, g.name, g.stored) for g in made]  # type: ignore[misc]

    def _create(self, store: Store, group: _Group, file_digest: str) -> None:
        fallback = f"import of {Path(self.path).name}"
        if group.source is not None:
            name = group.source[1]
        else:
            name = next(iter(group.events)) if len(group.events) == 1 else fallback
        group.name = name if name not in ("", "?") else fallback
        label = json.dumps([group.game, group.source, file_digest])
        group.tournament_id = store.create_tournament(
            name=group.name, game=group.game, format=IMPORTED_FORMAT,
            identity="import:" + hashlib.sha256(label.encode("utf-8")).hexdigest(),
            config={"imported_from": str(self.path), "game": group.game},
            engines=[{"name": engine} for engine in group.engines], total_games=group.count)

    def _save(self, store: Store, group: _Group, record: GameRecord, tags: dict[str, str]) -> None:
        assert group.tournament_id is not None
        rnd, pairing, index, pair = group.place(record, tags)
        data = record.to_dict()
        data[TAGS_KEY] = tags
        store.save_game(group.tournament_id, key=f"import-{group.stored + 1}", seq=group.stored,
                        round=rnd, pairing=pairing, index=index, pair=pair,
                        opening={"source": "import", "fen": record.fen,
                                 "moves": record.opening_moves},
                        record=data)
        group.stored += 1

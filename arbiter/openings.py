"""Openings: where each game of a tournament starts, read, checked and chosen.

Pure code (no I/O but the text handed in, no clock, no engine); the rules are
``specs/tournament.md`` §Openings:

* an openings file is one opening a line (:func:`parse_openings`: a position
  string and/or moves, each checked by the referee, errors naming file:line
  as :class:`OpeningError`), or a PGN file of games (:func:`is_pgn_openings`,
  :func:`pgn_openings`), each opening cut to ``plies`` plies when given
  (``--opening-plies``); the bounds on a file are named here
  (:data:`MAX_OPENINGS_BYTES`, :data:`MAX_OPENINGS`, :data:`MAX_OPENING_LINE_CHARS`);
* :func:`random_opening`: ``random_plies`` random legal plies drawn with an
  RNG seeded by the tournament's seed and the game pair's number;
* :class:`OpeningSource`: the opening of game pair ``p`` (sequential, or
  shuffled per cycle with the seed, cycling when the list runs out; random
  plies; or the start position), the same for the same arguments, which is
  what lets a resumed run rebuild its schedule.

:class:`ScheduleError` is defined here, as the base of :class:`OpeningError`,
because openings are the lowest thing a schedule is built from;
:mod:`arbiter.schedule` (who plays whom) builds on this module and re-exports
every name of it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arbiter.games import Game, GameError, MoveSequenceError
from arbiter.pgn import ParsedGame, RecordSyntaxError, iter_games, text_lines
from arbiter.records import START_TAG

#: how a list of openings is gone through (``--order``)
ORDERS = ("sequential", "random")

#: Most random plies of a ``random_plies`` opening: openings are a few plies
#: long, and each game pair's opening is drawn ply by ply (up to 1000 times
#: when lines end the game), so the bound keeps drawing them quick.
MAX_RANDOM_PLIES = 100

#: Largest openings file read, in bytes: the popular books of a few hundred
#: thousand lines take a few MB; reading stops here, so ``--openings
#: /dev/zero`` (or a wrong file) is refused rather than read into memory.
MAX_OPENINGS_BYTES = 32 << 20

#: Most openings of one file: each is checked by the referee and kept in the
#: tournament's stored configuration, so the list must stay a list, not a
#: database (a million games need at most half a million openings).
MAX_OPENINGS = 500_000

#: Longest openings-file line, in characters: a position string and some
#: dozen moves fit in a few hundred; a longer line is a wrong file.
MAX_OPENING_LINE_CHARS = 4096


class ScheduleError(ValueError):
    """A tournament that cannot be scheduled; the message says why."""


class OpeningError(ScheduleError):
    """A bad line in an openings file: names the file (``source``) and line."""

    def __init__(self, source: str, line: int, reason: str):
        self.source = source
        self.line = line
        self.reason = reason
        super().__init__(f"{source}:{line}: {reason}")


@dataclass(frozen=True)
class Opening:
    """Where a game starts: a position string (None = the start position) and
    moves played from there before the engines take over.  ``source`` says
    where it came from (``book.txt:3``, ``random:7``, ``start``)."""

    fen: str | None = None
    moves: tuple[str, ...] = ()
    source: str = "start"

    def to_dict(self) -> dict[str, Any]:
        return {"fen": self.fen, "moves": list(self.moves), "source": self.source}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Opening:
        return cls(fen=data.get("fen"), moves=tuple(data.get("moves") or ()),
                   source=data.get("source", "start"))

    def __str__(self) -> str:
        parts = [self.fen or "startpos"]
        if self.moves:
            parts.append("moves " + " ".join(self.moves))
        return " ".join(parts)


START = Opening()


def parse_opening_line(game: Game, text: str, source: str, line: int) -> Opening:
    """One openings-file line as an :class:`Opening`, checked by the referee.

    A line is a position string, a move sequence from the start position, or
    ``<position string> moves <m1> <m2> ...``.  Raises :class:`OpeningError`
    naming ``source`` and ``line`` and why neither reading works.
    """
    text = text.strip()
    label = f"{source}:{line}"
    fen_part, sep, moves_part = text.partition(" moves ")
    if text.startswith("moves "):
        fen_part, sep, moves_part = "", "moves", text[len("moves "):]
    candidates: list[tuple[str | None, list[str]]] = []
    if sep:
        candidates.append((fen_part.strip() or None, moves_part.split()))
    else:
        candidates.append((text, []))  # a position string
        candidates.append((None, text.split()))  # a move sequence
    reasons = []
    for fen, moves in candidates:
        try:
            position = game.position(fen, moves)
        except MoveSequenceError as exc:
            reasons.append(f"as moves: {exc}")
            continue
        except (GameError, ValueError) as exc:  # a referee error, whatever its kind
            reasons.append(str(exc))
            continue
        outcome = position.outcome()
        if outcome is not None:
            raise OpeningError(source, line, f"the game is already over after this opening "
                               f"({outcome.result}, {outcome.termination.value})")
        canonical = _canonical_moves(game, fen, moves)
        return Opening(fen=fen, moves=tuple(canonical), source=label)
    if sep:
        raise OpeningError(source, line, reasons[0])
    raise OpeningError(source, line, "neither a position string nor a move sequence of "
                       f"{game.name}: {reasons[0]}; {reasons[1]}")


def _canonical_moves(game: Game, fen: str | None, moves: Sequence[str]) -> list[str]:
    position = game.from_fen(fen) if fen else game.start()
    canonical = []
    for move in moves:
        move = position.parse_move(move)
        canonical.append(move)
        position = position.play(move)
    return canonical


def parse_openings(game: Game, text: str, source: str, plies: int | None = None) -> list[Opening]:
    """Every opening of an openings file's ``text`` (blank lines and lines
    starting with ``#`` are skipped), the moves of each cut to ``plies``
    when given.  ``source`` names the file in errors."""
    if plies is not None:
        return [_cut(game, opening, plies) for opening in parse_openings(game, text, source)]
    openings: list[Opening] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if len(raw) > MAX_OPENING_LINE_CHARS:
            raise OpeningError(source, number, f"the line is {len(raw)} characters long, over the "
                               f"limit of {MAX_OPENING_LINE_CHARS}")
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if len(openings) == MAX_OPENINGS:
            raise OpeningError(source, number, f"more than {MAX_OPENINGS} openings in the file")
        openings.append(parse_opening_line(game, line, source, number))
    if not openings:
        raise ScheduleError(f"{source}: no openings in the file")
    return openings


def _cut(game: Game, opening: Opening, plies: int) -> Opening:
    """``opening`` with its first ``plies`` moves only, checked again: the
    game must not be over there either."""
    cut = Opening(fen=opening.fen, moves=opening.moves[:plies], source=opening.source)
    outcome = game.position(cut.fen, cut.moves).outcome()
    if outcome is not None:
        file, _, line = cut.source.rpartition(":")
        raise OpeningError(file, int(line), f"the game is already over after {plies} plies of this "
                           f"opening ({outcome.result}, {outcome.termination.value})")
    return cut


def is_pgn_openings(source: str, text: str) -> bool:
    """Whether an openings file is a PGN file of games (``specs/tournament.md``
    §Openings): named ``*.pgn``, or its first line that is not blank nor a
    comment (``#``, and PGN's ``%`` and ``;``) is a tag; a line of an openings
    file never starts with ``[``."""
    if source.lower().endswith(".pgn"):
        return True
    for line in text.splitlines():
        line = line.strip()
        if line and line[0] not in "#%;":
            return line.startswith("[")
    return False


def pgn_openings(game: Game, text: str, source: str, plies: int | None = None) -> list[Opening]:
    """The openings of a PGN file of games (``--openings FILE.pgn``, any
    record file, ours or another program's): each game's start position
    (its ``StartPosition`` or ``FEN`` tag, else the start) and its first
    ``plies`` moves (all when None), checked by the referee.  The game's
    result and comments are not read; variations are skipped.  Raises
    :class:`OpeningError` naming ``source``, the line and the game's number:
    a syntax error, a game of another ``Game``, an illegal move, or an
    opening after which the game is over."""
    openings: list[Opening] = []
    for item in iter_games(text_lines(text), source):
        if isinstance(item, RecordSyntaxError):
            raise OpeningError(source, item.line, f"game {item.game_number}: {item.message}")
        if len(openings) == MAX_OPENINGS:
            raise OpeningError(source, item.line, f"more than {MAX_OPENINGS} openings in the file")
        openings.append(_pgn_opening(game, item, source, plies))
    if not openings:
        raise ScheduleError(f"{source}: no games in the file")
    return openings


def _pgn_opening(game: Game, parsed: ParsedGame, source: str, plies: int | None) -> Opening:
    def error(line: int, reason: str) -> OpeningError:
        return OpeningError(source, line, f"game {parsed.number}: {reason}")

    tags, lines = parsed.tags, parsed.tag_lines
    name = tags.get("Game")
    if name is not None and name.strip().lower() != game.name:
        raise error(lines["Game"], f"a game of {name!r}, not of {game.name}")
    if START_TAG in tags and "FEN" in tags:
        raise error(lines["FEN"], f"tags {START_TAG} and FEN both give a start position: give one")
    tag = START_TAG if START_TAG in tags else "FEN"
    fen = tags.get(tag)
    try:
        position = game.from_fen(fen) if fen else game.start()
    except GameError as exc:
        raise error(lines[tag], f"tag {tag}: {exc}") from None
    moves: list[str] = []
    for ply, move in enumerate(parsed.moves[:plies], start=1):
        try:
            text = position.parse_move(move.text)
            position = position.play(text)
        except GameError as exc:
            reason = getattr(exc, "reason", str(exc))
            raise error(move.line, f"ply {ply}: illegal move {move.text!r}: {reason}") from None
        moves.append(text)
    outcome = position.outcome()
    if outcome is not None:
        raise error(parsed.line, f"the game is already over after this opening ({outcome.result}, "
                    f"{outcome.termination.value}): give --opening-plies fewer than {len(moves)}")
    return Opening(fen=fen, moves=tuple(moves), source=f"{source}:{parsed.line}")


def random_opening(game: Game, plies: int, seed: int | str, number: int) -> Opening:
    """``plies`` uniformly random legal plies from the start, drawn with an RNG
    seeded by (``seed``, ``number``) so each game pair's opening is fixed.
    Lines that end the game before the last ply are redrawn."""
    rng = random.Random(f"{seed}/{number}")
    for _ in range(1000):
        position = game.start()
        moves = []
        for _ in range(plies):
            legal = position.legal_moves()
            if not legal:
                break
            move = rng.choice(sorted(legal))
            moves.append(move)
            position = position.play(move)
        if len(moves) == plies and not position.is_over():
            return Opening(moves=tuple(moves), source=f"random:{number}")
    raise ScheduleError(f"could not find {plies} random plies of {game.name} "
                        "that do not end the game; use fewer --random-plies")


class OpeningSource:
    """The opening of game pair ``p`` (0-based) for one tournament: called
    with ``p``, it returns the :class:`Opening` (``specs/tournament.md``
    §Openings); a Swiss or knockout round says which ``p`` each of its game
    pairs plays (:class:`RoundPair`)."""

    def __init__(self, game: Game | None, openings: Sequence[Opening] | None, order: str,
                 seed: int, random_plies: int):
        if order not in ORDERS:
            raise ScheduleError(f"unknown opening order {order!r}; choose one of: {', '.join(ORDERS)}")
        if openings and random_plies:
            raise ScheduleError("give either an openings file or --random-plies, not both")
        if random_plies < 0:
            raise ScheduleError("--random-plies must be >= 0")
        if random_plies > MAX_RANDOM_PLIES:
            raise ScheduleError(f"--random-plies must be at most {MAX_RANDOM_PLIES}, not {random_plies}")
        if random_plies and game is None:
            raise ScheduleError("--random-plies needs the game")
        self.game = game
        self.openings = list(openings or [])
        self.order = order
        self.seed = seed
        self.random_plies = random_plies
        self._cycles: dict[int, list[int]] = {}
        self._random: dict[int, Opening] = {}

    def __call__(self, pair: int) -> Opening:
        if self.openings:
            n = len(self.openings)
            cycle, slot = divmod(pair, n)
            if self.order == "sequential":
                return self.openings[slot]
            if cycle not in self._cycles:
                indices = list(range(n))
                random.Random(f"{self.seed}/order/{cycle}").shuffle(indices)
                self._cycles[cycle] = indices
            return self.openings[self._cycles[cycle][slot]]
        if self.random_plies:
            assert self.game is not None  # checked in __init__
            if pair not in self._random:
                self._random[pair] = random_opening(self.game, self.random_plies, self.seed, pair + 1)
            return self._random[pair]
        return START

"""Tournament schedules: who plays whom, with which colour, from which opening.

Pure code (no I/O, no clock, no engine): the same arguments always give the
same list of :class:`ScheduledGame`, in the same order, with the same keys.
That is what makes resume possible -- a restarted run rebuilds the schedule and
skips every key the store already holds (``specs/tournament.md`` §Resume).

The rules, each one in ``specs/tournament.md`` §Schedule:

* pairings: ``round-robin`` plays every pair of engines (in the order given),
  ``gauntlet`` the first engine against each of the others;
* each round, each pairing plays ``games`` games; counting a pairing's games
  over the whole tournament (0, 1, 2, ...), game ``c`` belongs to game pair
  ``c // 2``; the pairing's first engine has White in even games, the second
  in odd ones, so colours alternate within each game pair;
* both games of a game pair start from the same opening (each opening is
  played twice, colours swapped); game pair ``p`` of every pairing gets the
  same opening, so all pairings meet the same openings;
* openings come from a list (sequential, or shuffled with a seed, cycling
  when the list runs out), from ``random_plies`` random legal plies chosen
  with a seeded RNG through the referee, or are the start position.  The
  list is an openings file: one opening a line (:func:`parse_openings`), or
  a PGN file of games (:func:`pgn_openings`), each cut to ``plies`` plies
  when given (``--opening-plies``).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arbiter.games import Game, GameError, MoveSequenceError
from arbiter.pgn import ParsedGame, RecordSyntaxError, iter_games, text_lines
from arbiter.records import START_TAG

#: formats whose whole schedule is known before the first game
SCHEDULED_FORMATS = ("round-robin", "gauntlet")
#: formats paired round by round from the results (arbiter/rounds.py)
ROUND_FORMATS = ("swiss", "knockout")
FORMATS = SCHEDULED_FORMATS + ROUND_FORMATS
ORDERS = ("sequential", "random")

#: Most games one tournament may schedule.  The schedule is built whole (every
#: game with its key and opening, a few hundred bytes each) and the store holds
#: a row per game, so this bounds both: a million games is a few hundred MB at
#: most, and more than any engine test plays (an SPRT rarely needs 100,000).
#: ``--games 1000000000`` is refused at once instead of filling the memory.
MAX_SCHEDULE_GAMES = 1_000_000

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


@dataclass(frozen=True)
class Pairing:
    """Two engines that meet; ``number`` is 1-based in the schedule's order."""

    number: int
    first: str
    second: str


def make_pairings(engines: Sequence[str], format: str) -> list[Pairing]:
    """The pairings of a ``round-robin`` or a ``gauntlet`` (first vs the rest)."""
    if format in ROUND_FORMATS:
        raise ScheduleError(f"a {format} tournament is paired round by round from its results: "
                            "it has no schedule made in advance (arbiter/rounds.py)")
    if format not in FORMATS:
        raise ScheduleError(f"unknown format {format!r}; choose one of: {', '.join(FORMATS)}")
    if len(engines) < 2:
        raise ScheduleError("a tournament needs at least two engines")
    duplicates = sorted(name for name, count in Counter(engines).items() if count > 1)
    if duplicates:
        raise ScheduleError(f"engine names must be unique; repeated: {', '.join(duplicates)}")
    if format == "gauntlet":
        pairs = [(engines[0], other) for other in engines[1:]]
    else:
        pairs = [(a, b) for i, a in enumerate(engines) for b in engines[i + 1:]]
    return [Pairing(number, a, b) for number, (a, b) in enumerate(pairs, start=1)]


def schedule_size(engines: int, format: str, games: int, rounds: int) -> int:
    """How many games a schedule holds, computed without building it: its
    pairings times ``games`` per pairing and round times ``rounds``.  A Swiss
    round has ``engines // 2`` pairings; a knockout is ``engines - 1``
    matches in one count (``rounds`` 1, ``games`` the most a match may need)."""
    if format == "gauntlet" or format == "knockout":
        pairings = engines - 1
    elif format == "swiss":
        pairings = engines // 2
    else:
        pairings = engines * (engines - 1) // 2
    return max(pairings, 0) * games * rounds


def check_size(engines: int, format: str, games: int, rounds: int) -> None:
    """:class:`ScheduleError` when the schedule would exceed
    :data:`MAX_SCHEDULE_GAMES`: checked before anything is built."""
    size = schedule_size(engines, format, games, rounds)
    if size > MAX_SCHEDULE_GAMES:
        raise ScheduleError(
            f"{engines} engines, --games {games} and --rounds {rounds} make {size} games, over the "
            f"limit of {MAX_SCHEDULE_GAMES} per tournament")


@dataclass(frozen=True)
class ScheduledGame:
    """One game of the schedule.

    ``round`` and ``pairing`` are 1-based, ``index`` is the game's number
    (1-based) within its pairing in that round; together they are the stable
    :attr:`key`.  ``pair`` is the game pair (1-based, per pairing, over the
    whole tournament); ``seq`` the game's place in the schedule (0-based).
    """

    round: int
    pairing: int
    index: int
    pair: int
    seq: int
    white: str
    black: str
    opening: Opening = field(default=START)

    @property
    def key(self) -> str:
        return f"r{self.round}-p{self.pairing}-g{self.index}"

    @property
    def players(self) -> frozenset[str]:
        return frozenset((self.white, self.black))

    def to_dict(self) -> dict[str, Any]:
        """The game as plain values (a worker's request carries it so)."""
        return {"round": self.round, "pairing": self.pairing, "index": self.index, "pair": self.pair,
                "seq": self.seq, "white": self.white, "black": self.black,
                "opening": self.opening.to_dict()}

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> ScheduledGame:
        return cls(round=values["round"], pairing=values["pairing"], index=values["index"],
                   pair=values["pair"], seq=values["seq"], white=values["white"],
                   black=values["black"], opening=Opening.from_dict(values["opening"]))


@dataclass(frozen=True)
class RoundPair:
    """One game pair of a Swiss or knockout round as it is stored before its
    first game (``specs/storage.md`` §pairings), or a Swiss bye.

    ``pairing`` is the pairing's number in the whole tournament (a Swiss
    board, a knockout match: ``specs/tournament.md`` §Swiss, §Knockout) and
    ``pair`` the game pair within it (1-based); ``first`` has White in the
    pair's first game, ``second`` in its second (None: ``first`` has a bye,
    and there are no games).  ``seq`` is the first game's place in the
    schedule and ``opening`` the number of the opening both games play (for
    :class:`OpeningSource`), both None for a bye."""

    round: int
    pairing: int
    pair: int
    first: str
    second: str | None
    seq: int | None = None
    opening: int | None = None

    @property
    def bye(self) -> bool:
        return self.second is None

    def games(self, opening_for: OpeningSource) -> tuple[ScheduledGame, ...]:
        """The pair's two games (none for a bye): keys
        ``r<round>-p<pairing>-g<index>`` with index ``2 * pair - 1`` and
        ``2 * pair``, seq ``seq`` and ``seq + 1``, colours swapped, one opening."""
        if self.second is None:
            return ()
        assert self.seq is not None and self.opening is not None, self
        opening = opening_for(self.opening)
        first, second = self.first, self.second
        return tuple(
            ScheduledGame(round=self.round, pairing=self.pairing, index=2 * self.pair - 1 + i,
                          pair=self.pair, seq=self.seq + i, white=white, black=black, opening=opening)
            for i, (white, black) in enumerate(((first, second), (second, first))))

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.round, "pairing": self.pairing, "pair": self.pair, "first": self.first,
                "second": self.second, "seq": self.seq, "opening": self.opening}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RoundPair:
        return cls(round=data["round"], pairing=data["pairing"], pair=data["pair"],
                   first=data["first"], second=data.get("second"), seq=data.get("seq"),
                   opening=data.get("opening"))


@dataclass(frozen=True)
class Schedule:
    """The games of a tournament in playing order, and what made them."""

    pairings: tuple[Pairing, ...]
    games: tuple[ScheduledGame, ...]

    def __len__(self) -> int:
        return len(self.games)

    def __iter__(self):
        return iter(self.games)

    def by_key(self) -> dict[str, ScheduledGame]:
        return {game.key: game for game in self.games}


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


def build_schedule(
    engines: Sequence[str],
    *,
    format: str = "round-robin",
    games: int = 2,
    rounds: int = 1,
    openings: Sequence[Opening] | None = None,
    order: str = "sequential",
    seed: int = 0,
    random_plies: int = 0,
    game: Game | None = None,
) -> Schedule:
    """The full schedule of a tournament (see the module docstring).

    Games are ordered round by round; within a round, game pair by game pair
    and, for each, pairing by pairing -- so every pairing progresses at the
    same pace and both games of a pair are scheduled next to each other.
    """
    if games < 1:
        raise ScheduleError("--games must be at least 1")
    if rounds < 1:
        raise ScheduleError("--rounds must be at least 1")
    if format in SCHEDULED_FORMATS:
        check_size(len(engines), format, games, rounds)
    pairings = make_pairings(list(engines), format)
    opening_for = OpeningSource(game, openings, order, seed, random_plies)
    slots = []
    for pairing in pairings:
        for round_number in range(1, rounds + 1):
            for index in range(1, games + 1):
                count = (round_number - 1) * games + (index - 1)
                white, black = ((pairing.first, pairing.second) if count % 2 == 0
                                else (pairing.second, pairing.first))
                slots.append((round_number, count // 2, pairing.number, index, white, black))
    slots.sort(key=lambda s: (s[0], s[1], s[2], s[3]))
    scheduled = tuple(
        ScheduledGame(round=r, pairing=p, index=i, pair=pair + 1, seq=seq, white=w, black=b,
                      opening=opening_for(pair))
        for seq, (r, pair, p, i, w, b) in enumerate(slots)
    )
    return Schedule(pairings=tuple(pairings), games=scheduled)


def remaining(schedule: Iterable[ScheduledGame], finished_keys: set[str]) -> list[ScheduledGame]:
    """The scheduled games whose key is not among ``finished_keys``, in order."""
    return [game for game in schedule if game.key not in finished_keys]

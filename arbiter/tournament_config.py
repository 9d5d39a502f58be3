"""What a tournament is: :class:`TournamentConfig`, checked, and its identity.

The configuration once it is built (``specs/tournament.md`` §Config file):
the fields that define a tournament (its :meth:`~TournamentConfig.identity`,
how the same command finds the same tournament in the store), the settings
of how this run goes, :meth:`~TournamentConfig.validate` (every mistake
found before anything runs, as :class:`ConfigError`), and what the run
builds from it (the schedule, the round planner, the openings, SPRT, the
adjudication rules).  The number ranges shared by flags and file keys
(:data:`NUMBER_RANGES`, :func:`check_number`, :func:`stall_ms`) live here
because validation uses them too.

Where a configuration comes from (a TOML file, flags, ``--resume``) is
:mod:`arbiter.config`, which re-exports these names.  Pure: reads no file
(apart from what the games' referees load), starts nothing.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from arbiter.clock import DEFAULT_STALL_MS, MAX_TIME_MS, TimeControl, TimeControlError
from arbiter.engine import EngineConfig
from arbiter.games import GameError, get_game
from arbiter.knockout import MAX_TIEBREAK_PAIRS
from arbiter.match import DEFAULT_TC
from arbiter.match.adjudication import Adjudication, AdjudicationError
from arbiter.pgn import MAX_RECORD_MOVES
from arbiter.rating import SPRT, SPRTConfigError
from arbiter.rounds import (
    DEFAULT_PAIRS,
    DEFAULT_TIEBREAK_PAIRS,
    RoundPlanner,
    check_format_options,
    seeded,
)
from arbiter.schedule import (
    FORMATS,
    MAX_RANDOM_PLIES,
    MAX_SCHEDULE_GAMES,
    ORDERS,
    ROUND_FORMATS,
    Opening,
    OpeningSource,
    Schedule,
    ScheduleError,
    build_schedule,
    check_size,
)
from protocol.limits import MAX_INT, MIN_INT

__all__ = ["ConfigError", "TournamentConfig", "MAX_CONCURRENCY", "NUMBER_RANGES", "check_number", "stall_ms"]


class ConfigError(ValueError):
    """A tournament configuration that cannot be run; names the file/key at fault."""


#: Most games played at once: each runs two engine processes, and a thousand
#: at once is beyond any machine, so a larger number is a typo.
MAX_CONCURRENCY = 1024

#: The range of each whole-number setting, (lowest, highest), the same for
#: a flag (``--games``) and a config-file key (``games``).  The highest
#: values are those of the schedule (:data:`arbiter.schedule.MAX_SCHEDULE_GAMES`
#: per tournament, so neither factor alone may pass it), of the clock
#: (:data:`arbiter.clock.MAX_TIME_MS`) and of the protocol's signed 64-bit
#: integers (a number the store and the engines can hold).
NUMBER_RANGES: dict[str, tuple[int, int]] = {
    "games": (1, MAX_SCHEDULE_GAMES), "rounds": (1, MAX_SCHEDULE_GAMES),
    "concurrency": (1, MAX_CONCURRENCY), "random_plies": (0, MAX_RANDOM_PLIES),
    "timemargin": (0, MAX_TIME_MS), "maxplies": (1, MAX_INT), "seed": (MIN_INT, MAX_INT),
    "pairs": (1, MAX_SCHEDULE_GAMES), "tiebreak_pairs": (0, MAX_TIEBREAK_PAIRS),
    "opening_plies": (0, MAX_RECORD_MOVES),
}


def check_number(what: str, key: str, value: int | None) -> None:
    """``value`` within :data:`NUMBER_RANGES` of ``key`` (None: not given);
    ``what`` names it in the message (``--games`` or ``games``)."""
    if value is None:
        return
    low, high = NUMBER_RANGES[key]
    if value < low:
        raise ConfigError(f"{what} must be at least {low}, not {value}")
    if value > high:
        raise ConfigError(f"{what} must be at most {high}, not {value}")


def stall_ms(what: str, seconds: float) -> int:
    """The stall limit in ms from seconds: finite, more than 0 and at most
    :data:`arbiter.clock.MAX_TIME_MS` (``--stall inf`` is refused, not an
    OverflowError)."""
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConfigError(f"{what} must be a finite number of seconds more than 0, not {seconds}")
    if seconds * 1000 > MAX_TIME_MS:
        raise ConfigError(f"{what} must be at most {MAX_TIME_MS // 1000} seconds, not {seconds}")
    return max(1, round(seconds * 1000))


@dataclass
class TournamentConfig:
    """Everything that defines a tournament, plus how to run it.

    The fields up to ``sprt`` define the tournament (they make its
    :meth:`identity`); ``concurrency``, ``restart``, ``pgn`` and ``log_dir``
    only say how this run goes, so a tournament may be resumed with others.
    """

    game: str
    engines: list[EngineConfig]
    name: str = ""
    format: str = "round-robin"
    games: int = 2
    rounds: int = 1
    openings: list[Opening] = field(default_factory=list)
    openings_file: str | None = None
    #: ``--opening-plies``: each opening of the file cut to this many plies
    #: (None: whole); kept for the record, the cut openings define the tournament
    opening_plies: int | None = None
    order: str = "sequential"
    seed: int = 0
    random_plies: int = 0
    tc: str = DEFAULT_TC
    timemargin_ms: int = 0
    maxplies: int | None = None
    stall_ms: int = DEFAULT_STALL_MS
    sprt: str | None = None
    #: score adjudication (``specs/match.md`` §Adjudication), canonical text; None: off
    resign: str | None = None
    draw: str | None = None
    #: a Swiss or knockout tournament's seeds: these engines first, in this
    #: order, then the others as given (``specs/tournament.md`` §Seeds)
    seeds: list[str] = field(default_factory=list)
    #: a knockout match's game pairs, and the most extra pairs while level
    pairs: int = DEFAULT_PAIRS
    tiebreak_pairs: int = DEFAULT_TIEBREAK_PAIRS
    # how this run goes (not part of the identity)
    concurrency: int = 1
    restart: bool = False
    pgn: str | None = None
    log_dir: str | None = None
    #: where the games are played: None here, else a cluster ADDRESS
    #: (``specs/cluster.md``); not stored, so a resume plays where it is told
    cluster: str | None = None
    #: worker processes (``specs/tournament.md`` §Worker processes): a number
    #: (1: this process) or ``auto``; not stored, as ``cluster``
    workers: int | str = "auto"
    #: strict mode (``specs/match.md`` §Strict mode): warnings stored with each
    #: game, counted, a non-zero exit; a run setting
    strict: bool = False

    def __post_init__(self) -> None:
        self.engines = [copy.deepcopy(e) for e in self.engines]
        for engine in self.engines:
            if not engine.name:
                engine.name = engine.label  # names are fixed before any engine runs
        if not self.name:
            self.name = f"{self.game} {self.format}"

    # -- checks -------------------------------------------------------------

    def validate(self) -> None:
        """Raise :class:`ConfigError` on anything that cannot run."""
        try:
            get_game(self.game)
        except GameError as exc:
            raise ConfigError(str(exc)) from None
        if self.format not in FORMATS:
            raise ConfigError(f"unknown format {self.format!r}; choose one of: {', '.join(FORMATS)}")
        if self.order not in ORDERS:
            raise ConfigError(f"unknown opening order {self.order!r}; choose one of: {', '.join(ORDERS)}")
        for key, value in (("games", self.games), ("rounds", self.rounds),
                           ("concurrency", self.concurrency), ("random_plies", self.random_plies),
                           ("timemargin", self.timemargin_ms), ("maxplies", self.maxplies),
                           ("seed", self.seed), ("pairs", self.pairs),
                           ("tiebreak_pairs", self.tiebreak_pairs)):
            check_number(key, key, value)
        if not 1 <= self.stall_ms <= MAX_TIME_MS:
            raise ConfigError(f"stall must be from 1 to {MAX_TIME_MS} ms, not {self.stall_ms}")
        try:
            TimeControl.parse(self.tc)
            check_format_options(self.format, self.engine_names, games=self.games, rounds=self.rounds,
                                 seeds=self.seeds, pairs=self.pairs, tiebreak_pairs=self.tiebreak_pairs)
            if self.format not in ROUND_FORMATS:
                check_size(len(self.engines), self.format, self.games, self.rounds)
        except (TimeControlError, ScheduleError) as exc:
            raise ConfigError(str(exc)) from None
        self.adjudication()
        if self.sprt is not None:
            self.sprt_test()
            if len(self.engines) != 2:
                raise ConfigError(f"sprt needs exactly two engines, not {len(self.engines)}")
            if self.format in ROUND_FORMATS:
                raise ConfigError(f"sprt tests a two-engine match: not a {self.format} tournament")
        try:
            if self.format in ROUND_FORMATS:  # paired as it goes: the first opening, drawn now
                self.opening_source()(0)
            else:
                self.schedule()
        except ScheduleError as exc:
            raise ConfigError(str(exc)) from None

    def adjudication(self) -> Adjudication:
        """The score rules (empty: off); ConfigError names the bad one."""
        try:
            return Adjudication.parse(self.resign, self.draw)
        except AdjudicationError as exc:
            raise ConfigError(str(exc)) from None

    def sprt_test(self) -> SPRT | None:
        if self.sprt is None:
            return None
        try:
            return SPRT.parse(self.sprt)
        except SPRTConfigError as exc:
            raise ConfigError(str(exc)) from None

    @property
    def engine_names(self) -> list[str]:
        """The engines' names (each set by ``__post_init__``)."""
        return [e.name or e.label for e in self.engines]

    def engine(self, name: str) -> EngineConfig:
        for engine in self.engines:
            if engine.name == name:
                return engine
        raise KeyError(name)

    def schedule(self) -> Schedule:
        """The whole schedule of a round-robin or gauntlet; ScheduleError
        for a Swiss or knockout tournament (:meth:`round_planner`)."""
        return build_schedule(
            self.engine_names, format=self.format, games=self.games, rounds=self.rounds,
            openings=self.openings or None, order=self.order, seed=self.seed,
            random_plies=self.random_plies, game=get_game(self.game))

    @property
    def seeded_names(self) -> list[str]:
        """The engines' names in seed order (:attr:`seeds` first)."""
        return seeded(self.engine_names, self.seeds)

    def round_planner(self) -> RoundPlanner:
        """What a Swiss or knockout run pairs next (``arbiter/rounds.py``)."""
        return RoundPlanner(self.format, self.seeded_names, rounds=self.rounds, pairs=self.pairs,
                            tiebreak_pairs=self.tiebreak_pairs)

    def opening_source(self) -> OpeningSource:
        """The opening of each game pair number (``specs/tournament.md`` §Openings)."""
        return OpeningSource(get_game(self.game), self.openings or None, self.order, self.seed,
                             self.random_plies)

    # -- identity and storage ------------------------------------------------

    def defining(self) -> dict[str, Any]:
        """The part of the configuration that defines the tournament."""
        return {
            "name": self.name, "game": self.game,
            "engines": [e.to_dict() for e in self.engines],
            "format": self.format, "games": self.games, "rounds": self.rounds,
            "openings": [o.to_dict() for o in self.openings], "order": self.order,
            "seed": self.seed, "random_plies": self.random_plies, "tc": self.tc,
            "timemargin_ms": self.timemargin_ms, "maxplies": self.maxplies,
            "stall_ms": self.stall_ms, "sprt": self.sprt,
            # only when on: the identity of a tournament without them is unchanged
            **{key: value for key, value in (("resign", self.resign), ("draw", self.draw))
               if value is not None},
            **self._format_options(),
        }

    def _format_options(self) -> dict[str, Any]:
        """A Swiss or knockout tournament's own settings (none for the other
        formats, whose identity is as it was before these formats)."""
        if self.format == "swiss":
            return {"seeds": list(self.seeds)}
        if self.format == "knockout":
            return {"seeds": list(self.seeds), "pairs": self.pairs, "tiebreak_pairs": self.tiebreak_pairs}
        return {}

    def identity(self) -> str:
        """SHA-256 of :meth:`defining`: the same command finds the same tournament."""
        text = json.dumps(self.defining(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        data = self.defining()
        data.update(openings_file=self.openings_file, opening_plies=self.opening_plies,
                    concurrency=self.concurrency,
                    restart=self.restart, pgn=self.pgn, log_dir=self.log_dir)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TournamentConfig:
        """Inverse of :meth:`to_dict` (a stored tournament's ``config``)."""
        engines = [EngineConfig(**e) for e in data["engines"]]
        known = set(cls.__dataclass_fields__) - {"engines", "openings"}
        values = {k: v for k, v in data.items() if k in known}
        return cls(engines=engines, openings=[Opening.from_dict(o) for o in data.get("openings") or []],
                   **values)

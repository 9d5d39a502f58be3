"""A tournament in the store: found or created for a configuration, its
engines checked before it is, its standings read, deleted
(``specs/tournament.md``).  Running one is :mod:`arbiter.run`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import trio

from arbiter.config import TournamentConfig
from arbiter.engine import EngineConfig, EngineStartError, EngineTimeouts, open_engine
from arbiter.enginespec import REMOTE_PREFIX
from arbiter.rating import SPRT, SPRTConfigError
from arbiter.run.gameloop import startup_limit
from arbiter.schedule import ROUND_FORMATS, RoundPair
from arbiter.standings import Standings, compute_standings
from arbiter.store import RunStatus, Store

__all__ = ["open_tournament", "tournament_standings", "tournament_sprt", "rounds_view", "check_engines",
           "delete_tournament", "CHECK_ATTEMPTS"]


# --------------------------------------------------------------------------
# Opening or finding the tournament in the store
# --------------------------------------------------------------------------


def open_tournament(store: Store, config: TournamentConfig, *, new: bool = False
                    ) -> tuple[int, str]:
    """The tournament for ``config``: an existing one with the same identity
    (unless ``new``), or a new one.  Returns (id, how): ``how`` is ``new``,
    ``resume`` or ``finished`` (nothing left to play)."""
    identity = config.identity()
    existing = None if new else store.find_tournament(identity)
    if existing is not None:
        return existing["id"], "finished" if existing["status"] == RunStatus.FINISHED else "resume"
    tournament_id = store.create_tournament(
        name=config.name, game=config.game, format=config.format, identity=identity,
        config=config.to_dict(),
        engines=[{**e.to_dict(), "name": e.name} for e in config.engines],
        total_games=_total(config))
    return tournament_id, "new"


def _total(config: TournamentConfig) -> int:
    """The games a new tournament of ``config`` plays, as far as known (a
    Swiss or knockout run's grows as its rounds are paired)."""
    if config.format in ROUND_FORMATS:
        return config.round_planner().total_games()
    return len(config.schedule())


#: tries each engine gets in :func:`check_engines`: a failed start is tried
#: once more with a fresh process, as during a run (§Engine faults)
CHECK_ATTEMPTS = 2


async def check_engines(config: TournamentConfig, *, timeouts: EngineTimeouts | None = None,
                        on_retry: Callable[[EngineStartError], None] | None = None) -> None:
    """Start each engine of ``config`` once, before anything is stored: its
    process, handshake and options, and the game (:meth:`Engine.new_game`),
    then end it.  A command that is not found, an option the engine does
    not declare or a game it does not play is then found before a
    tournament is created (``specs/tournament.md`` §Engine faults).

    An engine that fails is tried once more with a fresh process
    (``on_retry`` is told of the first failure); the first engine, in the
    order of ``config``, that fails twice raises its
    :class:`EngineStartError`.  The engines start at once, at most
    :func:`~arbiter.run.gameloop.startup_limit` together, without I/O logs (a log of ``--log DIR``
    is a game's); every process is gone on return."""
    failed: dict[str, EngineStartError] = {}
    limiter = trio.CapacityLimiter(startup_limit())

    async def one(engine_config: EngineConfig) -> None:
        for attempt in range(1, CHECK_ATTEMPTS + 1):
            try:
                async with limiter, open_engine(engine_config, timeouts=timeouts) as engine:
                    await engine.new_game(config.game)
                return
            except EngineStartError as exc:
                if attempt == CHECK_ATTEMPTS:
                    failed[engine_config.label] = exc
                elif on_retry is not None:
                    on_retry(exc)

    async with trio.open_nursery() as nursery:
        for engine_config in config.engines:
            if not engine_config.cmd.startswith(REMOTE_PREFIX):  # a remote engine is waited for in the run
                nursery.start_soon(one, engine_config)
    for engine_config in config.engines:
        if engine_config.label in failed:
            raise failed[engine_config.label]


def delete_tournament(store: Store, tournament_id: int) -> int:
    """Remove tournament ``tournament_id`` and every row that belongs to it
    (its games, entrants, events: each table with a ``tournament`` column,
    and the engines no other tournament names), in one transaction; returns how many games went with it.  A tournament a
    run holds now is refused (:class:`~arbiter.store.TournamentBusyError`)."""
    with store.claim_run(tournament_id), store.transaction():
        games = store.count_games(tournament_id)
        tables = [name for name in store.db.table_names()
                  if name != "tournaments" and "tournament" in store.db.table(name).columns_dict]
        for table in tables:
            store.db.execute(f"delete from [{table}] where tournament = ?", [tournament_id])
        store.db.execute("delete from tournaments where id = ?", [tournament_id])
        # an engine is kept across tournaments (specs/storage.md): only one
        # that no other tournament's entrant or game names goes with it
        store.db.execute("""delete from engines where id not in (select engine from entrants)
                            and id not in (select white_engine from games where white_engine is not null)
                            and id not in (select black_engine from games where black_engine is not null)""")
    return games


def tournament_standings(store: Store, tournament: Mapping[str, Any]) -> Standings:
    """The standings of a stored tournament (also one still running)."""
    engines = tournament.get("engines") or [e["name"] for e in store.engines(tournament["id"])]
    return compute_standings(engines, store.games(tournament["id"], with_record=False),
                             tournament_sprt(tournament), game=tournament.get("game"),
                             scheduled=tournament.get("total_games"))


def rounds_view(store: Store, tournament: Mapping[str, Any]) -> tuple[dict[str, Any], str] | None:
    """What a Swiss or knockout tournament adds to its standings: the JSON
    (``{"swiss": [...]}`` or ``{"bracket": {...}}``) and the text (the Swiss
    table with its tie-breaks, or the bracket); None for other formats or a
    configuration that no longer reads (``specs/tournament.md`` §Swiss, §Knockout)."""
    if tournament.get("format") not in ROUND_FORMATS:
        return None
    try:
        config = TournamentConfig.from_dict(tournament["config"])
        planner = config.round_planner()
    except (KeyError, TypeError, ValueError):
        return None
    pairs = [RoundPair.from_dict(row) for row in store.pairings(tournament["id"])]
    rows = store.games(tournament["id"], with_record=False)
    data = planner.to_json(pairs, rows)
    if config.format == "knockout":
        return data, planner.bracket(pairs, rows).render()
    lines = ["  #   engine           score  games  byes  Buchholz  Buchholz-1   S-B"]
    for rank, line in enumerate(planner.swiss_table(pairs, rows), start=1):
        lines.append(f"  {rank:<3} {line.name:<16} {line.score:>5g}  {line.games:>5}  {line.byes:>4}  "
                     f"{line.buchholz:>8g}  {line.buchholz_cut1:>10g}  {line.sonneborn_berger:>5g}")
    return data, "\n".join(lines)


def tournament_sprt(tournament: Mapping[str, Any]) -> SPRT | None:
    """The SPRT of a stored tournament (None without one, or with one that
    no longer parses)."""
    config = tournament.get("config") or {}
    if not config.get("sprt"):
        return None
    try:
        return SPRT.parse(config["sprt"])
    except SPRTConfigError:
        return None

"""A Swiss or knockout run at the store level, for the format tests: the
loop a real run makes between rounds (arbiter/rounds.py's module docstring),
with each game's result chosen by a function instead of played by engines.

Real parts: a real SQLite store, the real planner, the real schedule of each
stored pair; only the engines are replaced by ``result_of``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from arbiter.config import TournamentConfig
from arbiter.engine import EngineConfig
from arbiter.schedule import RoundPair, ScheduledGame
from arbiter.store import Store

#: a game's result from its scheduled game
ResultOf = Callable[[ScheduledGame], str]


def config(format: str, names: str | list[str], **kw) -> TournamentConfig:
    engines = [EngineConfig(cmd="python3 x.py", name=name) for name in names]
    made = TournamentConfig(game="troll", engines=engines, format=format, **kw)
    made.validate()
    return made


def by_strength(order: list[str], draws: frozenset[frozenset[str]] = frozenset()) -> ResultOf:
    """The engine earlier in ``order`` wins, except one game in four (chosen
    by a hash of the key, so the same key always gives the same result); the
    pairs in ``draws`` always draw."""
    strength = {name: -i for i, name in enumerate(order)}

    def result(game: ScheduledGame) -> str:
        if frozenset((game.white, game.black)) in draws:
            return "1/2-1/2"
        upset = hashlib.sha256(game.key.encode()).digest()[0] % 4 == 0
        white_better = strength[game.white] > strength[game.black]
        return "1-0" if white_better != upset else "0-1"

    return result


def record(game: ScheduledGame, result: str) -> dict:
    return {"game": "troll", "white": game.white, "black": game.black, "fen": None,
            "opening_moves": list(game.opening.moves), "moves": [], "result": result,
            "termination": "connection", "termination_detail": "by the test's choice",
            "start_time": "", "end_time": ""}


def stored_pairs(store: Store, tid: int) -> list[RoundPair]:
    return [RoundPair.from_dict(row) for row in store.pairings(tid)]


def run(path: Path, made: TournamentConfig, result_of: ResultOf, *, tid: int | None = None,
        stop_after: int | None = None) -> int:
    """Play ``made`` into the database at ``path`` as a run does (a new
    tournament, or ``tid`` resumed); stop after ``stop_after`` games of this
    run (as a kill would: nothing more is written).  Returns the tournament id."""
    planner = made.round_planner()
    opening_for = made.opening_source()
    with Store(path) as store:
        if tid is None:
            tid = store.create_tournament(
                name=made.name, game=made.game, format=made.format, identity=made.identity(),
                config=made.to_dict(), engines=[{**e.to_dict(), "name": e.name} for e in made.engines],
                total_games=planner.total_games())
        played = 0
        while True:
            pairs = stored_pairs(store, tid)
            games = store.games(tid, with_record=False)
            new = planner.next_pairs(pairs, games)
            if new:
                store.add_pairings(tid, [pair.to_dict() for pair in new])
                continue
            done = {row["key"] for row in games}
            pending = [g for pair in pairs for g in pair.games(opening_for) if g.key not in done]
            if not pending:
                assert planner.finished(pairs, games)
                return tid
            game = min(pending, key=lambda g: g.seq)
            store.save_game(tid, key=game.key, seq=game.seq, round=game.round, pairing=game.pairing,
                            index=game.index, pair=game.pair, opening=game.opening.to_dict(),
                            record=record(game, result_of(game)))
            played += 1
            if stop_after is not None and played == stop_after:
                return tid


def contents(path: Path, tid: int) -> tuple[list, list]:
    """What two runs must agree on: the stored pairs and the games."""
    with Store(path, readonly=True) as store:
        pairs = [{k: v for k, v in row.items() if k != "created"} for row in store.pairings(tid)]
        games = [(g["key"], g["seq"], g["white"], g["black"], g["result"], g["opening"])
                 for g in store.games(tid, with_record=False)]
    return pairs, games

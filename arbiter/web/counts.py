"""A stored tournament's standings kept up game by game, for the view
(``specs/web.md`` §One source of truth), and the tables drawn from them.

:class:`Count` counts each game row once into :class:`arbiter.standings.Tally`
(the standings ``arbiter standings`` prints), beside it the results by
colour and the SPRT's log-likelihood ratio every few games (the SPRT chart).
:func:`crosstable` is each engine's results against each other, from the
standings' own pairs.
"""

from __future__ import annotations

from typing import Any

from arbiter.games import Result
from arbiter.store import Store

#: points of the LLR chart: a point every ``step`` games, ``step`` doubled
#: (every other point dropped) whenever there are twice as many, so the
#: chart's cost and picture stay bounded however long the SPRT runs
LLR_POINTS = 100

#: the columns the standings count (``arbiter.standings.Tally.add``)
_COUNTED = ("id", "white", "black", "result", "termination", "pairing", "pair")

#: a stored result -> its slot in the colours' count (White won, drawn, Black won)
_COLOUR_SLOT = {Result.WHITE_WINS: 0, Result.DRAW: 1, Result.BLACK_WINS: 2}


class Count:
    """A stored tournament's standings kept up game by game.

    The same figures as :func:`arbiter.tournament.tournament_standings`
    (``arbiter standings``): the same SPRT and engines from the stored
    tournament, every game row into the same :class:`arbiter.standings.Tally`
    (its counts do not depend on the order the games come in).  The rows
    are read as plain tuples of the counted columns, and only those stored
    since the last look (games are only ever added): a running tournament
    of 10,000 games costs a few new rows per update, not a recount.  Beside
    it, the LLR after every ``step``-th game (:data:`LLR_POINTS`) and the
    results by colour."""

    def __init__(self, store: Store, row: dict[str, Any]):
        from arbiter.standings import Tally
        from arbiter.tournament import tournament_sprt

        self.tournament = row["id"]
        self.sprt = tournament_sprt(row)
        self.tally = Tally(row.get("engines") or [e["name"] for e in store.engines(row["id"])],
                           game=row.get("game"), scheduled=row.get("total_games"))
        self.last_id = 0
        self.step = 1
        self.points: list[list[float]] = [[0, 0.0]] if self.sprt else []
        #: games White won, drawn, Black won
        self.colours = [0, 0, 0]

    def update(self, store: Store) -> None:
        """Count the games stored since the last update."""
        rows = store.db.conn.execute(f"select {', '.join(_COUNTED)} from games where tournament = ? "
                                     "and id > ? order by id", [self.tournament, self.last_id]).fetchall()
        tally, names, colours = self.tally, _COUNTED[1:], self.colours
        while tally.games + len(rows) > self.step * LLR_POINTS:  # no point made only to be dropped
            self._thin()
        for values in rows:
            tally.add(dict(zip(names, values[1:], strict=True)))
            slot = _COLOUR_SLOT.get(values[3])
            if slot is not None:
                colours[slot] += 1
            if self.sprt and tally.games % self.step == 0:
                self._sample()
        if rows:
            self.last_id = rows[-1][0]
            if self.sprt and self.points[-1][0] != tally.games:
                self._sample()

    def _sample(self) -> None:
        """The LLR now: the SPRT of the standings' first pair, as
        :meth:`arbiter.standings.Tally.standings` takes it (its counts, not a
        whole standings with joint ratings: a third of the first request)."""
        from arbiter.rating import PairStats

        tally = self.tally
        assert self.sprt is not None
        pairs = sorted(tally.per_pair, key=lambda k: (tally.order[k[0]], tally.order[k[1]]))
        stats = PairStats(0, 0, 0)
        if pairs:
            wins, draws, losses = tally.per_pair[pairs[0]]
            penta = tally.penta.get(pairs[0])
            stats = PairStats(wins, draws, losses, pentanomial=None if penta is None else (
                penta[0], penta[1], penta[2], penta[3], penta[4]))
        point = [tally.games, round(self.sprt.status(stats).llr, 4)]
        if len(self.points) > 1 and self.points[-1][0] % self.step:  # the last one was off-step
            self.points[-1] = point
        else:
            self.points.append(point)
        if len(self.points) > 2 * LLR_POINTS:
            self._thin()

    def _thin(self) -> None:
        """Twice the step: every other point goes (the last stays)."""
        self.step *= 2
        last = self.points[-1:]
        self.points = [p for p in self.points[:-1] if p[0] % self.step == 0] + last

    def standings(self) -> Any:
        return self.tally.standings(self.sprt)

    def colour_counts(self) -> dict[str, Any]:
        """The results by colour: games White won, drawn and Black won, and
        White's score (None before a game): the first move's advantage as
        counted, beside the standings."""
        white, draws, black = self.colours
        games = white + draws + black
        return {"games": games, "white_wins": white, "draws": draws, "black_wins": black,
                "white_score": round((white + draws / 2) / games, 4) if games else None}


def crosstable(standings: dict[str, Any]) -> dict[str, Any]:
    """W-D-L of each engine against each other, in the standings' order,
    from the standings' own pairs (each pair seen from both sides), with the
    pentanomial counts of the complete game pairs."""
    names = [e["name"] for e in standings["engines"]]
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for pair in standings["pairs"]:
        a, b = pair["first"], pair["second"]
        penta = pair["pentanomial"]
        cells[a, b] = {"wins": pair["wins"], "draws": pair["draws"], "losses": pair["losses"],
                       "pentanomial": penta}
        cells[b, a] = {"wins": pair["losses"], "draws": pair["draws"], "losses": pair["wins"],
                       "pentanomial": None if penta is None else penta[::-1]}
    return {"engines": names,
            "rows": [{"name": a, "cells": [cells.get((a, b)) for b in names]} for a in names]}


__all__ = ["LLR_POINTS", "Count", "crosstable"]

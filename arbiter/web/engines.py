"""The engines of a results database as the view shows them (``specs/web.md``
§Engines): the list of every engine, and one engine's page (its build, its
results, its rating after each tournament it played, its results against
each opponent, its games).

The ratings are ``arbiter ratings``'s (``specs/ratings.md`` §Rating lists):
the joint Bradley-Terry ratings of :func:`arbiter.rating.joint_ratings`
over every game of one game kind, the mean at 0, the entrants of those
tournaments listed; after tournament T the games of the tournaments up to T
(by id), so the last point is what ``arbiter ratings --game G`` prints now.
A game of an engine against itself is counted as played but never rated
(it says nothing of strength; ``arbiter ratings`` leaves it out too).
"""

from __future__ import annotations

from typing import Any

from arbiter.games import Result
from arbiter.store import Store

from .queries import rows

#: tournaments of one game kind an engine's rating history shows at most (the
#: latest): each point is one joint fit over the games up to it
RATING_HISTORY = 40

#: White's points per stored result
_WHITE_POINTS = {Result.WHITE_WINS: 1.0, Result.DRAW: 0.5, Result.BLACK_WINS: 0.0}

#: each engine's games from its own side: one row per engine and game
#: (a game against itself is one row: it is one game of that engine)
_SIDES = ("select white as name, black as opponent, tournament, game, end_time, result = '1-0' as win, "
          "result = '1/2-1/2' as draw, result = '0-1' as loss from games where {cond} union all "
          "select black, white, tournament, game, end_time, result = '0-1', result = '1/2-1/2', "
          "result = '1-0' from games where white != black and ({cond})")


def engine_list(store: Store) -> list[dict[str, Any]]:
    """Every engine of the database: its games, W-D-L, points and score,
    the tournaments and game kinds it played, its last game; engines with
    the most games first (one that never played last)."""
    played = rows(store, "select name, count(*) as games, sum(win) as wins, sum(draw) as draws, "
                  "sum(loss) as losses, count(distinct tournament) as tournaments, "
                  "group_concat(distinct game) as kinds, max(end_time) as last_game from ("
                  + _SIDES.format(cond="1") + ") group by name", [])
    known = {r["name"]: r for r in played}
    for row in rows(store, "select name from engines order by id", []):
        known.setdefault(row["name"], {"name": row["name"], "games": 0, "wins": 0, "draws": 0,
                                       "losses": 0, "tournaments": 0, "kinds": None, "last_game": None})
    listed = []
    for row in known.values():
        games = row["games"]
        points = row["wins"] + row["draws"] / 2
        listed.append({**row, "kinds": sorted((row["kinds"] or "").split(",")) if row["kinds"] else [],
                       "points": points, "score": round(points / games, 4) if games else None})
    listed.sort(key=lambda r: (-r["games"], r["name"]))
    return listed


def engine_summary(store: Store, name: str) -> dict[str, Any] | None:
    """One engine's build (the latest seen), totals and results against
    each opponent; None when the database has no such engine."""
    built = rows(store, "select id_name, id_author, command, executable_sha256, first_seen, last_seen "
                 "from engines where name = ?", [name])
    games = rows(store, "select opponent, game, count(*) as games, sum(win) as wins, sum(draw) as draws, "
                 "sum(loss) as losses, count(distinct tournament) as tournaments from ("
                 + _SIDES.format(cond="white = ? or black = ?")
                 + ") where name = ? group by game, opponent order by game, count(*) desc, opponent",
                 [name, name, name, name, name])
    if not built and not games:
        return None
    wins, draws, losses = (sum(g[k] for g in games) for k in ("wins", "draws", "losses"))
    total = wins + draws + losses
    tournaments = rows(store, "select count(distinct tournament) as n from games "
                       "where white = ? or black = ?", [name, name])[0]["n"]
    return {"build": built[0] if built else None,
            "totals": {"games": total, "wins": wins, "draws": draws, "losses": losses,
                       "points": wins + draws / 2, "score": round((wins + draws / 2) / total, 4) if total else None,
                       "tournaments": tournaments},
            "opponents": [_head_to_head(name, g) for g in games]}


def _head_to_head(name: str, row: dict[str, Any]) -> dict[str, Any]:
    """One opponent's line: W-D-L from the engine's side, score, and the
    Elo difference it measures (with why a figure is undefined)."""
    from arbiter.rating import PairStats

    if row["opponent"] == name:  # its own games: shown, never rated
        return {**row, "self": True, "score": None, "elo": None, "elo_error": None,
                "null_reasons": {"elo": "games against itself: not rated",
                                 "elo_error": "games against itself: not rated"}}
    stats = PairStats(row["wins"], row["draws"], row["losses"])
    reasons = {key: why for key in ("elo", "elo_error") if (why := stats.reason(key)) is not None}
    return {**row, "self": False, "score": _rounded(stats.score, 4), "elo": _rounded(stats.elo, 1),
            "elo_error": _rounded(stats.elo_error, 1), "null_reasons": reasons}


def rating_history(store: Store, name: str) -> list[dict[str, Any]]:
    """The engine's rating after each tournament it played, one series per
    game kind: ``{"game", "points": [{tournament, name, created, games,
    elo, error, rank, engines}]}`` (the latest :data:`RATING_HISTORY`)."""
    from arbiter.rating import Anchor, joint_ratings
    from arbiter.standings import by_first_mover, first_mover

    kinds = rows(store, "select distinct t.game from games g join tournaments t on t.id = g.tournament "
                 "where g.white = ? or g.black = ? order by t.game", [name, name])
    series = []
    for kind in (k["game"] for k in kinds):
        side = first_mover(kind)
        tournaments = rows(store, "select id, name, created from tournaments where game = ? order by id",
                           [kind])
        mine = {r["tournament"] for r in rows(store, "select distinct tournament from games where "
                                              "game = ? and (white = ? or black = ?)", [kind, name, name])}
        shown = [t["id"] for t in tournaments if t["id"] in mine][-RATING_HISTORY:]
        by_tournament: dict[int, list[tuple[str, str, float]]] = {}
        for game in store.rated_games(game=kind):
            points = _WHITE_POINTS.get(game["result"])
            if points is not None and game["white"] != game["black"]:
                by_tournament.setdefault(game["tournament"], []).append(
                    by_first_mover(game["white"], game["black"], points, side))
        scored: list[tuple[str, str, float]] = []
        entrants: dict[str, None] = {}
        points_list = []
        for tournament in tournaments:
            scored += by_tournament.get(tournament["id"], [])
            entrants.update(dict.fromkeys(e["name"] for e in store.engines(tournament["id"])))
            if tournament["id"] not in shown:
                continue
            ratings = joint_ratings(scored, anchor=Anchor(), engines=entrants, first_move=True)  # as `arbiter ratings`
            rated = [r for r in ratings if r.elo is not None]
            try:
                mine_rating = ratings[name]
            except KeyError:  # only games against itself so far: nothing rates it
                continue
            points_list.append({
                "tournament": tournament["id"], "name": tournament["name"], "created": tournament["created"],
                "games": mine_rating.games, "elo": _rounded(mine_rating.elo, 1),
                "error": _rounded(mine_rating.error, 1),
                "rank": next((i for i, r in enumerate(rated, 1) if r.engine == name), None),
                "engines": len(rated)})
        series.append({"game": kind, "points": points_list})
    return series


def _rounded(value: float | None, digits: int) -> float | None:
    """A finite figure rounded, else None (JSON has no infinity)."""
    import math

    return None if value is None or not math.isfinite(value) else round(value, digits)


__all__ = ["RATING_HISTORY", "engine_list", "engine_summary", "rating_history"]

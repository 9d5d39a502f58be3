"""``arbiter ratings``: one rating list over the games of many tournaments.

The joint maximum-likelihood ratings of :mod:`arbiter.rating.joint` (the
Bradley-Terry model with a draw as half a win and a first-move term fitted
with the ratings, the model the standings use) over every stored game of the
chosen game and tournaments, in the way Ordo and BayesElo rate engine lists;
per engine its games, points, score, draw ratio and number of opponents; the
first-move advantage; with ``--los`` the likelihood of superiority between
every two engines.  Format and rules: ``specs/ratings.md`` §Rating lists.
Light: it reads the database read-only and imports neither trio nor the run
machinery.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import typer

from arbiter.figures import (
    ELO_DIGITS,
    FRACTION_DIGITS,
    fmt_first_move,
    fmt_percent,
    fmt_signed,
    json_number,
)
from arbiter.games import GAME_NAMES, Result
from arbiter.rating import DEFAULT_PRIOR_DRAWS, Anchor, RatingList, joint_ratings
from arbiter.standings import SELF_PLAY, FirstMove, by_first_mover, first_mover, self_play_warning
from arbiter.store import DEFAULT_DB, Store, StoreError, explain

from .app import app, fail

#: White's points for each stored result (specs/storage.md §games)
_WHITE_POINTS = {Result.WHITE_WINS: 1.0, Result.BLACK_WINS: 0.0, Result.DRAW: 0.5}

#: the model, as the JSON names it
MODEL = ("bradley-terry, a draw counting as half a win, with a first-move term "
         "(specs/ratings.md §Joint ratings, §First-move advantage)")

#: why an engine's figures are undefined (JSON ``reason``).  With the prior's
#: virtual draws no rating or error bar is infinite (specs/ratings.md §Prior):
#: an engine without games is the only undefined line.
NO_GAMES = "no games: nothing measures its rating, score or draw ratio"


@dataclass
class _Tally:
    """One engine's games in the chosen selection."""

    games: int = 0
    points: float = 0.0
    draws: int = 0
    opponents: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Selection:
    """What is rated: the game, the tournaments, their games and entrants."""

    game: str | None
    tournaments: list[int]
    games: list[dict[str, Any]]
    entrants: dict[int, list[dict[str, Any]]]


def parse_anchor(text: str | None) -> Anchor:
    """``NAME=ELO`` (that engine fixed at ELO) or None (the mean at 0):
    specs/ratings.md §Rating lists.  ``ValueError`` says what is wrong."""
    if text is None:
        return Anchor()
    name, sep, value = text.rpartition("=")
    if not sep or not name:
        raise ValueError(f"--anchor {text!r}: expected NAME=ELO (mcts=1500)")
    try:
        rating = float(value)
    except ValueError:
        raise ValueError(f"--anchor {text!r}: {value!r} is not a number") from None
    if not math.isfinite(rating):
        raise ValueError(f"--anchor {text!r}: the rating must be a finite number")
    return Anchor(name, rating)


def select(store: Store, game: str | None, tournaments: Sequence[int]) -> Selection:
    """The games to rate (``ValueError`` for a tournament that is not there,
    or games of several kinds with no ``game`` to choose one)."""
    known = {t["id"]: t for t in store.tournaments()}
    missing = [t for t in tournaments if t not in known]
    if missing:
        raise ValueError(f"{store.path}: no tournament {missing[0]}")
    rows = store.rated_games(game=game, tournaments=tournaments or None)
    if game is None:
        kinds = sorted({r["game"] for r in rows if r["game"]})
        if len(kinds) > 1:
            counts = ", ".join(f"{k} ({sum(1 for r in rows if r['game'] == k)} games)" for k in kinds)
            raise ValueError(f"{store.path} holds games of {counts}: choose one with --game "
                             "(a rating list rates one game)")
        game = kinds[0] if kinds else None
    chosen = sorted(t for t in (set(tournaments) or known)  # an entrant of another game is none
                    if game is None or known[t]["game"] == game)
    return Selection(game, chosen, rows, {t: store.engines(t) for t in chosen})


@dataclass
class _Games:
    """The chosen games sorted for the list: each engine's tally, the rated
    games as (engine moving first, its opponent, score of the first), the
    first mover's games and points, and the games of an engine against
    itself per engine (not rated: specs/ratings.md §Rating lists)."""

    tallies: dict[str, _Tally] = field(default_factory=dict)
    scored: list[tuple[str, str, float]] = field(default_factory=list)
    first_points: float = 0.0
    self_play: Counter = field(default_factory=Counter)


def _sorted_games(games: Iterable[Mapping[str, Any]], side: str) -> _Games:
    out = _Games()
    for row in games:
        white, black, points = row["white"], row["black"], _WHITE_POINTS.get(row["result"])
        if points is None:
            continue  # no stored game has another result; a damaged row is not rated
        if white == black:
            out.self_play[white] += 1
            continue
        first, second, score = by_first_mover(white, black, points, side)
        out.scored.append((first, second, score))
        out.first_points += score
        for name, own, other in ((white, points, black), (black, 1.0 - points, white)):
            tally = out.tallies.setdefault(name, _Tally())
            tally.games += 1
            tally.points += own
            tally.draws += points == 0.5
            tally.opponents.add(other)
    return out


def _build_warnings(selection: Selection) -> list[str]:
    """An engine that played as different builds (specs/storage.md §entrants)."""
    builds: dict[str, dict[tuple[Any, Any], list[int]]] = {}
    for tournament, entrants in selection.entrants.items():
        for e in entrants:
            if e.get("id_name") is None and e.get("executable_sha256") is None:
                continue  # not known: nothing to compare
            key = (e.get("id_name"), e.get("executable_sha256"))
            builds.setdefault(e["name"], {}).setdefault(key, []).append(tournament)
    out = []
    for name, seen in builds.items():
        if len(seen) > 1:
            groups = "; ".join(f"{_tournaments({'tournaments': ts})}: id name {k[0]!r}, "
                               f"executable {(k[1] or 'unknown')[:12]}" for k, ts in seen.items())
            out.append(f"engine {name!r} played as {len(seen)} builds ({groups}): its games "
                       "are rated as one engine")
    return out


def rating_table(selection: Selection, anchor: Anchor, *, los: bool = False) -> dict[str, Any]:
    """The rating list as ``--json`` prints it (specs/ratings.md §Rating
    lists), with the LOS matrix when ``los``.

    ``ValueError`` when the anchor engine has no game in the selection."""
    side = first_mover(selection.game)
    games = _sorted_games(selection.games, side)
    tallies = games.tallies
    if anchor.engine is not None and anchor.engine not in tallies:
        known = ", ".join(sorted(tallies)) or "none"
        raise ValueError(f"--anchor: engine {anchor.engine!r} has no game in the chosen games "
                         f"(engines: {known})")
    listed = [e["name"] for entrants in selection.entrants.values() for e in entrants]
    ratings = joint_ratings(games.scored, anchor=anchor, engines=dict.fromkeys(listed),
                            first_move=True)
    warnings = []
    if not ratings.connected:
        warnings.append(_disconnected(ratings, anchor))
    warnings += _build_warnings(selection)
    if games.self_play:
        warnings.append(self_play_warning(games.self_play))
    first_move = FirstMove(side, ratings.first_move, len(games.scored), games.first_points)
    table = {
        "game": selection.game, "tournaments": selection.tournaments, "games": len(games.scored),
        "model": MODEL, "prior_draws": DEFAULT_PRIOR_DRAWS,
        "anchor": {"engine": anchor.engine, "rating": anchor.rating},
        "connected": ratings.connected, "groups": ratings.components,
        "first_move": first_move.to_json(),
        "anomalies": {SELF_PLAY: sum(games.self_play.values())} if games.self_play else {},
        "warnings": warnings,
        "engines": [_engine_line(rank, r, tallies.get(r.engine))
                    for rank, r in enumerate(ratings, start=1)],
    }
    if los:
        table["los"] = los_matrix(ratings)
    return table


def los_matrix(ratings: RatingList) -> dict[str, Any]:
    """The likelihood of superiority of each engine (row) over each other
    (column), in the list's order, from the joint ratings
    (:meth:`RatingList.los`); ``None`` on the diagonal and between engines
    no games link.  specs/ratings.md §LOS matrix."""
    names = [r.engine for r in ratings]
    return {"engines": names,
            "matrix": [[json_number(ratings.los(a, b), FRACTION_DIGITS) for b in names]
                       for a in names]}


def _disconnected(ratings: RatingList, anchor: Anchor) -> str:
    groups: dict[int, list[str]] = {}
    for r in ratings:
        if r.component >= 0:
            groups.setdefault(r.component, []).append(r.engine)
    shown = "; ".join(", ".join(names) for _, names in sorted(groups.items()))
    where = (f"the group of {anchor.engine!r} has it at {anchor.rating:g}, every other group its "
             f"mean at {anchor.rating:g}" if anchor.engine else f"each group has its mean at "
             f"{anchor.rating:g}")
    return (f"the games do not connect every engine: {len(groups)} groups ({shown}); ratings "
            f"of different groups are not comparable ({where})")


def _engine_line(rank: int, r: Any, tally: _Tally | None) -> dict[str, Any]:
    tally = tally or _Tally()
    return {
        "rank": rank, "name": r.engine, "elo": json_number(r.elo, ELO_DIGITS),
        "error": json_number(r.error, ELO_DIGITS), "games": tally.games, "points": tally.points,
        "score": json_number(tally.points / tally.games if tally.games else None, FRACTION_DIGITS),
        "draws": tally.draws,
        "draw_ratio": json_number(tally.draws / tally.games if tally.games else None, FRACTION_DIGITS),
        "opponents": len(tally.opponents), "group": r.component if r.component >= 0 else None,
        "reason": None if r.elo is not None else NO_GAMES,
    }


#: tournament ids the title lists one by one; more are counted (80 columns)
_TITLE_IDS = 8


def _tournaments(table: Mapping[str, Any]) -> str:
    ids = table["tournaments"]
    if len(ids) == 1:
        return f"tournament {ids[0]}"
    if len(ids) > _TITLE_IDS:
        return f"{len(ids)} tournaments"
    return f"tournaments {', '.join(map(str, ids))}" if ids else "no tournament"


def format_table(table: Mapping[str, Any]) -> str:
    """The rating list as text: two title lines (the games, the model and
    anchor), one line per engine (its points are in the JSON), an undefined
    rating as ``undefined`` and the other undefined figures as ``-``, then
    the first-move advantage (wrapped at spaces); within 80 columns for
    names up to 20 characters."""
    anchor = table["anchor"]
    where = (f"{anchor['engine']} at {anchor['rating']:g}" if anchor["engine"]
             else f"their mean at {anchor['rating']:g}")
    lines = [f"{table['game'] or 'no game'}: {table['games']} games of {_tournaments(table)}",
             f"Bradley-Terry ratings with 95% error bars, {where}"]
    grouped = not table["connected"]
    width = _name_width(table)
    head = (f"{'#':>3} {'engine':<{width}}  {'Elo':>9}  {'+/-':>6}  {'games':>5}  "
            f"{'score':>6}  {'draws':>6}  {'opp':>3}")
    lines.append(head + ("  group" if grouped else ""))
    for e in table["engines"]:
        if e["reason"] is None:
            elo, error = f"{fmt_signed(e['elo']):>9}", f"{e['error']:6.1f}"
        else:
            elo, error = f"{'undefined':>9}", f"{'-':>6}"
        line = (f"{e['rank']:>3} {e['name']:<{width}}  {elo}  {error}  {e['games']:>5}  "
                f"{fmt_percent(e['score']):>6}  {fmt_percent(e['draw_ratio']):>6}  {e['opponents']:>3}")
        if grouped:
            line += f"  {'-' if e['group'] is None else e['group'] + 1:>5}"
        lines.append(line)
    first = table.get("first_move")
    if first is not None:
        lines += _wrapped(fmt_first_move(first["side"], first["elo"], first["elo_error"],
                                         first["score"], first["games"]))
    return "\n".join(lines)


#: the title of the LOS matrix in text
LOS_TITLE = "LOS: likelihood that the row's engine is stronger than the column's"

#: the text's width (specs/ratings.md §Rating lists), and of one LOS cell ("100.0%" and a space)
TEXT_WIDTH = 80
_LOS_CELL = 7


def _name_width(table: Mapping[str, Any]) -> int:
    return max([len("engine")] + [len(e["name"]) for e in table["engines"]])


def _wrapped(text: str) -> list[str]:
    """``text`` cut at spaces into lines of at most :data:`TEXT_WIDTH`."""
    lines = [""]
    for word in text.split(" "):
        if lines[-1] and len(lines[-1]) + 1 + len(word) > TEXT_WIDTH:
            lines.append("  ")
        lines[-1] += ("" if lines[-1].strip() == "" else " ") + word
    return lines


def format_los(table: Mapping[str, Any]) -> str:
    """The LOS matrix as text: the row engine's likelihood of being stronger
    than the column engine (columns by rank), as many columns as 80 columns
    hold for names up to 20 characters, the rest in further blocks below;
    ``-`` on the diagonal and between engines no games link."""
    matrix = table["los"]
    names = matrix["engines"]
    width = _name_width(table)
    per_block = max(1, (TEXT_WIDTH - 4 - width) // _LOS_CELL)
    lines = [LOS_TITLE]
    for start in range(0, len(names), per_block):
        columns = range(start, min(start + per_block, len(names)))
        lines.append(f"{'#':>3} {'engine':<{width}}" + "".join(f"{c + 1:>{_LOS_CELL}}" for c in columns))
        for r, name in enumerate(names):
            lines.append(f"{r + 1:>3} {name:<{width}}"
                         + "".join(f"{fmt_percent(matrix['matrix'][r][c]):>{_LOS_CELL}}" for c in columns))
    return "\n".join(lines)


@app.command()
def ratings(
    db: str = typer.Option(DEFAULT_DB, "--db", help="results database"),
    game: str | None = typer.Option(None, "--game", "-g", help="rate the games of this game "
                                    "(needed when the database holds several)"),
    anchor: str | None = typer.Option(None, "--anchor", help="NAME=ELO: fix that engine's "
                                      "rating (default: the mean at 0)"),
    tournament: list[int] = typer.Option([], "--tournament", "-t", help="only this tournament "
                                          "ID (repeat for several; default: all)"),
    los: bool = typer.Option(False, "--los", help="also the likelihood of superiority between "
                             "every two engines"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable"),
) -> None:
    """One rating list over every game of the chosen tournaments (joint Bradley-Terry ratings)."""
    if game is not None and game not in GAME_NAMES:
        fail(f"--game {game!r}: unknown game; choose one of: {', '.join(GAME_NAMES)}")
    try:
        chosen_anchor = parse_anchor(anchor)
    except ValueError as exc:
        fail(str(exc))
    try:
        with Store(db, readonly=True) as store:
            table = rating_table(select(store, game, tournament), chosen_anchor, los=los)
    except (StoreError, ValueError) as exc:
        fail(str(exc))
    except sqlite3.Error as exc:
        fail(f"{db}: {explain(exc)} ({exc})")
    if as_json:
        typer.echo(json.dumps({"database": db, **table}, indent=2))
        return
    for warning in table["warnings"]:
        typer.echo(f"arbiter: warning: {warning}", err=True)
    if not table["engines"]:
        typer.echo(f"{db}: no games to rate")
        return
    typer.echo(format_table(table))
    if los:
        typer.echo("")
        typer.echo(format_los(table))

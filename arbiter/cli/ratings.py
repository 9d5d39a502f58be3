"""``arbiter ratings``: one rating list over the games of many tournaments.

The joint maximum-likelihood ratings of :mod:`arbiter.rating.joint` (the
Bradley-Terry model with a draw as half a win, the model the standings use)
over every stored game of the chosen game and tournaments, in the way Ordo
and BayesElo rate engine lists; per engine its games, points, score, draw
ratio and number of opponents.  Format and rules: ``specs/ratings.md``
§Rating lists.  Light: it reads the database read-only and imports neither
trio nor the run machinery.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import typer

from arbiter.games import GAME_NAMES
from arbiter.rating import DEFAULT_PRIOR_DRAWS, Anchor, RatingList, joint_ratings
from arbiter.store import DEFAULT_DB, Store, StoreError, explain

from .app import app, fail

#: White's points for each stored result (specs/storage.md §games)
_WHITE_POINTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}

#: the model, as the JSON names it
MODEL = "bradley-terry, a draw counting as half a win (specs/ratings.md §Joint ratings)"

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


def _tallies(games: Iterable[Mapping[str, Any]]) -> tuple[dict[str, _Tally], list[tuple[str, str, float]]]:
    tallies: dict[str, _Tally] = {}
    scored = []
    for row in games:
        white, black, points = row["white"], row["black"], _WHITE_POINTS.get(row["result"])
        if points is None or white == black:
            continue  # no stored game has another result; a damaged row is not rated
        scored.append((white, black, points))
        for name, own, other in ((white, points, black), (black, 1.0 - points, white)):
            tally = tallies.setdefault(name, _Tally())
            tally.games += 1
            tally.points += own
            tally.draws += points == 0.5
            tally.opponents.add(other)
    return tallies, scored


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


def rating_table(selection: Selection, anchor: Anchor) -> dict[str, Any]:
    """The rating list as ``--json`` prints it (specs/ratings.md §Rating lists).

    ``ValueError`` when the anchor engine has no game in the selection."""
    tallies, scored = _tallies(selection.games)
    if anchor.engine is not None and anchor.engine not in tallies:
        known = ", ".join(sorted(tallies)) or "none"
        raise ValueError(f"--anchor: engine {anchor.engine!r} has no game in the chosen games "
                         f"(engines: {known})")
    listed = [e["name"] for entrants in selection.entrants.values() for e in entrants]
    ratings = joint_ratings(scored, anchor=anchor, engines=dict.fromkeys(listed))
    warnings = []
    if not ratings.connected:
        warnings.append(_disconnected(ratings, anchor))
    warnings += _build_warnings(selection)
    return {
        "game": selection.game, "tournaments": selection.tournaments, "games": len(scored),
        "model": MODEL, "prior_draws": DEFAULT_PRIOR_DRAWS,
        "anchor": {"engine": anchor.engine, "rating": anchor.rating},
        "connected": ratings.connected, "groups": ratings.components, "warnings": warnings,
        "engines": [_engine_line(rank, r, tallies.get(r.engine))
                    for rank, r in enumerate(ratings, start=1)],
    }


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


def _number(value: float | None) -> float | None:
    """A figure for JSON: a finite number, or None (never a string, NaN or inf)."""
    return value if value is not None and math.isfinite(value) else None


def _engine_line(rank: int, r: Any, tally: _Tally | None) -> dict[str, Any]:
    tally = tally or _Tally()
    return {
        "rank": rank, "name": r.engine, "elo": _number(r.elo), "error": _number(r.error),
        "games": tally.games, "points": tally.points,
        "score": tally.points / tally.games if tally.games else None,
        "draws": tally.draws, "draw_ratio": tally.draws / tally.games if tally.games else None,
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
    """The rating list as text: two title lines, then one line per engine
    (its points are in the JSON), an undefined rating as ``undefined`` and
    the other undefined figures as ``-``; within 80 columns for names up to
    20 characters."""
    anchor = table["anchor"]
    where = (f"{anchor['engine']} at {anchor['rating']:g}" if anchor["engine"]
             else f"their mean at {anchor['rating']:g}")
    lines = [f"{table['game'] or 'no game'}: {table['games']} games of {_tournaments(table)}",
             f"Bradley-Terry ratings with 95% error bars, {where}"]
    grouped = not table["connected"]
    width = max([len("engine")] + [len(e["name"]) for e in table["engines"]])
    head = (f"{'#':>3} {'engine':<{width}}  {'Elo':>9}  {'+/-':>6}  {'games':>5}  "
            f"{'score':>6}  {'draws':>6}  {'opp':>3}")
    lines.append(head + ("  group" if grouped else ""))
    for e in table["engines"]:
        if e["reason"] is None:
            elo, error = f"{round(e['elo'], 1) + 0.0:+9.1f}", f"{e['error']:6.1f}"  # no -0.0
        else:
            elo, error = f"{'undefined':>9}", f"{'-':>6}"
        score = f"{100 * e['score']:5.1f}%" if e["score"] is not None else f"{'-':>6}"
        draws = f"{100 * e['draw_ratio']:5.1f}%" if e["draw_ratio"] is not None else f"{'-':>6}"
        line = (f"{e['rank']:>3} {e['name']:<{width}}  {elo}  {error}  {e['games']:>5}  "
                f"{score}  {draws}  {e['opponents']:>3}")
        if grouped:
            line += f"  {'-' if e['group'] is None else e['group'] + 1:>5}"
        lines.append(line)
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
            table = rating_table(select(store, game, tournament), chosen_anchor)
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

"""Stored games of an engine against itself never break a reader
(specs/tournament.md §Anomalies, specs/ratings.md §Rating lists): a database
that holds some (an old arena's, or imported) is read by ``arbiter
standings``, ``arbiter ratings`` and every page of the web view; such games
are shown, counted as the anomaly ``self-play`` and left out of the points,
the pairs and the ratings, with a warning.

The database is real: a real match of two sample engines (tournament 1),
then an arena's tournament written through the store as the arena writes
it (tournament 2), holding two of that match's games and two games whose
sides are one engine (the records of real games, as an old arena stored
them when it paired an engine with itself).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli import invoke
from starlette.testclient import TestClient

from arbiter.server.arena import ARENA_FORMAT
from arbiter.standings import SELF_PLAY, compute_standings
from arbiter.store import Store
from arbiter.web import create_app

PY = sys.executable
FAST = ["--tc", "depth=1", "--maxplies", "30", "--plain"]
WARNING = ("arbiter: warning: 2 games of an engine against itself (greedy 1, random 1): shown "
           "and counted as the anomaly self-play, but left out of the points, the pairs and the "
           "ratings")


def spec(name: str) -> str:
    return f"cmd='{PY} -m sample_engines.{name}' name={name}"


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("self_play") / "s.db"
    run = invoke("match", "troll", spec("random"), spec("greedy"), "--games", "2", *FAST,
                 "--db", path)
    assert run.returncode == 0, run.stderr
    with Store(path) as store:
        games = store.games(1)
        arena = store.create_tournament(name="old arena", game="troll", format=ARENA_FORMAT,
                                        identity="arena old arena troll 10+0.1 None",
                                        config={"format": ARENA_FORMAT, "game": "troll"},
                                        engines=[], total_games=0)
        records = [g["record"] for g in games]
        records += [{**records[0], "black": records[0]["white"]},  # as an old arena stored them
                    {**records[1], "black": records[1]["white"]}]
        for seq, record in enumerate(records, start=1):
            store.save_game(arena, key=str(seq), seq=seq, round=seq, pairing=seq, index=1, pair=seq,
                            opening={}, record=record)
    return path


def test_standings_show_and_count_self_play_and_leave_it_unrated(db):
    """specs/tournament.md §Anomalies: exit 0; the games count in the
    tournament's total and its terminations, as the anomaly, not in any
    engine's games or pair, with the warning on stderr."""
    text = invoke("standings", "--db", db, "-t", "2")
    assert text.returncode == 0, text.stderr
    assert text.stderr == WARNING + "\n"
    assert "4/4 games" in text.stdout.splitlines()[0]
    assert ("anomaly: self-play 2 (games of an engine against itself, left out of the points, "
            "the pairs and the ratings)") in text.stdout
    data = json.loads(invoke("standings", "--db", db, "-t", "2", "--json").stdout)
    assert (data["games"], data["tournament"]["done"], data["anomalies"]) == (4, 4, {"self-play": 2})
    assert data["warnings"] == [WARNING.removeprefix("arbiter: warning: ")]
    assert sum(data["terminations"].values()) == 4
    assert {e["name"]: e["games"] for e in data["engines"]} == {"random": 2, "greedy": 2}
    assert [(p["first"], p["second"], p["games"]) for p in data["pairs"]] == [("random", "greedy", 2)]
    assert all(e["elo"] is not None for e in data["engines"])
    assert data["first_move"]["games"] == 2


def test_the_rating_list_leaves_self_play_out_and_says_so(db):
    """specs/ratings.md §Rating lists: the list rates the other games of every
    tournament, names the anomaly in JSON and warns on stderr."""
    text = invoke("ratings", "--db", db, "-g", "troll", "--los")
    assert text.returncode == 0, text.stderr
    assert text.stderr == WARNING + "\n"
    data = json.loads(invoke("ratings", "--db", db, "-g", "troll", "--los", "--json").stdout)
    assert (data["games"], data["anomalies"]) == (4, {"self-play": 2})
    assert WARNING.removeprefix("arbiter: warning: ") in data["warnings"]
    assert {e["name"]: e["games"] for e in data["engines"]} == {"random": 4, "greedy": 4}
    assert all(e["opponents"] == 1 for e in data["engines"])
    assert data["los"]["matrix"][0][0] is None


def test_every_web_page_reads_a_tournament_with_self_play(db):
    """specs/web.md: the pages and their JSON of the tournament, of each of
    its games (those of one engine against itself too) and of the engines
    answer, with the figures of ``arbiter standings --json`` (a LOS written
    as a percentage: specs/tournament.md §JSON numbers)."""
    app = create_app(db)
    try:
        with TestClient(app) as client:
            shown = client.get("/api/tournament/2")
            assert shown.status_code == 200, shown.text
            cli = json.loads(invoke("standings", "--db", db, "-t", "2", "--json").stdout)
            assert shown.json()["standings"] == {k: v for k, v in cli.items() if k != "tournament"}
            games = shown.json()["games"]
            own = [g for g in games if g["white"] == g["black"]]
            assert len(games) == 4 and len(own) == 2
            urls = ["/", "/api/tournaments", "/tournament/2", "/tournament/1", "/engine/random",
                    "/api/engine/greedy"]
            urls += [f"{api}/game/{g['id']}" for g in games for api in ("", "/api")]
            urls += [f"/game/{g['id']}.pgn" for g in own]
            for url in urls:
                response = client.get(url)
                assert response.status_code == 200, (url, response.text)
            (pair,) = cli["pairs"]  # LOS as a percentage, as the terminal writes it
            assert f'<td class="n">{100 * pair["los"]:.1f}%</td>' in client.get("/tournament/2").text
            own_games = client.get("/api/engine/random").json()["games"]
            assert any(g["white"] == g["black"] == "random" for g in own_games)
    finally:
        app.state.reader.close()


def test_an_engine_that_only_played_itself_is_listed_unrated():
    """specs/tournament.md §Anomalies: its line has no games and no rating;
    the other engines are rated as if those games were not there."""
    rows = [{"white": "a", "black": "b", "result": "1-0", "termination": "rule"},
            {"white": "b", "black": "a", "result": "1/2-1/2", "termination": "rule"},
            {"white": "c", "black": "c", "result": "0-1", "termination": "rule"}]
    with_it = compute_standings(["a", "b"], rows)
    without = compute_standings(["a", "b"], rows[:2])
    line = {e.name: e for e in with_it.engines}
    assert (line["c"].games, line["c"].points, line["c"].elo) == (0, 0.0, None)
    assert {e.name: e.elo for e in with_it.engines if e.name != "c"} == {
        e.name: e.elo for e in without.engines}
    assert (with_it.games, with_it.anomalies, len(with_it.warnings)) == (3, {SELF_PLAY: 1}, 1)
    assert with_it.terminations["rule"] == 3

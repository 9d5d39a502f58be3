"""The pages the web view added for its readers (``specs/web.md`` §The
tournament page, §Engines, §Figures, §Design): the engines and an engine's
page (its ratings are ``arbiter ratings``'s), a tournament's configuration,
results by colour and filtered games, a game's figures per ply, undefined
figures as words, the static files; on a real database made by real runs
and a real record file."""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path

import pytest
from cli import invoke
from web_pages import get_json, get_page, table_rows, text, view_client

from arbiter.web.runs import RESULTS

PYTHON = sys.executable
#: an engine's environment may hold its owner's secret: never shown
SECRET = "hunter2-not-for-the-page"
GREEDY = f"cmd={PYTHON} arg=-m arg=sample_engines.greedy name=greedy option.Seed=7 env.API_KEY={SECRET}"
#: plays an illegal move as its process's second move: with --restart, every game lost
ILLEGAL = f"cmd={PYTHON} arg={Path(__file__).parent / 'bad_engines' / 'illegal.py'} name=illegal"
RANDOM = f"cmd={PYTHON} arg=-m arg=sample_engines.random name=random"
SLOW = f"cmd={PYTHON} arg=-m arg=sample_engines.random name=another"
STATIC = Path(__file__).parent.parent / "arbiter" / "web" / "static"
#: games per pairing of the round-robin (3 pairings)
GAMES = 2


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    """Tournament 1: a round-robin of three engines on Troll (greedy with an
    option and a secret in its environment); tournament 2: a two-engine
    match on Troll; tournament 3: a match that an engine playing illegal
    moves loses every game of; tournament 4: a record file's game of an
    engine against itself (imported)."""
    tmp = tmp_path_factory.mktemp("pages")
    path = tmp / "pages.db"
    for args in (("tournament", "-g", "troll", "-e", GREEDY, "-e", RANDOM, "-e", SLOW, "--games", GAMES,
                  "--tc", "10+0.1", "--maxplies", 80, "--random-plies", 2),
                 ("match", "troll", GREEDY, RANDOM, "--games", 2, "--tc", "10+0.1"),
                 ("match", "troll", ILLEGAL, RANDOM, "--games", 2, "--tc", "10+0.1", "--restart")):
        run = invoke(*args, "--db", path, "--plain")
        assert run.returncode == 0, run.stderr
    exported = invoke("export", "--db", path, "--tournament", "2").stdout.split("\n\n[Event")[0]
    own = re.sub(r'\[Black "[^"]*"\]', '[Black "random"]', re.sub(r'\[White "[^"]*"\]', '[White "random"]',
                                                                  exported))
    (tmp / "self.pgn").write_text(own.replace('[Event "troll match"]', '[Event "its own game"]'))
    imported = invoke("import", tmp / "self.pgn", "--db", path)
    assert imported.returncode == 0, imported.stderr
    return path


@pytest.fixture(scope="module")
def client(db):
    with view_client(db) as client:
        yield client


def get(client, url: str):
    """A page's HTML, or under /api/ its JSON."""
    return get_json(client, url) if url.startswith("/api/") else get_page(client, url)


def test_every_engine_listed_with_its_totals(client):
    """specs/web.md §Pages: /engines lists each engine once, its games its
    W-D-L's sum, a game against itself counted once."""
    listed = {e["name"]: e for e in get(client, "/api/engines")["engines"]}
    assert set(listed) == {"greedy", "random", "another", "illegal"}
    for e in listed.values():
        assert e["wins"] + e["draws"] + e["losses"] == e["games"] > 0 and e["kinds"] == ["troll"]
    assert listed["greedy"]["games"] == 2 * GAMES + 2 and listed["greedy"]["tournaments"] == 2
    assert listed["random"]["games"] == 2 * GAMES + 2 + 2 + 1 and listed["random"]["tournaments"] == 4
    rows = {row[0]: row for row in table_rows(get(client, "/engines"), "engines")[1:]}
    assert rows["greedy"][1] == str(listed["greedy"]["games"])


def test_an_engines_ratings_are_the_rating_lists(client, db):
    """specs/web.md §Engines: the rating after each tournament; the last is
    what `arbiter ratings --game troll` prints for it now; the first counts
    only tournament 1's games.  Its own game is counted but never rated."""
    shown = get(client, "/api/engine/random")
    (series,) = shown["ratings"]
    assert series["game"] == "troll" and [p["tournament"] for p in series["points"]] == [1, 2, 3, 4]
    now = json.loads(invoke("ratings", "--db", db, "--game", "troll", "--json").stdout)
    line = next(e for e in now["engines"] if e["name"] == "random")
    last = series["points"][-1]
    assert (last["elo"], last["error"], last["games"]) == (round(line["elo"], 1), round(line["error"], 1),
                                                            line["games"])
    first = json.loads(invoke("ratings", "--db", db, "--game", "troll", "-t", "1", "--json").stdout)
    line = next(e for e in first["engines"] if e["name"] == "random")
    assert series["points"][0]["elo"] == round(line["elo"], 1)
    assert series["chart"].startswith("<svg") and series["chart"].count('class="chart-dot"') == 4
    own = [o for o in shown["opponents"] if o["self"]]
    assert [(o["opponent"], o["games"], o["elo"]) for o in own] == [("random", 1, None)]
    assert own[0]["null_reasons"]["elo"] == "games against itself: not rated"
    page = get(client, "/engine/random")
    assert "Rating history: troll" in text(page) and f"{last['elo']:+.1f} ± {last['error']}" in text(page)


def test_head_to_head_from_the_engines_side(client):
    """An opponent's line: W-D-L from the engine's side, the same games seen
    from the other side reversed, and the Elo they measure (or why not)."""
    greedy = {o["opponent"]: o for o in get(client, "/api/engine/greedy")["opponents"]}
    random = {o["opponent"]: o for o in get(client, "/api/engine/random")["opponents"]}
    ahead, behind = greedy["random"], random["greedy"]
    assert (ahead["wins"], ahead["draws"], ahead["losses"]) == (behind["losses"], behind["draws"], behind["wins"])
    assert ahead["games"] == behind["games"] == GAMES + 2
    for line in (ahead, behind):
        assert (line["elo"] is None) == ("elo" in line["null_reasons"])
    totals = get(client, "/api/engine/greedy")["totals"]
    assert totals["games"] == sum(o["games"] for o in greedy.values())
    assert totals["wins"] == sum(o["wins"] for o in greedy.values())


def test_a_tournaments_configuration_and_colours(client):
    """§Configuration, §Colours: the run's settings and each engine's
    command, options and build as stored; results by colour adding up."""
    shown = get(client, "/api/tournament/1")
    config = shown["configuration"]
    assert (config["format"], config["games"], config["tc"], config["maxplies"]) == ("round-robin", GAMES,
                                                                                      "10+0.1", 80)
    assert config["openings"]["random_plies"] == 2 and config["total_games"] == 3 * GAMES
    engines = {e["name"]: e for e in config["engines"]}
    assert engines["greedy"]["options"] == {"Seed": "7"}
    assert engines["greedy"]["command"] == f"{PYTHON} -m sample_engines.greedy"
    assert engines["greedy"]["build"]["id_name"] and engines["greedy"]["build"]["executable_sha256"]
    assert SECRET not in json.dumps(shown) and SECRET not in get(client, "/tournament/1")
    colours = shown["colours"]
    assert colours["white_wins"] + colours["draws"] + colours["black_wins"] == colours["games"] == 3 * GAMES
    page = text(get(client, "/tournament/1"))
    assert "Seed=7" in page and f"White's score: {100 * colours['white_score']:.1f}%" in page


def test_the_first_move_advantage_is_the_standings(client, db):
    """§Colours, specs/tournament.md §Which figure where: the tournament page
    shows the first-move advantage that `arbiter standings --json` prints,
    with its error and the first mover's score."""
    run = invoke("standings", "--db", db, "--tournament", "1", "--json")
    assert run.returncode == 0, run.stderr
    first = json.loads(run.stdout)["first_move"]
    assert first["elo"] is not None
    page = text(get(client, "/tournament/1"))
    assert (f"First-move advantage ({first['side']} moves first" in page
            and f"{first['elo']:+.1f} ± {first['elo_error']} Elo" in page), page[:3000]
    assert f"the first mover scored {100 * first['score']:.1f}% of {first['games']} games" in page


@pytest.mark.parametrize(("query", "keep"), [
    ("engine=greedy", lambda g: "greedy" in (g["white"], g["black"])),
    ("result=1-0", lambda g: g["result"] == "1-0"),
    ("engine=random&result=0-1", lambda g: "random" in (g["white"], g["black"]) and g["result"] == "0-1"),
    ("termination=connection", lambda g: g["termination"] == "connection"),
    ("engine=nobody", lambda g: False),
])
def test_games_filtered(client, query, keep):
    """specs/web.md §Pages: the games of an engine, a result, an ending, or
    several at once; one that matches nothing is page 1 of no games."""
    every = get(client, "/api/tournament/1")["games"]
    shown = get(client, f"/api/tournament/1?{query}")
    assert [g["id"] for g in shown["games"]] == [g["id"] for g in every if keep(g)]
    assert shown["page"]["total"] == len(shown["games"])
    page = get(client, f"/tournament/1?{query}")
    assert 'id="games"' in page and 'id="recent"' not in page  # not the live section: it does not move
    chosen = dict(part.split("=") for part in query.split("&"))
    assert {k: v for k, v in shown["filters"].items() if v is not None} == chosen
    # each filter's chip that is chosen (or "all") is marked, and its link is this page
    active = re.findall(r'<a class="chip" href="([^"]*)" aria-current="true">([^<]*)</a>', page)
    assert {html.unescape(href) for href, _ in active} == {f"/tournament/1?{query}#games-title"}
    words = {"result": lambda v: RESULTS[v]}
    assert sorted(label for _, label in active if label != "all") == sorted(
        words.get(k, str)(v) for k, v in chosen.items() if v != "nobody")


@pytest.mark.parametrize("query", ["result=2-0", "engine=" + "x" * 1001, "page=0&engine=greedy"])
def test_a_bad_filter_is_not_found(client, query):
    assert client.get(f"/tournament/1?{query}").status_code == 404
    assert set(client.get(f"/api/tournament/1?{query}").json()) == {"error"}


def test_a_games_figures_per_ply(client):
    """A stored game's plies carry nodes, speed and the principal variation
    (greedy reports them); the page writes scores as a reader reads them."""
    game_id = next(g["id"] for g in get(client, "/api/tournament/2")["games"] if g["white"] == "greedy")
    shown = get(client, f"/api/game/{game_id}")
    mine = [m for m in shown["moves"] if m["color"] == "white" and not m["book"]]
    assert mine and all(m["nodes"] and m["pv"] and m["nps"] for m in mine)
    assert shown["info"] == shown["moves"][-1]
    page = get(client, f"/game/{game_id}?ply={mine[0]['ply']}")
    row = next(r for r in table_rows(page, "moves") if r[0] == str(mine[0]["ply"]))
    score = mine[0]["score"]
    kind, value = score.split()
    assert row[4] == (f"{int(value) / 100:+.2f}" if kind == "cp" else f"mate {int(value):+d}")
    assert f'data-pv="{" ".join(mine[0]["pv"])}"' in page


def test_undefined_figures_are_words(client):
    """specs/web.md §Figures: an Elo with no finite value (every game lost
    by illegal moves) is the reason's words, never a dash."""
    shown = get(client, "/api/tournament/3")
    (pair,) = shown["standings"]["pairs"]
    assert pair["elo"] is None and pair["losses"] + pair["wins"] == 2
    difference = shown["standings"]["difference"]
    page = text(get(client, "/tournament/3"))
    for reason in (pair["null_reasons"]["elo"], difference["null_reasons"]["elo"]):
        assert reason.split(":")[0] in page  # "every game lost", "every game won"
    assert "+/-" not in page and re.search(r"(?<![\w-])-(?![\w\d])", page.replace(" - ", "")) is None


def test_the_static_files_and_the_policy(client):
    """specs/web.md §Safety: the stylesheet, script and icon from a table,
    named in the pages with their version; any other name is not found;
    no page carries an inline style."""
    page = get(client, "/")
    for name, kind in (("arbiter.css", "text/css"), ("live.js", "text/javascript"), ("icon.svg", "image/svg+xml")):
        (url,) = re.findall(rf'"(/static/{re.escape(name)}\?v=[0-9a-f]{{12}})"', page)
        response = client.get(url)
        assert response.status_code == 200 and response.headers["content-type"].startswith(kind)
        assert response.content == (STATIC / name).read_bytes()
    for url in ("/static/nothing.css", "/static/../app.py", "/static/%2e%2e%2fapp.py", "/static/"):
        assert client.get(url).status_code == 404, url
    assert client.get("/favicon.ico").headers["content-type"].startswith("image/svg+xml")
    assert "style-src 'self';" in client.get("/").headers["content-security-policy"]

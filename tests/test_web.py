"""The web view (``specs/web.md``): every page and its JSON on a real
database made by a real match, the same figures as the command line, the
board at every ply, pagination, 404s, escaping of peers' text, and
``arbiter web`` as a real process stopped by Ctrl-C."""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import signal
import sys
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest
from cli import PROCESS_TIMEOUT, arbiter, invoke, start
from markupsafe import escape  # what the templates escape with
from starlette.testclient import TestClient
from web_pages import get_json, get_page, table_rows, text, view_client

from arbiter.cli.web import is_loopback
from arbiter.store import Store
from arbiter.web import create_app, data

PYTHON = sys.executable
#: untrusted text a peer may put in a name, a detail or a tag
SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
XSS_ENGINE = f"cmd={PYTHON} arg=-m arg=sample_engines.random name={SCRIPT}"
GREEDY = f"cmd={PYTHON} arg=-m arg=sample_engines.greedy name=greedy"
ILLEGAL = f"cmd={PYTHON} arg={Path(__file__).parent / 'bad_engines' / 'illegal.py'} name=illegal"
#: an SPRT that a match of an engine losing every game stops within a few games
QUICK_SPRT = "elo0=0 elo1=200 alpha=0.2 beta=0.2"
#: games of the match: enough for two pages of two
MATCH_GAMES = 4


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    """A database of a real match (tournament 1: an engine named like a
    script) and a real import (tournament 2: its Event tag and a termination
    detail carrying markup)."""
    tmp = tmp_path_factory.mktemp("web")
    path = tmp / "web.db"
    run = invoke("match", "troll", XSS_ENGINE, GREEDY, "--games", MATCH_GAMES, "--tc", "10+0.1",
                 "--db", path, "--plain")
    assert run.returncode == 0, run.stderr
    exported = invoke("export", "--db", path)
    assert exported.returncode == 0, exported.stderr
    first = exported.stdout.split("\n\n[Event")[0]  # the first game
    quoted = IMG.replace('"', '\\"')  # as a PGN tag value holds a quote
    tagged = first.replace('[Event "troll match"]', f'[Event "{quoted}"]')
    tagged = re.sub(r"\{(White|Black) wins by connection\}", "{" + IMG + "}", tagged)
    assert IMG in tagged
    (tmp / "bad.pgn").write_text(tagged)
    imported = invoke("import", tmp / "bad.pgn", "--db", path)
    assert imported.returncode == 0, imported.stderr
    return path


@pytest.fixture
def client(db):
    with view_client(db) as client:
        yield client


def test_tournaments_page_and_json(client):
    listed = get_json(client, "/api/tournaments")["tournaments"]
    assert [(t["id"], t["game"], t["status"], t["done"], t["total_games"]) for t in listed] == [
        (1, "troll", "finished", MATCH_GAMES, MATCH_GAMES), (2, "troll", "finished", 1, 1)]
    assert listed[0]["format"] == "round-robin" and listed[0]["created"] and listed[0]["updated"]
    page = get_page(client, "/")
    assert '<a href="/tournament/1">troll match</a>' in page
    assert f"{MATCH_GAMES}/{MATCH_GAMES}" in page


def test_tournament_figures_are_the_command_lines(client, db):
    """One source of truth: the page's standings are `arbiter standings --json`'s."""
    shown = get_json(client, "/api/tournament/1")
    cli = json.loads(invoke("standings", "--db", db, "-t", "1", "--json").stdout)
    assert shown["standings"] == {k: v for k, v in cli.items() if k != "tournament"}
    assert shown["tournament"]["done"] == cli["tournament"]["done"] == MATCH_GAMES
    assert [g["seq"] for g in shown["games"]] == sorted((g["seq"] for g in shown["games"]), reverse=True)
    page = get_page(client, "/tournament/1")
    standings = {row[1]: row for row in table_rows(page, "standings")[1:]}  # rank, engine, games, points, ...
    for engine in shown["standings"]["engines"]:
        row = standings[engine["name"]]
        assert row[2:4] == [str(engine["games"]), f"{engine['points']:g}"]
        assert f"{engine['elo']:+.1f} ± {engine['elo_error']}" in row
    terminations = {row[0]: row[1] for row in table_rows(page, "terminations")}
    assert terminations == {name: str(count) for name, count in shown["standings"]["terminations"].items()}


def test_a_game_stored_later_shows_at_the_next_look(db, tmp_path):
    """The standings are remembered between looks only while no game is
    stored: one stored meanwhile (as a running tournament stores them) counts."""
    copy = tmp_path / "copy.db"
    copy.write_bytes(db.read_bytes())
    app = create_app(copy)
    with TestClient(app) as client:
        before = get_json(client, "/api/tournament/1")
        with Store(copy) as store:
            row = store.games(1)[0]
            store.save_game(1, key="extra", seq=MATCH_GAMES, round=2, pairing=1, index=1, pair=99,
                            opening={}, record=row["record"])
        after = get_json(client, "/api/tournament/1")
    app.state.reader.close()
    assert after["tournament"]["done"] == before["tournament"]["done"] + 1
    assert after["standings"]["games"] == before["standings"]["games"] + 1
    assert after["games"][0]["key"] == "extra"


def test_crosstable_from_both_sides(client):
    shown = get_json(client, "/api/tournament/1")
    table = shown["crosstable"]
    assert table["engines"] == [e["name"] for e in shown["standings"]["engines"]]
    (pair,) = shown["standings"]["pairs"]
    index = {name: i for i, name in enumerate(table["engines"])}
    first, second = index[pair["first"]], index[pair["second"]]
    ahead = table["rows"][first]["cells"][second]
    behind = table["rows"][second]["cells"][first]
    assert (ahead["wins"], ahead["draws"], ahead["losses"]) == (pair["wins"], pair["draws"], pair["losses"])
    assert (behind["wins"], behind["losses"]) == (pair["losses"], pair["wins"])
    assert ahead["pentanomial"] == pair["pentanomial"] == behind["pentanomial"][::-1]
    assert sum(ahead["pentanomial"]) == MATCH_GAMES // 2
    assert table["rows"][first]["cells"][first] is None
    page = get_page(client, "/tournament/1")
    assert f"{ahead['wins']}-{ahead['draws']}-{ahead['losses']}" in page


def test_game_at_every_ply(client, db):
    game_id = get_json(client, "/api/tournament/1")["games"][-1]["id"]
    end = get_json(client, f"/api/game/{game_id}")
    total = end["game"]["plies"]
    assert end["ply"] == total and len(end["moves"]) == total > 0
    assert end["game"]["termination"] == "connection" and end["game"]["detail"]
    played = [m for m in end["moves"] if not m["book"]]
    assert all(m["time_ms"] is not None and m["clock_ms"] is not None for m in played)
    assert any(m["score"] and m["depth"] for m in played)  # greedy reports them
    for ply in range(total + 1):
        step = get_json(client, f"/api/game/{game_id}?ply={ply}")
        assert step["ply"] == ply and "<svg" in step["svg"]
        assert step["steps"] == {"first": 0, "previous": max(ply - 1, 0),
                                 "next": min(ply + 1, total), "last": total}
        assert f"ply {ply} of {total}" in step["svg"]
    # the charts: a score line per side that reported scores, a time bar per
    # move played; a column linking to each ply; the marker at the ply shown
    scored = {m["color"] for m in played if m["score"]}
    charts = end["charts"]
    assert charts["score"].startswith("<svg") and charts["score"].count("<polyline") == len(scored)
    assert sum(charts["time"].count(f'class="chart-{side}-fill"') for side in ("white", "black")) == len(played)
    for chart in charts.values():
        assert chart.count(f'href="/game/{game_id}?ply=') == total and chart.count("chart-marker") == 1
    page = get_page(client, f"/game/{game_id}?ply=1")
    assert get_json(client, f"/api/game/{game_id}?ply=1")["charts"]["score"] in page
    for step, ply in (("first", 0), ("previous", 0), ("next", 2), ("last", total)):
        assert re.search(f'<a class="btn" href="/game/{game_id}\\?ply={ply}" data-step="{step}"', page)
    assert "<svg" in page and f'href="/game/{game_id}.pgn"' in page
    # the ply shown: its figures and its position string, the text alternative of the board
    first = end["moves"][0]
    assert f"Ply 1: {first['color']} played {first['move']}" in text(page)
    step = get_json(client, f"/api/game/{game_id}?ply=1")
    assert step["info"] == first and step["fen"] and f'position after ply 1 of {total}: {step["fen"]}"' in page


def test_pgn_download_is_the_export(client, db):
    """The games of tournament 1, downloaded one by one, are `arbiter export`'s bytes."""
    ids = [g["id"] for g in sorted(get_json(client, "/api/tournament/1")["games"], key=lambda g: g["seq"])]
    texts = []
    for game_id in ids:
        response = client.get(f"/game/{game_id}.pgn")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/x-chess-pgn")
        assert "attachment" in response.headers["content-disposition"]
        texts.append(response.text)
    assert "".join(texts) == invoke("export", "--db", db, "--tournament", "1").stdout


def test_engine_games_across_tournaments(client):
    shown = get_json(client, f"/api/engine/{quote(SCRIPT, safe='')}")
    assert shown["engine"] == SCRIPT
    assert {g["tournament"] for g in shown["games"]} == {1, 2}
    assert len(shown["games"]) == MATCH_GAMES + 1
    assert all(g["outcome"] in ("win", "draw", "loss") for g in shown["games"])
    assert get_json(client, "/api/engine/greedy")["page"]["total"] == MATCH_GAMES + 1
    get_page(client, "/engine/greedy")


def test_pagination(client, monkeypatch):
    monkeypatch.setattr(data, "GAMES_PAGE_SIZE", 2)
    first = get_json(client, "/api/tournament/1")
    second = get_json(client, "/api/tournament/1?page=2")
    assert first["page"] == {"page": 1, "pages": 2, "size": 2, "total": MATCH_GAMES,
                             "previous": None, "next": 2}
    assert second["page"]["previous"] == 1 and second["page"]["next"] is None
    seqs = [g["seq"] for g in first["games"] + second["games"]]
    assert seqs == sorted(range(MATCH_GAMES), reverse=True)
    assert client.get("/api/tournament/1?page=3").status_code == 404
    page = get_page(client, "/tournament/1")
    assert '<a href="/tournament/1?page=2" rel="next">next</a>' in page
    engine = get_json(client, "/api/engine/greedy?page=3")
    assert len(engine["games"]) == 1 and engine["page"]["pages"] == 3


@pytest.mark.parametrize("url", [
    "/tournament/9", "/tournament/x", "/tournament/-1", "/tournament/1?page=0", "/tournament/1?page=x",
    "/tournament/" + "9" * 40, "/game/999", "/game/1?ply=-1", "/game/1?ply=9999", "/game/1?ply=1.5",
    "/game/999.pgn", "/game/x.pgn", "/engine/nobody", "/static/../../etc/passwd", "/nothing",
    "/api/tournament/9", "/api/game/x", "/api/engine/nobody", "/api/nothing",
])
def test_not_found(client, url):
    response = client.get(url)
    assert response.status_code == 404
    if url.startswith("/api/"):
        assert set(response.json()) == {"error"}
    else:
        assert response.text.startswith("not found: ") and response.text.count("\n") == 1


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_read_only(client, method):
    for url in ("/", "/tournament/1", "/game/1", "/api/tournament/1"):
        assert client.request(method, url).status_code == 405


def test_every_response_has_the_safety_headers(client):
    """specs/web.md §Safety: the headers are on every response, whatever made
    it (one middleware): a page, Starlette's own 404 and 405, an event
    stream's 404, a static file and a missing one, the JSON's 404."""
    from arbiter.web.app import SAFETY_HEADERS

    answers = [client.get(url) for url in ("/", "/no/such/page", "/events/tournament/999",
                                             "/static/arbiter.css", "/static/nope.css",
                                             "/favicon.ico", "/api/tournament/999")]
    answers.append(client.post("/"))
    assert [a.status_code for a in answers] == [200, 404, 404, 200, 404, 200, 404, 405]
    for answer in answers:
        assert {k.lower(): v for k, v in SAFETY_HEADERS.items()}.items() <= answer.headers.items()


def test_peers_text_is_escaped_everywhere(client):
    """Every page reachable from the index, and its JSON twin: the markup in
    an engine's name, a tag and a detail is never there unescaped (and
    appears escaped, so the test does look at it)."""
    seen: set[str] = set()
    todo = ["/"]
    escaped = 0
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        seen.add(url)
        response = client.get(url)
        assert response.status_code == 200, url
        assert response.headers["x-content-type-options"] == "nosniff"
        if url.endswith((".pgn", ".ico")) or url.startswith("/static/"):
            assert not response.headers["content-type"].startswith("text/html")
            continue
        page = response.text
        assert SCRIPT not in page and "<img src=x" not in page, url
        escaped += html.escape(SCRIPT) in page or "&lt;img" in page
        # the one script is the view's own file: no inline script may run (specs/web.md §Safety)
        policy = dict(part.strip().split(" ", 1) for part in
                      response.headers["content-security-policy"].split(";"))
        assert policy["script-src"] == "'self'" and policy["default-src"] == "'none'"
        assert policy["style-src"] == "'self'" and " style=" not in page, url  # no inline style
        assert re.fullmatch(r'<script src="/static/live\.js\?v=[0-9a-f]+" defer>',
                            "".join(re.findall(r"<script[^>]*>", page))), url
        for link in map(html.unescape, re.findall(r'href="([^"]+)"', page)):
            # every page, each game at its end and at ply 0 (not at every ply)
            if link.startswith("/") and ("?ply=" not in link or link.endswith("?ply=0")):
                todo.append(link)
    assert {"/tournament/1", "/tournament/2", "/game/1", "/game/5", "/game/5.pgn"} <= seen
    assert any(u.startswith("/engine/%3Cscript") for u in seen)
    assert escaped >= 4
    names = {e["name"] for e in client.get("/api/tournament/1").json()["standings"]["engines"]}
    assert names == {SCRIPT, "greedy"}  # the JSON holds the text itself
    assert client.get("/api/game/5").json()["game"]["detail"] == IMG


def test_an_sprt_stop_and_illegal_moves(tmp_path):
    """A real SPRT match that stops early, its first game lost by an illegal move:
    the SPRT state, the counts and the illegal move's detail are shown."""
    path = tmp_path / "sprt.db"
    run = invoke("match", "troll", ILLEGAL, GREEDY, "--sprt", QUICK_SPRT, "--tc", "10+0.1",
                 "--db", path, "--plain")
    assert run.returncode == 0, run.stderr
    app = create_app(path)
    with TestClient(app) as client:
        shown = get_json(client, "/api/tournament/1")
        sprt = shown["standings"]["sprt"]
        assert sprt["decision"] and not sprt["lower"] < sprt["llr"] < sprt["upper"]
        done = shown["tournament"]["done"]
        assert done < shown["tournament"]["total_games"] and shown["tournament"]["status"] == "finished"
        terminations = shown["standings"]["terminations"]
        assert terminations["illegal-move"] >= 1 and sum(terminations.values()) == done
        page = get_page(client, "/tournament/1")
        assert (f"LLR {sprt['llr']:.2f} between {sprt['lower']:.2f} and {sprt['upper']:.2f}: {sprt['decision']}"
                in text(page))
        # the chart's last point is the standings' own LLR, after every game
        assert shown["sprt_llr"][0] == [0, 0.0] and shown["sprt_llr"][-1] == [done, sprt["llr"]]
        assert shown["sprt_chart"].startswith("<svg") and shown["sprt_chart"] in page
        (illegal, *_) = [g for g in shown["games"] if g["termination"] == "illegal-move"]
        game = get_json(client, f"/api/game/{illegal['id']}")
        assert game["game"]["termination"] == "illegal-move" and "illegal move" in game["game"]["detail"]
        assert str(escape(game["game"]["detail"])) in get_page(client, f"/game/{game['game']['id']}")
    app.state.reader.close()


def test_an_aborted_tournament_without_games(tmp_path):
    """A real match aborted before its first game (an engine that exits at
    once): its note, its empty standings and crosstable, page 1 of no games.
    (Run through the library: the command line checks each engine before it
    creates a tournament, so it leaves none for such an engine.)"""
    import trio

    from arbiter.config import TournamentConfig
    from arbiter.enginespec import parse_engine_spec
    from arbiter.run.coordinator import Coordinator
    from arbiter.tournament import open_tournament

    path = tmp_path / "aborted.db"
    config = TournamentConfig(game="troll", engines=[parse_engine_spec("cmd=false name=bad"),
                                                     parse_engine_spec(GREEDY)], tc="10+0.1")
    with Store(path) as store:
        tournament_id, _ = open_tournament(store, config)
        assert trio.run(Coordinator(config, store, tournament_id).run).status == "aborted"
    app = create_app(path)
    with TestClient(app) as client:
        shown = get_json(client, "/api/tournament/1")
        assert shown["tournament"]["status"] == "aborted" and "handshake" in shown["tournament"]["note"]
        assert shown["games"] == [] and shown["page"]["pages"] == 1 and shown["standings"]["pairs"] == []
        assert all(cell is None for row in shown["crosstable"]["rows"] for cell in row["cells"])
        assert client.get("/api/tournament/1?page=2").status_code == 404
        page = get_page(client, "/tournament/1")
        assert "aborted" in page and "page 1 of 1 (0 games" in page
        assert get_json(client, "/api/engine/bad")["games"] == []  # an engine with no games yet
    app.state.reader.close()


def test_loopback():
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.2", "example.org"))


def test_command_errors(tmp_path, db):
    run = invoke("web", "--db", tmp_path / "none.db")
    assert run.returncode == 2 and "no database at" in run.stderr and "warning" not in run.stderr
    # off loopback: the warning comes first (here the missing database then stops it)
    run = invoke("web", "--db", tmp_path / "none.db", "--http", "0.0.0.0:0")
    assert "warning: --http 0.0.0.0:0 is not loopback" in run.stderr and run.returncode == 2
    for bad in ("8000", "127.0.0.1:", "127.0.0.1:x", "127.0.0.1:70000"):
        run = invoke("web", "--db", db, "--http", bad)
        assert run.returncode == 2 and "give HOST:PORT" in run.stderr, bad


def test_a_real_web_process_serves_then_stops_on_ctrl_c(db):
    """`arbiter web` on a free port: the URL printed, `/` fetched over HTTP,
    Ctrl-C -> exit 130, the database file not changed a byte."""
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    proc = start("web", "--db", db, "--http", "127.0.0.1:0")
    assert proc.stdout is not None and proc.stderr is not None  # piped by start()
    try:
        line = proc.stdout.readline()
        match = re.search(r"at (http://127\.0\.0\.1:\d+/)$", line.strip())
        assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
        with urllib.request.urlopen(match[1], timeout=PROCESS_TIMEOUT) as response:
            assert response.status == 200 and b"troll match" in response.read()
        from arbiter.web.child import VIEW_NICENESS  # specs/web.md §The server's view: every view yields
        assert int(_stat(proc.pid)[16]) == min(19, int(_stat(os.getpid())[16]) + VIEW_NICENESS)
        with urllib.request.urlopen(match[1] + "api/tournament/1", timeout=PROCESS_TIMEOUT) as response:
            assert json.load(response)["tournament"]["done"] == MATCH_GAMES
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=PROCESS_TIMEOUT) == 130
        err = proc.stderr.read()
        assert "interrupted" in err and "Traceback" not in err and "warning" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


# -- live: games in progress, a killed run, the feed (specs/web.md §Live updates) --------------

GATE = Path(__file__).parent / "engines_for_tournament" / "gate.py"
#: moves the gated engine plays before it waits for its gate (White: 6 plies then)
GATE_AFTER = 3


def start_gated_run(tmp_path: Path, gate: Path):
    """A real match whose first game holds at ply 2 * GATE_AFTER (the gated
    engine, White, waits for ``gate`` before its next move; its clock is long
    enough for any wait), with the database path."""
    db = tmp_path / "live.db"
    gated = f"cmd='{PYTHON} {GATE}' name=gated env.GATE={gate} env.GATE_AFTER={GATE_AFTER}"
    proc = start("match", "troll", gated, XSS_ENGINE, "--games", 2, "-c", 1, "--tc", "1000+0",
                 "--db", db, "--plain")
    return proc, db


def wait_for_live_plies(db: Path, plies: int, proc) -> None:
    """Until the run has written its game in progress at ``plies`` plies
    (a guard against a hang, not a measure: PROCESS_TIMEOUT)."""
    import sqlite3
    import time

    deadline = time.monotonic() + PROCESS_TIMEOUT
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            rows = sqlite3.connect(db).execute("select plies from live").fetchall()
        except sqlite3.OperationalError:  # no database or no live table yet
            rows = []
        if rows and rows[0][0] == plies:
            return
        time.sleep(0.05)
    raise AssertionError(f"no game in progress at ply {plies}")


def test_a_game_in_progress_then_finished(tmp_path):
    """A running match seen from another process: its game in progress (board
    at the ply it is at, clocks, last move, its own page and JSON), the page
    set to listen for updates; once the game is stored, its live page leads
    to the stored game and no game is in progress."""
    gate = tmp_path / "gate"
    proc, db = start_gated_run(tmp_path, gate)
    try:
        wait_for_live_plies(db, 2 * GATE_AFTER, proc)
        app = create_app(db)
        with TestClient(app) as client:
            shown = get_json(client, "/api/tournament/1")
            assert shown["tournament"]["status"] == "running" and shown["tournament"]["done"] == 0
            (live,) = shown["live"]
            assert (live["key"], live["white"], live["black"], live["plies"]) == (
                "r1-p1-g1", "gated", SCRIPT, 2 * GATE_AFTER)
            assert live["last_move"] and all(live["clock_ms"][side] > 0 for side in ("white", "black"))
            assert f"ply {2 * GATE_AFTER}" in live["svg"]
            # White waits at its gate: its clock runs down from its figure (specs/web.md §Clocks)
            ticking = live["ticking"]
            assert ticking["side"] == "white" and 0 < ticking["left_ms"] <= live["clock_ms"]["white"]
            import time

            time.sleep(0.01)
            later = get_json(client, "/api/tournament/1")["live"][0]["ticking"]
            assert later["side"] == "white" and later["left_ms"] < ticking["left_ms"]
            page = get_page(client, "/tournament/1")
            assert 'data-side="white" data-left-ms="' in page and 'class="clock" data-side="black"' in page
            assert '<body data-live="/events/tournament/1">' in page
            assert 'href="/tournament/1/live/r1-p1-g1"' in page and f'data-plies="{2 * GATE_AFTER}"' in page
            game = get_json(client, "/api/tournament/1/live/r1-p1-g1")
            assert [m["ply"] for m in game["moves"]] == list(range(1, 2 * GATE_AFTER + 1))
            assert game["moves"][-1]["move"] == live["last_move"] and "<svg" in game["charts"]["score"]
            page = get_page(client, "/tournament/1/live/r1-p1-g1")
            assert 'data-live="/events/tournament/1/live/r1-p1-g1"' in page
            assert SCRIPT not in page and html.escape(SCRIPT) in page
            # one update of the page, as the feed sends it: its sections, escaped
            update = app.state.feed._render(("tournament", 1))
            assert set(update) == {"summary", "standings", "live", "recent"}
            for name, event in update.items():
                assert event.startswith("event: section\ndata: ") and event.endswith("\n\n")
                assert json.loads(event.split("data: ", 1)[1])["id"] == name
            live_html = json.loads(update["live"].split("data: ", 1)[1])["html"]
            assert f'data-plies="{2 * GATE_AFTER}"' in live_html
            assert SCRIPT not in live_html and html.escape(SCRIPT) in live_html  # escaped as the page is
            gate.touch()
            assert proc.wait(timeout=PROCESS_TIMEOUT) == 0
            finished = client.get("/tournament/1/live/r1-p1-g1", follow_redirects=False)
            stored = [g for g in get_json(client, "/api/tournament/1")["games"] if g["key"] == "r1-p1-g1"]
            assert finished.status_code == 303 and finished.headers["location"] == f"/game/{stored[0]['id']}"
            (finished,) = app.state.feed._render(("game", 1, "r1-p1-g1")).values()
            assert finished.startswith("event: finished\n")
            assert json.loads(finished.split("data: ", 1)[1]) == {"url": f"/game/{stored[0]['id']}"}
            assert get_json(client, "/api/tournament/1")["live"] == []
            assert client.get("/api/tournament/1/live/r9-p9-g9").status_code == 404
        app.state.reader.close()
    finally:
        gate.touch()
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    import sqlite3
    assert sqlite3.connect(db).execute("select count(*) from live").fetchone() == (0,)


def test_a_clock_never_counts_past_zero():
    """The side to move's clock is its figure less the time since the last
    move, zero at the least, and none before its first move (specs/web.md §Clocks)."""
    import time

    assert data._ticking("black", 1000, time.time() - 5)["left_ms"] == 0
    assert data._ticking("black", None, time.time()) is None
    assert data._ticking("white", 60_000, None) is None
    assert 0 < data._ticking("white", 60_000, time.time() - 0.5)["left_ms"] <= 59_500


def test_a_killed_run(tmp_path):
    """A run killed (SIGKILL) in the middle of a game: shown as killed, its
    game in progress no longer shown (its row is left in the database: no
    run holds the tournament), the live game's page not found."""
    gate = tmp_path / "gate"
    proc, db = start_gated_run(tmp_path, gate)
    try:
        wait_for_live_plies(db, 2 * GATE_AFTER, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=PROCESS_TIMEOUT)
    finally:
        gate.touch()
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    import sqlite3
    assert sqlite3.connect(db).execute("select count(*) from live").fetchone() == (1,)
    app = create_app(db)
    with TestClient(app) as client:
        shown = get_json(client, "/api/tournament/1")
        assert shown["tournament"]["status"] == "killed" and shown["live"] == []
        assert shown["progress"] == {"done": 0, "total": 2, "percent": 0.0, "eta_seconds": None}
        page = get_page(client, "/tournament/1")
        assert "killed" in page and "data-live" not in page and "In progress" not in page
        assert client.get("/api/tournament/1/live/r1-p1-g1").status_code == 404
        assert get_json(client, "/api/tournaments")["tournaments"][0]["status"] == "killed"
    app.state.reader.close()


async def test_the_feed_fans_out_without_waiting_for_a_slow_viewer(db, tmp_path):
    """specs/web.md §Live updates: a game stored by another connection
    reaches a reading viewer; a viewer that reads nothing holds one event
    per section (the newest), and handing updates to it never waits."""
    from contextlib import aclosing

    import trio


    copy = tmp_path / "copy.db"
    copy.write_bytes(db.read_bytes())
    app = create_app(copy)
    feed = app.state.feed
    send, receive = trio.open_memory_channel[int](100)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(feed.run)
        slow = feed.watch(("tournament", 1), await feed.current(("tournament", 1)))
        await slow.__anext__()  # subscribed, then never read again

        async def read() -> None:
            first = await feed.current(("tournament", 1))
            async with aclosing(feed.watch(("tournament", 1), first)) as events:
                async for text in events:
                    for event in text.split("\n\n")[:-1]:
                        section = json.loads(event.split("data: ", 1)[1])
                        if section["id"] != "summary":
                            continue
                        done = int(re.search(r'<span class="done">(\d+)</span>', section["html"])[1])
                        await send.send(done)
                        if done == MATCH_GAMES + 2:
                            return
        async with trio.open_nursery() as readers:  # ends once the reader has returned
            readers.start_soon(read)
            seen = [await receive.receive()]
            with Store(copy) as store:
                row = store.games(1)[0]
                for n in (1, 2):
                    await trio.to_thread.run_sync(lambda n=n: store.save_game(
                        1, key=f"extra{n}", seq=MATCH_GAMES + n, round=2, pairing=1, index=n,
                        pair=99 + n, opening={}, record=row["record"]))
                    while seen[-1] != MATCH_GAMES + n:
                        seen.append(await receive.receive())
        # each stored game seen once, in order: only a section that changed is sent again
        assert seen == [MATCH_GAMES, MATCH_GAMES + 1, MATCH_GAMES + 2]
        (waiting,) = feed.topics[("tournament", 1)]  # the reading viewer has gone
        # one pending event per section that changed, the newest: the older ones dropped
        assert set(waiting.pending) == {"summary", "standings", "recent"} and waiting.dropped >= 3
        summary = json.loads(waiting.pending["summary"].split("data: ", 1)[1])["html"]
        assert f'<span class="done">{MATCH_GAMES + 2}</span>' in summary
        await slow.aclose()
        assert ("tournament", 1) not in feed.topics  # a gone viewer leaves nothing behind
        nursery.cancel_scope.cancel()
    app.state.reader.close()


class _ViewServer:
    """An ``arbiter serve [--http]`` process (its environment tagged, so its
    child is found), its stderr read by a thread (never a full pipe)."""

    def __init__(self, tmp_path: Path, *options: str, http: bool = True):
        import threading
        import uuid

        self.db = tmp_path / "server.db"
        self.tag = f"webserve-{uuid.uuid4().hex}"
        self.proc = start("serve", "--db", self.db, "--listen", "127.0.0.1:0", *options,
                          *(("--http", "127.0.0.1:0") if http else ()), env={"TAG": self.tag})
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        if http:
            self.url = self.wait_log(r"web view of .* at (http://127\.0\.0\.1:\d+/)$")[1]
        self.port = int(self.wait_log(r"listening on 127\.0\.0\.1:(\d+)$")[1])

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.strip())

    def wait_log(self, pattern: str, after: int = 0) -> re.Match[str]:
        """The first line from ``after`` on matching ``pattern`` (a guard
        against a hang: PROCESS_TIMEOUT)."""
        import time

        deadline = time.monotonic() + PROCESS_TIMEOUT
        while time.monotonic() < deadline:
            for line in self.lines[after:]:
                if match := re.search(pattern, line):
                    return match
            assert self.proc.poll() is None or self.lines, "the server ended"
            time.sleep(0.05)
        raise AssertionError(f"no {pattern!r} in {self.lines}")

    def views(self) -> list[int]:
        """The pids of its view processes (``arbiter web --child-of-server``)."""
        from arbiter.procs import cmdline, processes_with
        from arbiter.web.child import CHILD_OPTION

        return [pid for pid in processes_with(self.tag) if CHILD_OPTION in cmdline(pid)]

    def get_json(self, path: str):
        with urllib.request.urlopen(self.url + path, timeout=PROCESS_TIMEOUT) as response:
            return json.load(response)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat's fields after the command name (state first)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2:].split()


def _wait_gone(pids: list[int]) -> list[int]:
    """Those of ``pids`` still alive after PROCESS_TIMEOUT (a guard, not a measure)."""
    import time

    from arbiter.procs import pid_alive

    deadline = time.monotonic() + PROCESS_TIMEOUT
    while (left := [p for p in pids if pid_alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def test_the_server_serves_the_view_from_a_child_process(tmp_path):
    """`arbiter serve --http` (specs/web.md §The server's view): the same
    pages (its arena listed as a running tournament), served by a child
    process of the server in a session of its own and at a lower CPU
    priority (not the loop that times the engines); Ctrl-C stops both:
    exit 130, no process left behind."""
    from arbiter.web.child import VIEW_NICENESS

    server = _ViewServer(tmp_path, "--arena", "game=troll tc=10+0.1 name=arena")
    try:
        (arena,) = server.get_json("api/tournaments")["tournaments"]
        assert arena["name"] == "arena" and arena["status"] == "running"
        with urllib.request.urlopen(server.url + f"tournament/{arena['id']}",
                                    timeout=PROCESS_TIMEOUT) as response:
            assert b'data-live="/events/tournament/' in response.read()
        (view,) = server.views()
        mine, its = _stat(server.proc.pid), _stat(view)
        assert int(its[1]) == server.proc.pid  # the server's child
        assert its[3] != mine[3] and its[3] == its[2] == str(view)  # its own session and group: Ctrl-C is the server's
        assert int(its[16]) == min(19, int(mine[16]) + VIEW_NICENESS)  # stat's nice field (19 at most)
        server.proc.send_signal(signal.SIGINT)
        assert server.proc.wait(timeout=PROCESS_TIMEOUT) == 130
        assert _wait_gone([view]) == []
        assert "Traceback" not in "\n".join(server.lines)
    finally:
        server.close()


def test_the_servers_view_is_supervised_and_never_outlives_it(tmp_path):
    """A view process that dies is started again on the same URL while the
    server goes on; a server killed with SIGKILL (no clean-up at all) takes
    its view with it: the view ends when its stdin, a pipe only the server
    held, reaches its end (specs/web.md §The server's view)."""
    server = _ViewServer(tmp_path)
    try:
        (first,) = server.views()
        seen = len(server.lines)
        import os

        os.kill(first, signal.SIGKILL)
        server.wait_log(r"the web view ended \(exit -9\); starting it again", seen)
        assert _wait_gone([first]) == []
        import time

        deadline = time.monotonic() + PROCESS_TIMEOUT
        while True:  # the new view listens on the same port once it has started
            try:
                assert server.get_json("api/tournaments") == {"tournaments": []}
                break
            except OSError:
                assert time.monotonic() < deadline and server.proc.poll() is None, server.lines
                time.sleep(0.1)
        (second,) = server.views()
        assert second != first
        server.proc.kill()
        server.proc.wait()
        assert _wait_gone([second]) == []
    finally:
        server.close()


def test_a_view_address_in_use_is_an_error(tmp_path, db):
    """`arbiter web` and `arbiter serve --http` on a port another socket
    holds: exit 2 with one line naming --http (no traceback); the server
    never starts."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        run = invoke("web", "--db", db, "--http", address)
        assert run.returncode == 2, run.stderr
        assert f"arbiter: error: --http {address}: Address already in use" in run.stderr
        run = arbiter("serve", "--db", tmp_path / "s.db", "--listen", "127.0.0.1:0", "--http", address)
        assert run.returncode == 2, run.stderr
        assert f"--http {address}: the web view did not start (exit 2)" in run.stderr
        assert "listening on" not in run.stderr


def test_arena_games_show_live(tmp_path):
    """`arbiter serve --arena` with two `arbiter connect` engines (gated: the
    first game holds at ply 2 * GATE_AFTER): the arena's game in progress is
    shown as a tournament's is (position, clocks, last move, its own page);
    once stored (keyed by its seq), its live page leads to the stored game
    (specs/web.md §Games in progress)."""
    gate = tmp_path / "gate"
    server = _ViewServer(tmp_path, "--arena", "game=troll tc=1000+0 name=arena", http=False)
    engines = []
    try:
        for name in ("ga", "gb"):
            token = invoke("token", "add", name, "--db", server.db)
            assert token.returncode == 0, token.stderr
            engines.append(start("connect", f"127.0.0.1:{server.port}", "--token", token.stdout.strip(),
                                 "-e", f"cmd='{PYTHON} {GATE}' name={name} env.GATE={gate} "
                                       f"env.GATE_AFTER={GATE_AFTER}", env={"TAG": server.tag}))
        wait_for_live_plies(server.db, 2 * GATE_AFTER, server.proc)
        app = create_app(server.db)
        with TestClient(app) as client:
            (arena,) = get_json(client, "/api/tournaments")["tournaments"]
            url = f"/api/tournament/{arena['id']}"
            (live,) = get_json(client, url)["live"]
            assert live["key"] == "pair1-1" and {live["white"], live["black"]} == {"ga", "gb"}
            assert live["plies"] == 2 * GATE_AFTER and live["last_move"]
            assert all(live["clock_ms"][side] > 0 for side in ("white", "black"))
            assert f"ply {2 * GATE_AFTER}" in live["svg"]
            assert f'href="/tournament/{arena["id"]}/live/pair1-1"' in get_page(client, url[4:])
            game = get_json(client, f"{url}/live/pair1-1")
            assert [m["ply"] for m in game["moves"]] == list(range(1, 2 * GATE_AFTER + 1))
            gate.touch()
            server.wait_log(r"arena game 1: ")
            import time

            deadline = time.monotonic() + PROCESS_TIMEOUT  # the live rows written after the store
            while (finished := client.get(f"/tournament/{arena['id']}/live/pair1-1",
                                          follow_redirects=False)).status_code != 303:
                assert finished.status_code == 200 and time.monotonic() < deadline
                time.sleep(0.05)
            stored = get_json(client, f"{url}?page=1")["games"]
            first = [g for g in stored if g["key"] == "1"]
            assert finished.headers["location"] == f"/game/{first[0]['id']}"
        app.state.reader.close()
        server.proc.send_signal(signal.SIGINT)
        assert server.proc.wait(timeout=PROCESS_TIMEOUT) == 130
    finally:
        gate.touch()
        server.close()
        for engine in engines:
            if engine.poll() is None:
                engine.kill()
            engine.communicate()

"""The web view (``specs/web.md``): every page and its JSON on a real
database made by a real match, the same figures as the command line, the
board at every ply, pagination, 404s, escaping of peers' text, and
``arbiter web`` as a real process stopped by Ctrl-C."""

from __future__ import annotations

import hashlib
import html
import json
import re
import signal
import sys
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest
from cli import PROCESS_TIMEOUT, invoke, start
from markupsafe import escape  # what the templates escape with
from starlette.testclient import TestClient

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
    app = create_app(db)
    with TestClient(app) as client:
        yield client
    app.state.reader.close()


def get_json(client, url: str):
    response = client.get(url)
    assert response.status_code == 200, (url, response.text)
    assert response.headers["content-type"] == "application/json"
    return response.json()


def get_page(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.text)
    assert response.headers["content-type"].startswith("text/html")
    return response.text


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
    for engine in shown["standings"]["engines"]:
        assert f"<td class=\"n\">{engine['elo']}</td><td class=\"n\">{engine['elo_error']}</td>" in page
    for name, count in shown["standings"]["terminations"].items():
        assert f"<tr><td>{name}</td><td class=\"n\">{count}</td></tr>" in page


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
    page = get_page(client, f"/game/{game_id}?ply=1")
    for label, ply in (("first", 0), ("previous", 0), ("next", 2), ("last", total)):
        assert f'<a href="/game/{game_id}?ply={ply}">{label}</a>' in page
    assert "<svg" in page and f'href="/game/{game_id}.pgn"' in page


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
    assert '<a href="/tournament/1?page=2">next</a>' in page
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
        if url.endswith(".pgn"):
            assert not response.headers["content-type"].startswith("text/html")
            continue
        page = response.text
        assert SCRIPT not in page and "<img" not in page, url
        escaped += html.escape(SCRIPT) in page or "&lt;img" in page
        assert "script-src" not in response.headers["content-security-policy"]  # no script at all
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
        assert f"LLR {sprt['llr']} in [{sprt['lower']}, {sprt['upper']}], {sprt['decision']}" in page
        (illegal, *_) = [g for g in shown["games"] if g["termination"] == "illegal-move"]
        game = get_json(client, f"/api/game/{illegal['id']}")
        assert game["game"]["termination"] == "illegal-move" and "illegal move" in game["game"]["detail"]
        assert str(escape(game["game"]["detail"])) in get_page(client, f"/game/{game['game']['id']}")
    app.state.reader.close()


def test_an_aborted_tournament_without_games(tmp_path):
    """A real match aborted before its first game (an engine that exits at
    once): its note, its empty standings and crosstable, page 1 of no games."""
    path = tmp_path / "aborted.db"
    run = invoke("match", "troll", "cmd=false name=bad", GREEDY, "--tc", "10+0.1", "--db", path, "--plain")
    assert run.returncode == 1, run.stderr
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

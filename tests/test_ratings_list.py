"""``arbiter ratings`` (specs/ratings.md §Rating lists) on a real database
written by real runs of the sample engines, and the builds those runs store
(specs/storage.md §engines, §entrants)."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from cli import arbiter, invoke

from arbiter.cli.ratings import format_table
from arbiter.store import Store
from arbiter.tournament import tournament_standings

PY = sys.executable
FAST = ["--tc", "depth=1", "--maxplies", "30", "--plain"]


def spec(name: str, kind: str) -> str:
    return f"cmd='{PY} -m sample_engines.{kind}' name={name}"


def elo(p: float) -> float:
    """specs/ratings.md §Elo from score."""
    return -400.0 * math.log10(1.0 / p - 1.0)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """A database of four real runs: 1 a troll round-robin of random, greedy
    and mcts; 2 a troll match greedy-random; 3 a troll match of two engines
    no other tournament has (r2, g2); 4 an atoll match."""
    db = tmp_path_factory.mktemp("ratings") / "r.db"
    for args in (
            ["tournament", "-g", "troll", "-e", spec("random", "random"), "-e",
             spec("greedy", "greedy"), "-e", spec("mcts", "mcts"), "--games", "2"],
            ["match", "troll", spec("greedy", "greedy"), spec("random", "random"),
             "--games", "4"],
            ["match", "troll", spec("r2", "random"), spec("g2", "greedy"), "--games", "2"],
            ["match", "atoll", spec("greedy", "greedy"), spec("random", "random"),
             "--games", "2"]):
        run = invoke(*args, *FAST, "--db", db)
        assert run.returncode == 0, run.stderr
    return db


def copy(runs: Path, tmp_path: Path) -> Path:
    path = tmp_path / "r.db"
    shutil.copyfile(runs, path)
    return path


def ratings(db: Path, *args: str) -> dict:
    run = invoke("ratings", "--db", db, *args, "--json")
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def raw(db: Path, sql: str, params=()) -> list:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def test_a_run_stores_each_engines_build(runs):
    """specs/storage.md §entrants: the id lines, the command and the hash of
    the file the command runs (here the interpreter) of every engine."""
    with open(PY, "rb") as file:
        python = hashlib.sha256(file.read()).hexdigest()
    with Store(runs, readonly=True) as store:
        entrants = {e["name"]: e for e in store.engines(1)}
        engines = {e["name"]: e for e in store.all_engines()}
    assert {n: (e["id_name"], e["id_author"]) for n, e in entrants.items()} == {
        "random": ("Random", "Arbiter project"), "greedy": ("Greedy", "Arbiter project"),
        "mcts": ("MCTS", "Arbiter project")}
    assert entrants["mcts"]["command"] == f"{PY} -m sample_engines.mcts"
    assert {e["executable_sha256"] for e in entrants.values()} == {python}
    assert list(engines) == ["random", "greedy", "mcts", "r2", "g2"]
    assert engines["greedy"]["id_name"] == "Greedy"


def test_the_list_rates_every_chosen_game_and_counts_each_engines(runs):
    """specs/ratings.md §Rating lists: games, points, score, draws, draw ratio,
    opponents per engine, counted here from the games table itself."""
    table = ratings(runs, "--game", "troll", "-t", "1", "-t", "2")
    assert (table["game"], table["tournaments"], table["connected"], table["groups"]) == (
        "troll", [1, 2], True, 1)
    rows = raw(runs, "select white, black, result from games where tournament in (1, 2)")
    assert table["games"] == len(rows) == 10
    for line in table["engines"]:
        name = line["name"]
        mine = [(w, b, r) for w, b, r in rows if name in (w, b)]
        points = sum({"1-0": 1.0, "0-1": 0.0}.get(r, 0.5) if w == name
                     else {"1-0": 0.0, "0-1": 1.0}.get(r, 0.5) for w, b, r in mine)
        draws = sum(r == "1/2-1/2" for _, _, r in mine)
        assert (line["games"], line["points"], line["draws"]) == (len(mine), points, draws)
        # JSON fractions to 4 decimals, Elo to 1 (specs/tournament.md §JSON numbers)
        assert line["score"] == round(points / len(mine), 4)
        assert line["draw_ratio"] == round(draws / len(mine), 4)
        assert line["opponents"] == len({b if w == name else w for w, b, _ in mine})
        assert line["error"] > 0 and line["reason"] is None
    elos = [line["elo"] for line in table["engines"]]
    assert elos == sorted(elos, reverse=True) and sum(elos) == pytest.approx(0.0, abs=0.05 * len(elos))
    assert [line["rank"] for line in table["engines"]] == [1, 2, 3]


def test_one_tournament_rates_as_its_standings_do(runs):
    """specs/ratings.md §Rating lists: the model and prior of the standings,
    so one tournament's list is its standings' ratings and first-move
    advantage (both JSON, rounded alike: specs/tournament.md §JSON numbers)."""
    table = ratings(runs, "-g", "troll", "-t", "1")
    with Store(runs, readonly=True) as store:
        tournament = store.tournament(1)
        assert tournament is not None
        standings = tournament_standings(store, tournament)
    expected = {e["name"]: (e["elo"], e["elo_error"]) for e in standings.to_json()["engines"]}
    assert {e["name"]: (e["elo"], e["error"]) for e in table["engines"]} == expected
    assert table["first_move"] == standings.to_json()["first_move"]
    assert table["first_move"]["side"] == "white" and table["first_move"]["games"] == 6


def test_two_engines_across_tournaments_and_an_anchor(runs, tmp_path):
    """specs/ratings.md §First-move advantage, §Prior, §Anchoring: for two
    engines the difference is half the difference of the Elo of each one's
    score with the first move, (elo(q_g) - elo(q_r)) / 2, the advantage half
    their sum, each q = (points + 1/4) / (games + 1/2) over the games of both
    tournaments; the anchor engine sits at its rating with a zero error bar."""
    db = copy(runs, tmp_path)
    with sqlite3.connect(db) as conn:  # only greedy and random in tournament 1
        conn.execute("delete from games where tournament = 1 and 'mcts' in (white, black)")
    rows = raw(db, "select white, result from games where game = 'troll' and tournament in (1, 2)")
    first = {name: [(1.0 if r == "1-0" else 0.5 if r == "1/2-1/2" else 0.0) for w, r in rows if w == name]
             for name in ("greedy", "random")}  # White moves first in troll
    q = {name: (sum(s) + 0.25) / (len(s) + 0.5) for name, s in first.items()}
    table = ratings(db, "-g", "troll", "-t", "1", "-t", "2", "--anchor", "random=1500")
    line = {e["name"]: e for e in table["engines"]}
    assert set(line) == {"random", "greedy", "mcts"}
    assert line["random"]["elo"] == 1500.0 and line["random"]["error"] == 0.0
    assert line["greedy"]["elo"] - 1500.0 == pytest.approx(
        (elo(q["greedy"]) - elo(q["random"])) / 2, abs=0.05 + 1e-9)  # JSON Elo to 1 decimal
    assert table["first_move"]["elo"] == pytest.approx(
        (elo(q["greedy"]) + elo(q["random"])) / 2, abs=0.05 + 1e-9)
    assert table["anchor"] == {"engine": "random", "rating": 1500.0}
    # mcts is an entrant of tournament 1 without a game left: undefined, and said why
    assert line["mcts"] | {"rank": 0} == {
        "rank": 0, "name": "mcts", "elo": None, "error": None, "games": 0, "points": 0.0,
        "score": None, "draws": 0, "draw_ratio": None, "opponents": 0, "group": None,
        "reason": "no games: nothing measures its rating, score or draw ratio"}
    text = invoke("ratings", "--db", db, "-g", "troll", "-t", "1", "-t", "2")
    assert text.returncode == 0, text.stderr
    mcts = next(row for row in text.stdout.splitlines() if " mcts " in row)
    assert mcts.split()[2:] == ["undefined", "-", "0", "-", "-", "0"]


def test_games_not_connected_are_flagged(runs):
    """specs/ratings.md §Rating lists: a warning, each group's number, and
    ``connected`` false when no games link two groups of engines."""
    table = ratings(runs, "-g", "troll")
    assert table["tournaments"] == [1, 2, 3]
    assert (table["connected"], table["groups"]) == (False, 2)
    group = {e["name"]: e["group"] for e in table["engines"]}
    assert group["r2"] == group["g2"] != group["random"] == group["greedy"] == group["mcts"]
    assert len(table["warnings"]) == 1 and "not comparable" in table["warnings"][0]
    text = invoke("ratings", "--db", runs, "-g", "troll")
    assert text.returncode == 0
    assert text.stderr.startswith("arbiter: warning: the games do not connect every engine: "
                                  "2 groups (")
    header = text.stdout.splitlines()[2]
    assert header.split()[-1] == "group"
    assert max(len(line) for line in text.stdout.splitlines()) <= 80


def test_an_engine_that_played_as_two_builds_is_flagged(runs, tmp_path):
    """specs/ratings.md §Rating lists: the same name with another build in
    another tournament is rated as one engine, with a warning naming both."""
    db = copy(runs, tmp_path)
    assert ratings(db, "-g", "troll", "-t", "1", "-t", "2")["warnings"] == []
    with Store(db) as store:
        store.record_build(2, "greedy", argv=[PY, "-m", "sample_engines.greedy"], cwd=None,
                           id_name="Greedy 2", id_author="Arbiter project")
    (warning,) = ratings(db, "-g", "troll", "-t", "1", "-t", "2")["warnings"]
    assert warning.startswith("engine 'greedy' played as 2 builds (tournament 1: id name "
                              "'Greedy', executable ")
    assert "; tournament 2: id name 'Greedy 2', executable " in warning


def test_a_version_1_file_is_rated_read_only(tmp_path):
    """specs/storage.md §Migration: ratings read an old file without changing it."""
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)  # the version-1 file of tests/test_store.py, from its dump
    conn.executescript((Path(__file__).parent / "data" / "store-v1.sql").read_text(encoding="utf-8"))
    conn.close()
    before = db.read_bytes()
    table = ratings(db, "-g", "troll", "-t", "1")
    assert [e["name"] for e in table["engines"]] == ["greedy", "mcts", "random"]
    assert db.read_bytes() == before


@pytest.mark.parametrize(("args", "message"), [
    (["--anchor", "mcts"], "--anchor 'mcts': expected NAME=ELO (mcts=1500)"),
    (["--anchor", "mcts=strong"], "--anchor 'mcts=strong': 'strong' is not a number"),
    (["--anchor", "mcts=inf"], "--anchor 'mcts=inf': the rating must be a finite number"),
    (["-g", "troll", "--anchor", "nobody=1"], "--anchor: engine 'nobody' has no game in the "
                                              "chosen games (engines: g2, greedy, mcts, r2, random)"),
    (["-g", "chess"], "--game 'chess': unknown game; choose one of: troll, atoll, morris, talisman"),
    (["-t", "9"], "no tournament 9"),
    (["-g", "atoll", "-t", "1", "-t", "9"], "no tournament 9"),
    ([], "holds games of atoll (2 games), troll (12 games): choose one with --game"),
])
def test_bad_input_says_what_is_wrong(runs, args, message):
    run = invoke("ratings", "--db", runs, *args)
    assert run.returncode == 2
    assert run.stderr.startswith("arbiter: error: ") and message in run.stderr, run.stderr


def test_a_missing_database_and_an_empty_selection(tmp_path):
    run = invoke("ratings", "--db", tmp_path / "none.db")
    assert (run.returncode, run.stderr) == (2, f"arbiter: error: no database at {tmp_path / 'none.db'}\n")
    with Store(tmp_path / "empty.db"):
        pass
    run = invoke("ratings", "--db", tmp_path / "empty.db")
    assert run.returncode == 0 and run.stdout == f"{tmp_path / 'empty.db'}: no games to rate\n"


def test_ratings_runs_without_the_event_loop_in_a_real_process(runs):
    """arbiter/cli/__init__.py: a light command imports no trio, no run machinery."""
    run = arbiter("ratings", "--db", runs, "-g", "atoll", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert run.returncode == 0, run.stderr
    imported = {line.rsplit("|", 1)[1].strip() for line in run.stderr.splitlines()
                if line.startswith("import time:")}
    # (the lazy group's importlib.import_module of arbiter.cli.ratings has no
    # line of its own: only imports by statement are timed; its imports are)
    assert {"arbiter.rating", "arbiter.store"} <= imported
    assert not imported & {"trio", "arbiter.tournament", "arbiter.engine", "arbiter.match"}
    engine_lines = run.stdout.splitlines()[3:5]  # after them, the first-move advantage
    assert sorted(line.split()[1] for line in engine_lines) == ["greedy", "random"]


def test_the_text_fits_80_columns_and_never_prints_minus_zero():
    """specs/ratings.md §Rating lists (Text): names up to 20 characters fit 80
    columns, even with the group column; a rating that rounds to 0 is +0.0."""
    line = {"rank": 1, "name": "n" * 20, "elo": -0.04, "error": 1234.5, "games": 99999,
            "points": 99998.5, "score": 0.99999, "draws": 5, "draw_ratio": 0.00005,
            "opponents": 999, "group": 0, "reason": None}
    table = {"game": "talisman", "games": 99999, "tournaments": list(range(1, 20)),
             "anchor": {"engine": "n" * 20, "rating": -1234.5}, "connected": False,
             "engines": [line]}
    text = format_table(table)
    assert max(len(row) for row in text.splitlines()) <= 80, text
    assert text.splitlines()[0] == "talisman: 99999 games of 19 tournaments"
    assert text.splitlines()[3].split()[2] == "+0.0"


def test_a_tournament_of_another_game_adds_no_engine(runs):
    """specs/ratings.md §Rating lists (Selection): --game wins over --tournament."""
    table = ratings(runs, "-g", "atoll", "-t", "1", "-t", "4", "-t", "4")
    assert table["tournaments"] == [4]
    assert sorted(e["name"] for e in table["engines"]) == ["greedy", "random"]
    assert table["games"] == 2


def test_los_matrix_between_every_two_engines(runs):
    """specs/ratings.md §LOS matrix: ``--los`` adds the likelihood that each
    engine (row) is stronger than each other (column), in the list's order,
    from the joint ratings: the two sides of a pair add up to 1, nothing on
    the diagonal or between groups no games link; the text prints the same
    figures as percentages within 80 columns."""
    table = ratings(runs, "-g", "troll", "--los")
    los = table["los"]
    assert los["engines"] == [e["name"] for e in table["engines"]]
    group = {e["name"]: e["group"] for e in table["engines"]}
    names = los["engines"]
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            cell = los["matrix"][i][j]
            if i == j or group[a] != group[b]:
                assert cell is None, (a, b)
            else:
                assert 0.0 <= cell <= 1.0 and cell + los["matrix"][j][i] == pytest.approx(1.0, abs=2e-4)
                elo_a, elo_b = (next(e["elo"] for e in table["engines"] if e["name"] == n) for n in (a, b))
                assert (cell > 0.5) == (elo_a > elo_b) or elo_a == elo_b
    assert "los" not in ratings(runs, "-g", "troll")  # only when asked
    from test_standings_display import assert_json_precision  # specs/tournament.md §JSON numbers

    assert assert_json_precision(table) > 20
    text = invoke("ratings", "--db", runs, "-g", "troll", "--los")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    start = lines.index("LOS: likelihood that the row's engine is stronger than the column's")
    assert lines[start + 1].split() == ["#", "engine", *map(str, range(1, len(names) + 1))]
    for i, row in enumerate(lines[start + 2:start + 2 + len(names)]):
        cells = ["-" if c is None else f"{100 * c:.1f}%" for c in los["matrix"][i]]
        assert row.split() == [str(i + 1), names[i], *cells]
    assert max(len(line) for line in lines) <= 80


def test_los_matrix_of_many_engines_continues_below():
    """specs/ratings.md §LOS matrix: columns that 80 characters cannot hold
    continue in a block below, each with its own header."""
    from arbiter.cli.ratings import format_los

    names = [f"engine_number_{i:02d}" for i in range(12)]  # 16 characters
    matrix = [[None if i == j else 0.5 for j in range(12)] for i in range(12)]
    table = {"engines": [{"name": n} for n in names], "los": {"engines": names, "matrix": matrix}}
    lines = format_los(table).splitlines()
    headers = [line for line in lines if line.split()[:2] == ["#", "engine"]]
    assert len(headers) == 2 and max(len(line) for line in lines) <= 80
    assert headers[0].split()[2:] == [str(c) for c in range(1, 9)]  # (80 - 4 - 16) // 7 = 8
    assert headers[1].split()[2:] == [str(c) for c in range(9, 13)]
    assert sum(1 for line in lines if line.split()[1] == names[0]) == 2

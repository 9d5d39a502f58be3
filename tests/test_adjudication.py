"""Score adjudication end to end (specs/match.md §Adjudication): ``--resign``
and ``--draw`` on ``arbiter match`` and ``arbiter tournament``, the TOML keys,
the record in the database, the canonical spelling in the tournament's
identity, and bad values.  The rules themselves are tested in-process in
tests/test_match_state.py; here real engines play real games.

``greedy`` reports a ``cp`` score on every move, from a static evaluation
whose values stay far below 100000, so ``--draw "movenumber=0 movecount=1
score=100000"`` ends every game after each side's first move.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from cli import invoke

from arbiter.config import TournamentConfig
from arbiter.engine import EngineConfig
from arbiter.store import game_record

PY = sys.executable
SCORED = Path(__file__).resolve().parent / "bad_engines" / "scored.py"
GREEDY = f"cmd={PY} arg=-m arg=sample_engines.greedy"
RANDOM = f"cmd={PY} arg=-m arg=sample_engines.random"
#: every game of greedy against greedy is a draw after two plies
ALWAYS_DRAW = "movenumber=0 movecount=1 score=100000"


def games(db: Path) -> list[dict]:
    with sqlite3.connect(db) as connection:
        connection.row_factory = sqlite3.Row
        return [dict(row) for row in connection.execute("select * from games order by id")]


def test_match_draw_adjudication_is_recorded_with_the_scores(tmp_path):
    db = tmp_path / "m.db"
    run = invoke("match", "troll", f"{GREEDY} name=a", f"{GREEDY} name=b", "--games", "2",
                 "--tc", "depth=1", "--draw", ALWAYS_DRAW, "--db", db, "--plain")
    assert run.returncode == 0, run.stdout + run.stderr
    played = games(db)
    assert len(played) == 2
    for game in played:
        assert (game["termination"], game["result"], game["plies"]) == ("adjudicated-draw", "1/2-1/2", 2)
        record = game_record(game)
        white, black = (move["score"] for move in record["moves"])
        assert record["termination_detail"] == (
            "adjudicated a draw: scores within 100000 cp of zero over each side's last 1 move(s) "
            f"(White {white}; Black {black}), from move 0")
    # the rules define the tournament: --resume plays the stored ones and refuses others
    again = invoke("tournament", "--resume", "1", "--db", db, "--resign", "movecount=1 score=1")
    assert again.returncode == 2 and "drop --resign" in again.stderr + again.stdout


def scored(name: str, score: str) -> str:
    """An engine that reports ``score`` with every move (tests/bad_engines/scored.py)."""
    return f"cmd={PY} arg={SCORED} name={name} env.SCORE='{score}'"


def test_match_resign_twosided_with_a_winprob_on_the_centipawn_scale(tmp_path):
    """White says it is lost (cp -700), Black agrees in its own words
    (winprob 0.99, about +798 cp): White loses once both said so on 2 moves."""
    db = tmp_path / "r.db"
    run = invoke("match", "troll", scored("doomed", "cp -700"), scored("sure", "winprob 0.99"),
                 "--games", "1", "--tc", "depth=1", "--resign", "twosided=true movecount=2 score=600",
                 "--db", db, "--plain")
    assert run.returncode == 0, run.stdout + run.stderr
    (game,) = games(db)
    assert (game["termination"], game["result"], game["plies"]) == ("adjudicated-resign", "0-1", 4)
    assert json.loads(game["record"])["termination_detail"] == (
        "adjudicated a loss for White (resign): its score over its last 2 move(s) was cp -700, cp -700, "
        "at most -600 cp, and Black's was winprob 0.99, winprob 0.99, at least +600 cp")


def test_adjudication_is_off_by_default(tmp_path):
    db = tmp_path / "off.db"
    run = invoke("match", "troll", f"{GREEDY} name=a", f"{GREEDY} name=b", "--games", "1",
                 "--tc", "depth=1", "--maxplies", "6", "--db", db, "--plain")
    assert run.returncode == 0, run.stdout + run.stderr
    assert [game["termination"] for game in games(db)] == ["max-plies"]


def test_tournament_file_keys_as_tables_and_the_canonical_spelling(tmp_path):
    """specs/match.md §Adjudication: the keys of a tournament file (a table
    here), stored canonically with the tournament; resign is checked first
    but greedy never reaches -100000, so draws."""
    config = tmp_path / "t.toml"
    config.write_text(f"""
game = "troll"
games = 2
tc = "depth=1"
engine = ["{GREEDY} name=a", "{GREEDY} name=b"]
resign = {{ score = 100000, movecount = 50, twosided = true }}
draw = {{ score = 100000, movecount = 1, movenumber = 0 }}
""")
    db = tmp_path / "t.db"
    run = invoke("tournament", config, "--db", db, "--plain")
    assert run.returncode == 0, run.stdout + run.stderr
    assert {game["termination"] for game in games(db)} == {"adjudicated-draw"}
    with sqlite3.connect(db) as connection:
        stored = json.loads(connection.execute("select config from tournaments").fetchone()[0])
    assert stored["resign"] == "movecount=50 score=100000 twosided=true"
    assert stored["draw"] == ALWAYS_DRAW


def test_identity_is_unchanged_without_adjudication():
    """A tournament made before --resign/--draw existed is still found by
    the same command: the keys enter its identity only when set."""
    engines = [EngineConfig(cmd="a", name="a"), EngineConfig(cmd="b", name="b")]
    plain = TournamentConfig(game="troll", engines=engines)
    assert "resign" not in plain.defining() and "draw" not in plain.defining()
    ruled = TournamentConfig(game="troll", engines=engines, draw=ALWAYS_DRAW)
    assert ruled.defining()["draw"] == ALWAYS_DRAW and ruled.identity() != plain.identity()


@pytest.mark.parametrize("args, words", [
    (("--resign", "movecount=3"), "--resign 'movecount=3': score= is missing"),
    (("--draw", "movenumber=1 movecount=x score=3"), "movecount must be a whole number, not 'x'"),
    (("--resign", "movecount=1 score=5 twosided=1"), "twosided must be true or false, not '1'"),
])
def test_bad_adjudication_options_exit_2_with_a_clear_message(tmp_path, args, words):
    run = invoke("match", "troll", RANDOM, RANDOM, *args, "--db", tmp_path / "x.db")
    assert run.returncode == 2
    assert words in run.stderr + run.stdout
    assert not (tmp_path / "x.db").exists() or games(tmp_path / "x.db") == []

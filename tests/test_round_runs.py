"""Swiss and knockout tournaments played by real runs (specs/tournament.md
§Swiss, §Knockout, §Rounds and resume): real ``arbiter`` processes, real
engines, real SQLite files.  The pairing rules themselves are tested
in-process (tests/test_swiss.py, tests/test_knockout.py, tests/test_rounds.py);
these prove the run: a round's pairings stored before its first game, the
next round paired from the results, a resume that never pairs a round again.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import time
import uuid
from collections import Counter
from pathlib import Path

from bad_engines.harness import processes_with
from cli import arbiter, start
from test_tournament import HERE, PY, one, spec

FAST = ["--tc", "depth=1", "--plain"]
#: seconds a run may take before the test fails: a guard against a hang, not a measure
GUARD = 240


def pairings(db: Path) -> list[tuple]:
    """The stored pairings ([] before the run made the table)."""
    conn = sqlite3.connect(db)
    try:
        return conn.execute("select round, pairing, pair, first, second, created from pairings "
                            "order by round, pairing, pair").fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


def games(db: Path) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("select key, round, pairing, pair, white, black, stored from games "
                            "order by seq").fetchall()
    finally:
        conn.close()


def test_a_swiss_run_pairs_each_round_from_the_last_and_stores_it_first(tmp_path):
    """§Swiss: five engines over three rounds: each round's pairings stored
    before its first game; every stored game belongs to a stored pair; no
    two engines meet twice; each engine gets at most one bye (five is odd:
    one bye a round); the standings' JSON holds the Swiss table."""
    db, tag = tmp_path / "s.db", f"arbiter-test-{uuid.uuid4()}"
    engines = [arg for name in ("a", "b", "c", "d", "e") for arg in ("-e", spec(name, TAG=tag))]
    done = arbiter("tournament", "-g", "troll", *engines, "--format", "swiss", "--rounds", "3",
                   "-c", "2", "--db", db, *FAST, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    pairs = pairings(db)
    assert sorted({p[0] for p in pairs}) == [1, 2, 3]
    byes = Counter(p[3] for p in pairs if p[4] is None)
    assert sum(byes.values()) == 3 and max(byes.values()) == 1
    meetings = Counter(frozenset(p[3:5]) for p in pairs if p[4] is not None)
    assert max(meetings.values()) == 1
    created = {(p[1], p[2]): p[5] for p in pairs}
    played = games(db)
    assert len(played) == 2 * sum(1 for p in pairs if p[4] is not None)
    for key, _round, pairing, pair, _white, _black, stored in played:
        assert created[pairing, pair] <= stored, key  # the pair was stored before its game
    standings = json.loads(arbiter("standings", "--db", db, "--json", cwd=tmp_path).stdout)
    assert {line["name"] for line in standings["swiss"]} == {"a", "b", "c", "d", "e"}
    assert processes_with(tag) == []


def test_a_drawn_knockout_goes_to_its_tiebreak_pairs_then_the_better_seed(tmp_path):
    """§Knockout: every game a draw (adjudicated at two plies): each match gets
    its pairs, then its tie-break pairs one at a time up to the cap, then the
    better seed goes on; four engines seeded d, c, b, a: d wins the final."""
    db, tag = tmp_path / "k.db", f"arbiter-test-{uuid.uuid4()}"
    engines = [arg for name in ("a", "b", "c", "d") for arg in ("-e", spec(name, TAG=tag))]
    done = arbiter("tournament", "-g", "troll", *engines, "--format", "knockout", "--seeds", "d,c,b,a",
                   "--tiebreak-pairs", "1", "--maxplies", "2", "-c", "2", "--db", db, *FAST,
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    pairs = pairings(db)
    matches = Counter((p[0], p[1]) for p in pairs)
    assert sorted(matches.values()) == [2, 2, 2]  # three matches, each one pair + one tie-break pair
    final = [p for p in pairs if p[0] == 2]
    assert {final[0][3], final[0][4]} == {"d", "c"}  # seeds 1 and 2 went on from drawn semi-finals
    standings = json.loads(arbiter("standings", "--db", db, "--json", cwd=tmp_path).stdout)
    assert standings["bracket"]["champion"] == "d"
    assert processes_with(tag) == []


def test_a_swiss_run_killed_mid_round_resumes_without_pairing_it_again(tmp_path):
    """§Rounds and resume: a run killed with SIGKILL once round 2 is paired,
    while its games play (paced engines: a game lasts about a second), keeps
    round 2's stored pairings; the same command plays the round's missing
    games and pairs round 3 from the results, every stored pair's games once."""
    db, tag = tmp_path / "r.db", f"arbiter-test-{uuid.uuid4()}"
    paced = [x for n in ("a", "b", "c", "d") for x in
             ("-e", f"cmd='{PY} {HERE / 'paced.py'}' name={n} env.TAG={tag}")]
    args = ["tournament", "-g", "troll", *paced, "--format", "swiss", "--rounds", "3", "-c", "2",
            "--tc", "st=0.05", "--maxplies", "16", "--plain", "--db", str(db)]
    proc = start(*args, cwd=tmp_path)
    try:
        deadline = time.monotonic() + GUARD  # a guard against a hang only
        while not any(p[0] == 2 for p in pairings(db)):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(GUARD)
    finally:
        proc.kill()
    before = pairings(db)
    assert {p[0] for p in before} == {1, 2}
    assert sum(1 for g in games(db) if g[1] == 2) < 4  # killed in the middle of round 2
    again = arbiter(*args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    after = pairings(db)
    assert after[:len(before)] == before  # round 2 read back, not paired again
    assert {p[0] for p in after} == {1, 2, 3}
    keys = [g[0] for g in games(db)]
    assert len(keys) == len(set(keys)) == 2 * len(after)
    assert one(db, "select status from tournaments")[0] == "finished"
    assert wait_gone(tag) == []


def wait_gone(tag: str) -> list[int]:
    """The engines of ``tag`` still alive once they had time to end (a
    SIGKILLed run's engines get their parent-death signal)."""
    deadline = time.monotonic() + 30  # a guard against a hang only
    while (left := processes_with(tag)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left

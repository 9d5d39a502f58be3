"""The rounds of Swiss and knockout tournaments between the pairing rules and
the store (specs/tournament.md §Rounds and resume, specs/storage.md
§pairings): real SQLite files, the pure planner."""

from __future__ import annotations

import sqlite3

import pytest
from round_runs import config, record, stored_pairs
from test_store import v1_copy

from arbiter.rounds import pair_points
from arbiter.schedule import RoundPair
from arbiter.store import DuplicatePairingError, Store
from arbiter.tournament import delete_tournament


def new(store: Store) -> int:
    return store.create_tournament(name="s", game="troll", format="swiss", identity="x", config={},
                                   engines=[{"name": n} for n in "abc"], total_games=4)


ROUND_1 = [RoundPair(1, 1, 1, "a", "c", seq=0, opening=0), RoundPair(1, 2, 1, "b", None)]
ROUND_2 = [RoundPair(2, 3, 1, "b", "a", seq=2, opening=1), RoundPair(2, 4, 1, "c", None)]


def test_pairings_are_stored_and_read_back(tmp_path):
    """specs/storage.md §pairings: the rows as given, a bye without a second
    engine, seq or opening, in (round, pairing, pair) order, after a reopen."""
    path = tmp_path / "p.db"
    with Store(path) as store:
        tid = new(store)
        store.add_pairings(tid, [p.to_dict() for p in reversed(ROUND_2)])
        store.add_pairings(tid, [p.to_dict() for p in ROUND_1])
    with Store(path, readonly=True) as store:
        assert stored_pairs(store, tid) == ROUND_1 + ROUND_2
        assert all(row["created"].endswith("Z") for row in store.pairings(tid))
        assert store.pairings(tid + 1) == []


def test_a_batch_with_a_stored_pair_writes_nothing(tmp_path):
    """specs/storage.md §pairings: UNIQUE(tournament, pairing, pair); a batch
    is one transaction, so a round paired again leaves the stored one alone."""
    with Store(tmp_path / "p.db") as store:
        tid = new(store)
        store.add_pairings(tid, [p.to_dict() for p in ROUND_1])
        again = [RoundPair(2, 3, 1, "a", "b", seq=2, opening=1), RoundPair(1, 1, 1, "c", "a", seq=9)]
        with pytest.raises(DuplicatePairingError, match="a round is paired once"):
            store.add_pairings(tid, [p.to_dict() for p in again])
        assert stored_pairs(store, tid) == ROUND_1
        other = new(store)  # the same numbers in another tournament are its own
        store.add_pairings(other, [p.to_dict() for p in ROUND_1])


def test_an_older_file_gets_the_table_when_opened_for_writing(tmp_path):
    """specs/storage.md §Migration: a version-2 file without ``pairings``
    gains it (still version 2); one opened read-only is read as it is."""
    path = tmp_path / "old.db"
    with Store(path) as store:
        tid = new(store)
    conn = sqlite3.connect(path)
    conn.execute("drop table pairings")
    conn.commit()
    conn.close()
    with Store(path, readonly=True) as store:
        assert store.pairings(tid) == []
    with Store(path) as store:
        assert store.version == 2 and "pairings" in store.db.table_names()
        store.add_pairings(tid, [p.to_dict() for p in ROUND_1])
        assert stored_pairs(store, tid) == ROUND_1
    old = v1_copy(tmp_path, "v1.db")
    before = old.read_bytes()
    with Store(old, readonly=True) as store:
        assert store.pairings(1) == []
    assert old.read_bytes() == before


def test_deleting_a_tournament_deletes_its_pairings(tmp_path):
    """specs/tournament.md §Listing and deleting: every row with its id goes."""
    with Store(tmp_path / "p.db") as store:
        tid, other = new(store), new(store)
        for t in (tid, other):
            store.add_pairings(t, [p.to_dict() for p in ROUND_1])
        delete_tournament(store, tid)
        assert store.pairings(tid) == [] and stored_pairs(store, other) == ROUND_1


def test_pair_points_count_complete_pairs_only():
    """Half points of the pair's first and second, from both games, whoever
    had White; a pair with one game stored has none yet."""
    pairs = [RoundPair(1, 1, 1, "a", "b", seq=0, opening=0), RoundPair(1, 2, 1, "c", "d", seq=2, opening=0)]
    games = [{"pairing": 1, "pair": 1, "white": "a", "black": "b", "result": "1-0"},
             {"pairing": 1, "pair": 1, "white": "b", "black": "a", "result": "1/2-1/2"},
             {"pairing": 2, "pair": 1, "white": "c", "black": "d", "result": "0-1"},
             {"pairing": 7, "pair": 1, "white": "x", "black": "y", "result": "1-0"}]
    assert pair_points(pairs, games) == {(1, 1): (3, 1)}


def test_a_swiss_round_waits_for_its_last_game():
    """§Rounds and resume: the next round is paired only once every pair of
    the last one is complete."""
    made = config("swiss", list("abcd"), rounds=2)
    planner = made.round_planner()
    first = planner.next_pairs([], [])
    assert [p.round for p in first] == [1, 1]
    games = [record(g, "1-0") | {"pairing": g.pairing, "pair": g.pair}
             for pair in first for g in pair.games(made.opening_source())]
    assert planner.next_pairs(first, games[:3]) == []
    second = planner.next_pairs(first, games)
    assert [(p.round, p.pairing, p.seq, p.opening) for p in second] == [(2, 3, 4, 1), (2, 4, 6, 1)]
    assert not planner.finished(first + second, games)
    assert planner.next_pairs(first + second, games) == []


def test_a_pairs_games_have_stable_keys():
    """§Rounds and resume: a stored pair's games are the same whenever they
    are made: keys, seq, colours, the opening."""
    made = config("knockout", list("ab"), pairs=2, random_plies=3, seed=1)
    pair = RoundPair(1, 1, 2, "a", "b", seq=2, opening=1)
    games = pair.games(made.opening_source())
    assert [(g.key, g.seq, g.index, g.pair, g.white, g.black) for g in games] == [
        ("r1-p1-g3", 2, 3, 2, "a", "b"), ("r1-p1-g4", 3, 4, 2, "b", "a")]
    assert games[0].opening == games[1].opening == made.opening_source()(1)
    assert pair.games(config("knockout", list("ab"), pairs=2, random_plies=3, seed=1).opening_source()) == games
    assert RoundPair(1, 2, 1, "a", None).games(made.opening_source()) == ()


def test_the_standings_json_of_each_format():
    """§Swiss, §Knockout: the Swiss lines or the bracket, as JSON values."""
    swiss = config("swiss", list("abc"), rounds=1)
    first = swiss.round_planner().next_pairs([], [])
    data = swiss.round_planner().to_json(first, [])
    assert [line["name"] for line in data["swiss"]] == ["c", "a", "b"]  # c's bye: 2 points
    assert data["swiss"][0] == {"name": "c", "score": 2.0, "games": 0, "byes": 1, "buchholz": 2.0,
                                "buchholz_cut1": 0.0, "sonneborn_berger": 0.0}
    knockout = config("knockout", list("abc"))
    data = knockout.round_planner().to_json([], [])
    assert list(data) == ["bracket"] and data["bracket"]["champion"] is None

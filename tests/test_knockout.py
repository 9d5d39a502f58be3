"""Knockout tournaments (specs/tournament.md §Knockout, §Rounds and resume):
the bracket and the tie-break rule in-process, and whole runs at the store
level (real SQLite files, the real planner; results chosen by the test)."""

from __future__ import annotations

import json

import pytest
from round_runs import by_strength, config, contents, run, stored_pairs

from arbiter.config import ConfigError, config_from_settings
from arbiter.engine import EngineConfig
from arbiter.knockout import BETTER_SEED, BYE, SCORE, TIEBREAK, Knockout, bracket_order
from arbiter.schedule import RoundPair
from arbiter.store import DuplicatePairingError, Store


@pytest.mark.parametrize("size", [2, 4, 8, 16, 32])
def test_bracket_order_keeps_the_top_seeds_apart(size):
    """§Knockout: round 1 pairs seed s with seed size+1-s; seeds 1 and 2 are
    in opposite halves, 1-4 in different quarters."""
    order = bracket_order(size)
    assert sorted(order) == list(range(1, size + 1))
    assert all(order[i] + order[i + 1] == size + 1 for i in range(0, size, 2))
    if size >= 4:
        assert (1 in order[:size // 2]) and (2 in order[size // 2:])
        quarters = [set(order[i:i + size // 4]) for i in range(0, size, size // 4)]
        assert all(len(q & {1, 2, 3, 4}) == 1 for q in quarters)
    assert bracket_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]


@pytest.mark.parametrize("count, byes", [(2, []), (3, ["s1"]), (5, ["s1", "s2", "s3"]),
                                         (6, ["s1", "s2"]), (8, [])])
def test_the_top_seeds_get_the_byes(count, byes):
    """§Knockout: the bracket is the next power of two; its byes go to the top seeds."""
    ko = Knockout([f"s{i}" for i in range(1, count + 1)], pairs=1, tiebreak_pairs=0)
    bracket = ko.bracket([], {})
    got = [m.first for m in bracket.rounds[0] if m.is_bye]
    assert sorted(got) == byes
    assert all(m.decided_by == BYE and m.winner == m.first for m in bracket.rounds[0] if m.is_bye)
    numbers = [m.number for r in bracket.rounds for m in r]
    assert numbers == list(range(1, ko.size))  # the final is size - 1


def test_a_later_match_starts_once_both_of_its_engines_are_known():
    """§Knockout: five engines: seeds 2 and 3 both have byes, so their
    semi-final is scheduled with the first round, not after it."""
    ko = Knockout(list("abcde"), pairs=2, tiebreak_pairs=1)
    new = ko.new_pairs(ko.bracket([], {}))
    assert new == [(1, 2, 1, "d", "e"), (1, 2, 2, "d", "e"), (2, 6, 1, "b", "c"), (2, 6, 2, "b", "c")]


def _decide(ko: Knockout, stored: list, points: dict, match: int, *results: tuple[int, int]):
    """Complete ``match``'s scheduled pairs with ``results`` (half points of
    the pair's first and second), then add what the planner asks for."""
    pending = [row for row in stored if row[1] == match and (match, row[2]) not in points]
    for row, result in zip(pending, results, strict=True):
        points[match, row[2]] = result
    new = ko.new_pairs(ko.bracket(stored, points))
    stored.extend(new)
    return new


def test_a_drawn_match_gets_tiebreak_pairs_up_to_the_cap_then_the_better_seed():
    """§Knockout, the tie-break rule: two engines, one pair a match, two
    tie-break pairs: level after the pair, after the first tie-break pair
    and after the second: the better seed (a) goes on, no fourth pair."""
    ko = Knockout(["a", "b"], pairs=1, tiebreak_pairs=2)
    stored = ko.new_pairs(ko.bracket([], {}))
    assert stored == [(1, 1, 1, "a", "b")]
    points: dict = {}
    assert _decide(ko, stored, points, 1, (2, 2)) == [(1, 1, 2, "a", "b")]
    assert _decide(ko, stored, points, 1, (2, 2)) == [(1, 1, 3, "a", "b")]
    assert _decide(ko, stored, points, 1, (2, 2)) == []
    final = ko.bracket(stored, points).final
    assert (final.winner, final.decided_by, final.pairs, final.points) == ("a", BETTER_SEED, 3, (6, 6))


def test_a_tiebreak_pair_decides_a_level_match():
    """§Knockout: level after the match's pairs, the first tie-break pair
    won by the lower seed decides it (``tiebreak pairs``)."""
    ko = Knockout(["a", "b"], pairs=2, tiebreak_pairs=3)
    stored = ko.new_pairs(ko.bracket([], {}))
    points: dict = {}
    assert _decide(ko, stored, points, 1, (4, 0), (0, 4)) == [(1, 1, 3, "a", "b")]
    assert _decide(ko, stored, points, 1, (1, 3)) == []
    final = ko.bracket(stored, points).final
    assert (final.winner, final.decided_by) == ("b", TIEBREAK)


def test_no_tiebreak_pairs_sends_the_better_seed_on_at_once():
    ko = Knockout(["a", "b"], pairs=1, tiebreak_pairs=0)
    stored = ko.new_pairs(ko.bracket([], {}))
    assert _decide(ko, stored, {}, 1, (2, 2)) == []
    assert ko.bracket(stored, {(1, 1): (2, 2)}).final.decided_by == BETTER_SEED


def test_a_match_waits_for_both_games_of_a_pair():
    ko = Knockout(["a", "b"], pairs=1, tiebreak_pairs=1)
    stored = ko.new_pairs(ko.bracket([], {}))
    bracket = ko.bracket(stored, {})  # a pair with one game stored has no points yet
    assert bracket.final.status == "playing" and ko.new_pairs(bracket) == []


def test_the_bracket_as_json_and_text():
    """§Knockout: the bracket in the standings' JSON and as text."""
    ko = Knockout(list("abc"), pairs=1, tiebreak_pairs=1)
    stored = ko.new_pairs(ko.bracket([], {}))
    points = {(2, 1): (3, 1)}
    stored += ko.new_pairs(ko.bracket(stored, points))  # the final: a against b (won 1.5-0.5)
    data = json.loads(json.dumps(ko.bracket(stored, points).to_dict()))
    assert data["champion"] is None and [r["name"] for r in data["rounds"]] == ["Semi-finals", "Final"]
    semi = data["rounds"][0]["matches"]
    assert semi[0] == {"round": 1, "match": 1, "first": "a", "second": None, "first_seed": 1,
                       "second_seed": None, "status": "bye", "pairs": 0, "complete_pairs": 0,
                       "points": [0, 0], "winner": "a", "decided_by": "bye"}
    assert (semi[1]["first"], semi[1]["second"], semi[1]["points"], semi[1]["winner"],
            semi[1]["decided_by"]) == ("b", "c", [1.5, 0.5], "b", SCORE)
    assert data["rounds"][1]["matches"][0]["status"] == "playing"
    text = ko.bracket(stored, points).render()
    assert text.splitlines() == [
        "Knockout of 3 engines: 1 game pair(s) a match, up to 1 more while level, then the better seed",
        "Semi-finals",
        "  M1   #1 a    bye",
        "  M2   #2 b     1.5-0.5  #3 c    b wins (score)",
        "Final",
        "  M3   #1 a       0-0    #2 b    playing"]
    points[3, 1] = (0, 4)
    assert ko.bracket(stored, points).render().splitlines()[-2:] == [
        "  M3   #1 a       0-2    #2 b    b wins (score)", "Champion: b"]


def test_bad_knockouts():
    with pytest.raises(ValueError, match="at least two"):
        Knockout(["a"], 1, 0)
    with pytest.raises(ValueError, match="unique"):
        Knockout(["a", "a"], 1, 0)
    with pytest.raises(ValueError, match="tiebreak pairs 0 to 100"):
        Knockout(["a", "b"], 1, 101)


# -- whole runs at the store level ---------------------------------------------


def test_a_knockout_run_crowns_one_champion(tmp_path):
    """§Knockout: six engines (byes for seeds 1 and 2), two pairs a match;
    every engine but the champion is knocked out once, a match's pairs are
    numbered 1.. under its match number, and the openings of a round are the
    same pair by pair in every match."""
    made = config("knockout", list("abcdef"), pairs=2, tiebreak_pairs=1, random_plies=2)
    tid = run(tmp_path / "k.db", made, by_strength(list("abcdef")))
    with Store(tmp_path / "k.db", readonly=True) as store:
        pairs = stored_pairs(store, tid)
        games = store.games(tid, with_record=False)
    bracket = made.round_planner().bracket(pairs, games)
    assert bracket.finished and made.round_planner().finished(pairs, games)
    played = [m for r in bracket.rounds for m in r if not m.is_bye]
    assert len(played) == 5
    losers = sorted(m.second if m.winner == m.first else m.first for m in played)
    assert losers == sorted(set("abcdef") - {bracket.champion})
    assert {p.pairing for p in pairs} == {2, 4, 5, 6, 7}  # matches 1 (1-8) and 3 (2-7) are byes
    openings = {}
    for game in games:
        openings.setdefault((game["round"], game["pair"]), set()).add(game["opening"])
    assert all(len(sources) == 1 for sources in openings.values())
    assert len({next(iter(s)) for s in openings.values()}) == len(openings)


def test_a_drawn_match_in_a_run(tmp_path):
    """§Knockout: a and b always draw: their match gets both tie-break pairs,
    then a (the better seed) goes on; the games' keys go on from the
    match's own (r1-p1-g3 .. g6)."""
    made = config("knockout", ["a", "b"], pairs=1, tiebreak_pairs=2)
    tid = run(tmp_path / "d.db", made, by_strength(["a", "b"], draws=frozenset({frozenset("ab")})))
    with Store(tmp_path / "d.db", readonly=True) as store:
        pairs = stored_pairs(store, tid)
        keys = [g["key"] for g in store.games(tid, with_record=False)]
    assert [(p.pairing, p.pair) for p in pairs] == [(1, 1), (1, 2), (1, 3)]
    assert keys == [f"r1-p1-g{i}" for i in range(1, 7)]
    bracket = made.round_planner().bracket(pairs, store_games(tmp_path / "d.db", tid))
    assert (bracket.champion, bracket.final.decided_by) == ("a", BETTER_SEED)


def store_games(path, tid):
    with Store(path, readonly=True) as store:
        return store.games(tid, with_record=False)


def test_a_knockout_resumed_in_the_middle_of_a_round_is_the_same_run(tmp_path):
    """§Rounds and resume: stopped after three games (a match half played),
    resumed: no match is paired again, and the result is the run never
    stopped, pairs, keys and seq alike."""
    made = config("knockout", list("abcdefg"), pairs=1, tiebreak_pairs=1)
    results = by_strength(list("gfedcba"), draws=frozenset({frozenset("fc")}))
    whole = run(tmp_path / "whole.db", made, results)
    path = tmp_path / "stopped.db"
    tid = run(path, made, results, stop_after=3)
    with Store(path) as store:
        before = stored_pairs(store, tid)
        with pytest.raises(DuplicatePairingError):
            store.add_pairings(tid, [before[0].to_dict()])
        assert stored_pairs(store, tid) == before
    run(path, made, results, tid=tid)
    assert contents(path, tid) == contents(tmp_path / "whole.db", whole)


def test_total_games_grows_with_tiebreak_pairs():
    made = config("knockout", list("abcd"), pairs=2, tiebreak_pairs=1)
    planner = made.round_planner()
    assert planner.total_games() == 3 * 2 * 2
    extra = RoundPair(1, 1, 3, "a", "d", seq=8, opening=2)
    first = planner.next_pairs([], [])
    assert planner.total_games([*first, extra]) == 3 * 2 * 2 + 2


# -- configuration ---------------------------------------------------------------


ENGINES = [EngineConfig(cmd="x", name=name) for name in "abcde"]


def test_knockout_settings_and_identity():
    """§Knockout: pairs, tie-break pairs and seeds define the tournament."""
    made = config_from_settings({"game": "troll", "format": "knockout", "seeds": "c",
                                 "pairs": 3, "tiebreak_pairs": 0}, ENGINES)
    assert (made.pairs, made.tiebreak_pairs, made.seeded_names) == (3, 0, list("cabde"))
    assert made.defining()["seeds"] == ["c"] and made.defining()["pairs"] == 3
    other = config_from_settings({"game": "troll", "format": "knockout", "seeds": "c",
                                  "pairs": 3, "tiebreak_pairs": 1}, ENGINES)
    assert made.identity() != other.identity()
    assert made.round_planner().knockout is not None
    assert made.round_planner().knockout.seeds == list("cabde")


@pytest.mark.parametrize("settings, message", [
    ({"rounds": 2}, "plays the 3 round\\(s\\) its bracket needs; drop --rounds"),
    ({"games": 6}, "give --pairs K; --games must be 2, not 6"),
    ({"pairs": 0}, "pairs must be at least 1, not 0"),
    ({"tiebreak_pairs": 101}, "tiebreak_pairs must be at most 100, not 101"),
    ({"pairs": 200000}, "may make 1600016 games, over the limit of 1000000"),
    ({"format": "gauntlet", "pairs": 2}, "--pairs is for --format knockout, not gauntlet"),
])
def test_bad_knockout_settings(settings, message):
    with pytest.raises(ConfigError, match=message):
        config_from_settings({"game": "troll", "format": "knockout", **settings}, ENGINES)


def test_sprt_is_refused_for_a_knockout():
    two = ENGINES[:2]
    with pytest.raises(ConfigError, match="sprt tests a two-engine match: not a knockout tournament"):
        config_from_settings({"game": "troll", "format": "knockout", "sprt": "elo0=0 elo1=5"}, two)


def test_the_toml_keys(tmp_path):
    """§Config file: seeds as a list, pairs and tiebreak_pairs as numbers."""
    from arbiter.config import from_file_and_flags

    path = tmp_path / "k.toml"
    path.write_text('game = "troll"\nformat = "knockout"\nseeds = ["b"]\npairs = 2\n'
                    'tiebreak_pairs = 0\n[engines.a]\ncmd = "x"\n[engines.b]\ncmd = "y"\n')
    made, _ = from_file_and_flags(str(path), None, None, {})
    assert (made.seeded_names, made.pairs, made.tiebreak_pairs) == (["b", "a"], 2, 0)
    path.write_text('game = "troll"\nformat = "knockout"\nseeds = "b"\n[engines.a]\ncmd = "x"\n'
                    '[engines.b]\ncmd = "y"\n')
    with pytest.raises(ConfigError, match="key 'seeds' must be a list of engine names"):
        from_file_and_flags(str(path), None, None, {})

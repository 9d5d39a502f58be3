"""Swiss tournaments (specs/tournament.md §Swiss, §Rounds and resume): the
pairing rules and tie-breaks in-process, and whole runs at the store level
(real SQLite files, the real planner; results chosen by the test)."""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from round_runs import by_strength, config, contents, run, stored_pairs

from arbiter.config import ConfigError, config_from_settings
from arbiter.engine import EngineConfig
from arbiter.store import DuplicatePairingError, Store
from arbiter.swiss import (
    BYE_HALF_POINTS,
    MAX_SWISS_ENGINES,
    Meeting,
    pair_round,
    scores,
    swiss_table,
)


def play(engines: list[str], rounds: int, seed: int) -> list[Meeting]:
    """``rounds`` rounds paired by pair_round, each pairing's half points
    drawn at random (0 to 4 for the first)."""
    rng = random.Random(seed)
    history: list[Meeting] = []
    for number in range(1, rounds + 1):
        paired = pair_round(engines, history)
        for first, second in paired.boards:
            points = rng.randint(0, 4)
            history.append(Meeting(number, first, second, points, 4 - points))
        if paired.bye is not None:
            history.append(Meeting(number, paired.bye, None, BYE_HALF_POINTS))
    return history


def test_the_first_round_pairs_the_top_half_against_the_bottom_half():
    """§Swiss: with equal scores, the Dutch rule (1-3, 2-4 of four); an odd
    count gives the last seed the bye."""
    assert pair_round(list("abcd"), []).boards == (("a", "c"), ("b", "d"))
    paired = pair_round(list("abcde"), [])
    assert paired.boards == (("a", "c"), ("b", "d")) and paired.bye == "e"
    assert pair_round(list("abcdef"), []).boards == (("a", "d"), ("b", "e"), ("c", "f"))


def test_equal_scores_meet():
    """§Swiss: after a round, winners meet winners and losers meet losers."""
    engines = list("abcdefgh")
    first = pair_round(engines, [])
    history = [Meeting(1, a, b, 4, 0) for a, b in first.boards]  # every first wins 2-0
    second = pair_round(engines, history)
    score = scores(engines, history)
    assert all(score[a] == score[b] for a, b in second.boards)
    assert {score[a] for a, _ in second.boards} == {0, 4}


@pytest.mark.parametrize("count", [3, 5, 7, 9])
@pytest.mark.parametrize("seed", range(4))
def test_odd_counts_no_repeat_while_possible_and_one_bye_each(count, seed):
    """§Swiss: over ``count`` rounds of ``count`` engines (odd), no two
    engines meet twice and every engine gets exactly one bye: both are
    possible (a round-robin with a bye per round), whatever the results."""
    engines = [f"e{i}" for i in range(count)]
    history = play(engines, count, seed)
    met = Counter(frozenset((m.first, m.second)) for m in history if m.second is not None)
    assert len(met) == count * (count - 1) // 2 and set(met.values()) == {1}
    byes = Counter(m.first for m in history if m.second is None)
    assert sorted(byes) == sorted(engines) and set(byes.values()) == {1}


def test_no_repeat_where_pairing_the_top_first_would_need_one():
    """§Swiss: a or b first would take each other (equal scores, met
    already); the matching pairs both with engines they have not met."""
    engines = list("abcd")
    history = [Meeting(1, "a", "b", 2, 2), Meeting(1, "c", "d", 2, 2),
               Meeting(2, "a", "c", 4, 0), Meeting(2, "b", "d", 4, 0)]
    assert scores(engines, history) == {"a": 6, "b": 6, "c": 2, "d": 2}
    assert pair_round(engines, history).boards == (("a", "d"), ("b", "c"))


def test_a_repeat_when_none_is_avoidable_is_the_least_repeated():
    """§Swiss: four engines, a fourth round: every pairing has been played
    once; the round repeats the fewest meetings (none met twice)."""
    engines = list("abcd")
    history = play(engines, 4, seed=1)
    met = Counter(frozenset((m.first, m.second)) for m in history)
    assert len(met) == 6 and sum(met.values()) == 8 and max(met.values()) == 2
    fifth = pair_round(engines, history)
    assert all(met[frozenset(board)] == 1 for board in fifth.boards)


def test_a_second_bye_only_when_every_engine_had_one():
    """§Swiss: three engines over four rounds: one bye each in the first
    three, then a second one."""
    history = play(list("abc"), 4, seed=3)
    byes = [m.first for m in history if m.second is None]
    assert sorted(byes[:3]) == ["a", "b", "c"] and len(byes) == 4


def test_the_bye_goes_to_the_lowest_ranked_without_one():
    """§Swiss: the lowest score takes the bye; among equal scores the lower seed."""
    engines = list("abcde")
    history = [Meeting(1, "a", "c", 0, 4), Meeting(1, "b", "d", 0, 4), Meeting(1, "e", None, 4)]
    # c, d, e have 4; a, b 0: e had the bye, so b (the lower seed of a, b) gets it
    assert pair_round(engines, history).bye == "b"


def test_pairing_is_deterministic():
    engines = [f"e{i}" for i in range(11)]
    assert play(engines, 6, seed=9) == play(engines, 6, seed=9)


def test_bad_inputs():
    with pytest.raises(ValueError, match="at least two"):
        pair_round(["a"], [])
    with pytest.raises(ValueError, match="unique"):
        pair_round(["a", "a"], [])
    with pytest.raises(ValueError, match=f"at most {MAX_SWISS_ENGINES}"):
        pair_round([str(i) for i in range(MAX_SWISS_ENGINES + 1)], [])


def test_tie_breaks_by_hand():
    """§Swiss tie-breaks.  Round 1: a beats b 2-0, c draws d 1-1, e bye.
    Round 2: a draws c 1-1, e beats d 1.5-0.5, b bye.  Final scores: a 3,
    e 3.5, c 2, b 2, d 1.5.  a: Buchholz b + c = 4, cut-1 2, SB
    2*2 + 1*2 = 6.  e: bye (its own 3.5) + d 1.5 = 5, cut-1 3.5, SB
    1.5*1.5 = 2.25 (the bye adds nothing)."""
    engines = list("abcde")
    history = [Meeting(1, "a", "b", 4, 0), Meeting(1, "c", "d", 2, 2), Meeting(1, "e", None, 4),
               Meeting(2, "a", "c", 2, 2), Meeting(2, "e", "d", 3, 1), Meeting(2, "b", None, 4)]
    table = {line.name: line for line in swiss_table(engines, history)}
    assert {n: line.score for n, line in table.items()} == {"a": 3, "b": 2, "c": 2, "d": 1.5, "e": 3.5}
    a, e = table["a"], table["e"]
    assert (a.buchholz, a.buchholz_cut1, a.sonneborn_berger, a.byes) == (4, 2, 6, 0)
    assert (e.buchholz, e.buchholz_cut1, e.sonneborn_berger, e.byes) == (5, 3.5, 2.25, 1)
    assert [line.name for line in swiss_table(engines, history)] == ["e", "a", "b", "c", "d"]


def test_equal_scores_are_ordered_by_buchholz_then_sonneborn_berger_then_seed():
    """§Swiss.  First: a 2-0 b, c 2-0 d, then a 2-0 c, b 1-1 d: b and d have
    1 point, b's opponents 4 + 1 (Buchholz 5), d's 2 + 1 (3): b first even
    seeded after d.  Second: a 2-0 b, c 1-1 d, then a 1-1 c, b 2-0 d: b and
    c have 2 points and Buchholz 4 (as a and d), c's Sonneborn-Berger
    1*1 + 1*3 = 4, b's 0*3 + 2*1 = 2: c first though seeded after b."""
    first = [Meeting(1, "a", "b", 4, 0), Meeting(1, "c", "d", 4, 0),
             Meeting(2, "a", "c", 4, 0), Meeting(2, "b", "d", 2, 2)]
    lines = swiss_table(["a", "d", "c", "b"], first)
    assert [(line.name, line.score, line.buchholz) for line in lines] == [
        ("a", 4, 3), ("c", 2, 5), ("b", 1, 5), ("d", 1, 3)]
    second = [Meeting(1, "a", "b", 4, 0), Meeting(1, "c", "d", 2, 2),
              Meeting(2, "a", "c", 2, 2), Meeting(2, "b", "d", 4, 0)]
    lines = swiss_table(list("abcd"), second)
    assert [(line.name, line.score, line.buchholz, line.sonneborn_berger) for line in lines] == [
        ("a", 3, 4, 6), ("c", 2, 4, 4), ("b", 2, 4, 2), ("d", 1, 4, 2)]


# -- whole runs at the store level ---------------------------------------------


def test_a_swiss_run_plays_its_rounds_with_the_bye_stored(tmp_path):
    """§Swiss, §Rounds and resume: five engines, three rounds: each round's
    pairings are stored (the bye as a row without a second engine), each
    pairing one game pair of one opening, colours swapped."""
    made = config("swiss", list("abcde"), rounds=3, random_plies=2, seed=5)
    tid = run(tmp_path / "s.db", made, by_strength(list("abcde")))
    with Store(tmp_path / "s.db", readonly=True) as store:
        pairs = stored_pairs(store, tid)
        games = store.games(tid, with_record=False)
    assert [p.round for p in pairs] == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert [p.pairing for p in pairs] == list(range(1, 10))  # three numbers a round, the bye's last
    byes = [p for p in pairs if p.bye]
    assert [p.pairing for p in byes] == [3, 6, 9] and len({p.first for p in byes}) == 3
    assert len(games) == 3 * 2 * 2 == made.round_planner().total_games()
    assert [g["seq"] for g in games] == list(range(12))
    by_pair = {}
    for g in games:
        by_pair.setdefault(g["pairing"], []).append(g)
    for played in by_pair.values():
        first, second = played
        assert (first["white"], first["black"]) == (second["black"], second["white"])
        assert first["opening"] == second["opening"] == f"random:{first['round']}"
    met = Counter(frozenset((p.first, p.second)) for p in pairs if not p.bye)
    assert set(met.values()) == {1}


def test_a_swiss_run_resumed_in_the_middle_of_a_round_is_the_same_run(tmp_path):
    """§Rounds and resume: a run stopped after one game of round 2 (its
    pairings stored, most of its games not) and resumed never pairs round 2
    again and ends with exactly the pairings and games of a run never
    stopped."""
    made = config("swiss", list("abcdefg"), rounds=4)
    results = by_strength(list("gfedcba"))
    whole = run(tmp_path / "whole.db", made, results)
    path = tmp_path / "stopped.db"
    tid = run(path, made, results, stop_after=7)  # round 1 is 6 games: one of round 2
    with Store(path) as store:
        before = stored_pairs(store, tid)
        assert max(p.round for p in before) == 2
        games = store.games(tid, with_record=False)
        assert made.round_planner().next_pairs(before, games) == []  # round 2 is not over
        with pytest.raises(DuplicatePairingError):  # a second pairing of round 2 is refused
            store.add_pairings(tid, [p.to_dict() for p in before if p.round == 2])
        assert stored_pairs(store, tid) == before
    run(path, made, results, tid=tid)
    assert contents(path, tid) == contents(tmp_path / "whole.db", whole)


def test_more_rounds_than_opponents_repeat_only_when_needed(tmp_path):
    """§Swiss: four engines, five rounds: the first three are a round-robin."""
    made = config("swiss", list("abcd"), rounds=5)
    tid = run(tmp_path / "r.db", made, by_strength(list("abcd")))
    with Store(tmp_path / "r.db", readonly=True) as store:
        pairs = stored_pairs(store, tid)
    early = [frozenset((p.first, p.second)) for p in pairs if p.round <= 3]
    assert len(set(early)) == 6
    everyone = Counter(frozenset((p.first, p.second)) for p in pairs)
    assert max(everyone.values()) == 2


def test_the_swiss_table_of_a_run_counts_byes_and_games(tmp_path):
    made = config("swiss", list("abc"), rounds=3)
    tid = run(tmp_path / "t.db", made, by_strength(list("abc")))
    with Store(tmp_path / "t.db", readonly=True) as store:
        lines = made.round_planner().swiss_table(stored_pairs(store, tid),
                                                 store.games(tid, with_record=False))
    assert {line.name: (line.games, line.byes) for line in lines} == {n: (4, 1) for n in "abc"}
    assert sum(line.score for line in lines) == 3 * 2 + 3 * 2  # three pairs played, three byes


# -- configuration ---------------------------------------------------------------


ENGINES = [EngineConfig(cmd="x", name=name) for name in "abcde"]


@pytest.mark.parametrize("settings, rounds", [({}, 3), ({"rounds": 7}, 7)])
def test_swiss_rounds_default_to_log2(settings, rounds):
    """§Swiss: without --rounds, ceil(log2(engines)) rounds."""
    made = config_from_settings({"game": "troll", "format": "swiss", **settings}, ENGINES)
    assert made.rounds == rounds


@pytest.mark.parametrize("settings, message", [
    ({"games": 4}, "one game pair \\(2 games\\) per round; --games must be 2, not 4"),
    ({"pairs": 2}, "--pairs is for --format knockout, not swiss"),
    ({"seeds": "a,x"}, "--seeds names 'x', which is not an engine"),
    ({"seeds": "a,b,a"}, "--seeds names 'a' twice"),
    ({"rounds": 0}, "rounds must be at least 1"),
    ({"format": "round-robin", "seeds": "a"}, "--seeds is for --format knockout or swiss"),
])
def test_bad_swiss_settings(settings, message):
    with pytest.raises(ConfigError, match=message):
        config_from_settings({"game": "troll", "format": "swiss", **settings}, ENGINES)


def test_seeds_order_the_pairing_and_define_the_tournament():
    """§Seeds: --seeds puts the named engines first; a Swiss tournament's
    identity holds them; a round-robin's identity has no new key."""
    made = config_from_settings({"game": "troll", "format": "swiss", "seeds": "e, d"}, ENGINES)
    assert made.seeded_names == ["e", "d", "a", "b", "c"]
    assert made.round_planner().next_pairs([], [])[0].first == "e"
    plain = config_from_settings({"game": "troll", "format": "swiss"}, ENGINES)
    assert made.identity() != plain.identity()
    robin = config_from_settings({"game": "troll"}, ENGINES)
    assert set(robin.defining()) == {"name", "game", "engines", "format", "games", "rounds", "openings",
                                     "order", "seed", "random_plies", "tc", "timemargin_ms",
                                     "maxplies", "stall_ms", "sprt"}


def test_every_pairing_pair_is_a_game_pair_of_two_colours():
    """§Swiss: the first round's pairs as scheduled games: keys, seq, colours."""
    made = config("swiss", list("abcd"))
    pairs = made.round_planner().next_pairs([], [])
    games = [g for pair in pairs for g in pair.games(made.opening_source())]
    assert [(g.key, g.seq, g.white, g.black) for g in games] == [
        ("r1-p1-g1", 0, "a", "c"), ("r1-p1-g2", 1, "c", "a"),
        ("r1-p2-g1", 2, "b", "d"), ("r1-p2-g2", 3, "d", "b")]
    assert list(itertools.chain(p.games(made.opening_source()) for p in pairs if p.bye)) == []


def test_networkx_is_imported_only_to_pair_a_round():
    """§Swiss: configuring a Swiss tournament costs no networkx import; pairing does."""
    code = ("import sys\n"
            "from arbiter.config import config_from_settings\n"
            "from arbiter.engine import EngineConfig\n"
            "made = config_from_settings({'game': 'troll', 'format': 'swiss'},"
            " [EngineConfig(cmd='x', name=n) for n in 'abc'])\n"
            "assert 'networkx' not in sys.modules\n"
            "made.round_planner().next_pairs([], [])\n"
            "assert 'networkx' in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert done.returncode == 0, done.stderr

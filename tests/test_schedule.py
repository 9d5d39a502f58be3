"""Tournament schedules (specs/tournament.md §Schedule, §Openings): pure code."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from typing import Any

import pytest

from arbiter.games import get_game
from arbiter.schedule import (
    Opening,
    OpeningError,
    ScheduleError,
    build_schedule,
    check_size,
    make_pairings,
    parse_openings,
    random_opening,
    remaining,
    schedule_size,
)

TROLL = get_game("troll")
ENGINES = ["a", "b", "c", "d"]


def test_round_robin_pairs_everyone_once():
    pairings = make_pairings(ENGINES, "round-robin")
    assert [(p.first, p.second) for p in pairings] == [
        ("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]
    assert [p.number for p in pairings] == [1, 2, 3, 4, 5, 6]


def test_gauntlet_pairs_the_first_with_each_other():
    pairings = make_pairings(ENGINES, "gauntlet")
    assert [(p.first, p.second) for p in pairings] == [("a", "b"), ("a", "c"), ("a", "d")]


@pytest.mark.parametrize("format, pairs", [("round-robin", 6), ("gauntlet", 3)])
@pytest.mark.parametrize("games, rounds", [(1, 1), (2, 1), (3, 2), (4, 3)])
def test_size_keys_and_order(format, pairs, games, rounds):
    schedule = build_schedule(ENGINES, format=format, games=games, rounds=rounds)
    assert len(schedule) == pairs * games * rounds
    keys = [g.key for g in schedule]
    assert len(set(keys)) == len(keys)
    assert [g.seq for g in schedule] == list(range(len(schedule)))
    assert [g.round for g in schedule] == sorted(g.round for g in schedule)
    for g in schedule:
        assert g.key == f"r{g.round}-p{g.pairing}-g{g.index}"
        assert 1 <= g.index <= games and 1 <= g.round <= rounds


def test_schedule_is_stable():
    """Resume rebuilds the schedule: the same arguments give the same games."""
    args: dict[str, Any] = dict(format="round-robin", games=2, rounds=3, random_plies=4, game=TROLL,
                                seed=7)
    first = build_schedule(ENGINES, **args)
    again = build_schedule(ENGINES, **args)
    assert first == again


@pytest.mark.parametrize("games, rounds", [(2, 1), (2, 3), (4, 1), (1, 2), (3, 2)])
def test_colours_alternate_and_balance(games, rounds):
    """§Colours: each game pair swaps colours; with an even number of games per
    pairing each engine has White exactly half of the time."""
    schedule = build_schedule(ENGINES, games=games, rounds=rounds)
    by_pair = defaultdict(list)
    for g in schedule:
        by_pair[(g.pairing, g.pair)].append(g)
    for (_, _), pair in by_pair.items():
        assert len(pair) in (1, 2)
        if len(pair) == 2:
            assert (pair[0].white, pair[0].black) == (pair[1].black, pair[1].white)
    total = games * rounds
    for pairing in make_pairings(ENGINES, "round-robin"):
        whites = Counter(g.white for g in schedule if g.pairing == pairing.number)
        assert whites[pairing.first] == (total + 1) // 2
        assert whites[pairing.second] == total // 2


def test_both_games_of_a_pair_share_the_opening_and_all_pairings_meet_it():
    openings = [Opening(moves=(m,), source=f"book:{i}") for i, m in enumerate(["a1", "b2", "c3"], 1)]
    schedule = build_schedule(ENGINES, games=2, rounds=3, openings=openings)
    by_pair = defaultdict(set)
    for g in schedule:
        by_pair[g.pair].add(g.opening)
    assert all(len(s) == 1 for s in by_pair.values())
    assert [by_pair[p].pop().source for p in (1, 2, 3)] == ["book:1", "book:2", "book:3"]


def test_sequential_openings_cycle():
    openings = [Opening(moves=(m,), source=m) for m in ["x", "y"]]
    schedule = build_schedule(["a", "b"], games=2, rounds=5, openings=openings)
    assert [g.opening.source for g in schedule] == ["x", "x", "y", "y"] * 2 + ["x", "x"]


def test_random_order_is_seeded_and_uses_each_opening_once_per_cycle():
    openings = [Opening(moves=(str(i),), source=str(i)) for i in range(10)]

    def order(seed):
        schedule = build_schedule(["a", "b"], games=2, rounds=20, openings=openings,
                                  order="random", seed=seed)
        return [g.opening.source for g in schedule if g.index == 1]  # one per game pair

    first = order(1)
    assert first == order(1)
    assert first != order(2)
    assert sorted(first[:10]) == sorted(first[10:]) == [str(i) for i in range(10)]
    assert first[:10] != [str(i) for i in range(10)]


def test_random_plies_openings_are_legal_and_seeded():
    """§Openings: --random-plies N draws N legal plies through the referee."""
    schedule = build_schedule(["a", "b"], games=2, rounds=4, random_plies=6, game=TROLL, seed=3)
    seen = set()
    for g in schedule:
        assert len(g.opening.moves) == 6
        position = TROLL.position(None, g.opening.moves)
        assert not position.is_over()
        seen.add(g.opening.moves)
    assert len(seen) == 4  # one per game pair
    assert random_opening(TROLL, 6, 3, 1) == schedule.games[0].opening
    assert random_opening(TROLL, 6, 4, 1) != schedule.games[0].opening


def test_openings_file_lines():
    """§Openings file: moves, position strings, `<fen> moves ...`, comments."""
    after = TROLL.position(None, ["d5", "e4"]).fen()
    text = f"# a comment\n\nd5 e4\n{after}\n{after} moves c3\n  moves d4  \n"
    openings = parse_openings(TROLL, text, "book.txt")
    assert [(o.fen, o.moves, o.source) for o in openings] == [
        (None, ("d5", "e4"), "book.txt:3"),
        (after, (), "book.txt:4"),
        (after, ("c3",), "book.txt:5"),
        (None, ("d4",), "book.txt:6"),
    ]


def test_openings_file_errors_name_file_and_line():
    with pytest.raises(OpeningError) as info:
        parse_openings(TROLL, "d5 e4\n\nd5 d5\n", "book.txt")
    assert info.value.line == 3
    message = str(info.value)
    assert message.startswith("book.txt:3: ")
    assert "ply 2" in message and "d5" in message
    with pytest.raises(OpeningError, match=r"^book.txt:1: invalid position 'zz'"):
        parse_openings(TROLL, "zz moves d5\n", "book.txt")
    with pytest.raises(ScheduleError, match="book.txt: no openings"):
        parse_openings(TROLL, "# nothing\n\n", "book.txt")


def test_an_opening_that_ends_the_game_is_refused():
    rng = random.Random(5)
    position, moves = TROLL.start(), []
    while not position.is_over():
        move = rng.choice(sorted(position.legal_moves()))
        moves.append(move)
        position = position.play(move)
    with pytest.raises(OpeningError, match="^b:1: the game is already over"):
        parse_openings(TROLL, " ".join(moves), "b")


@pytest.mark.parametrize("kwargs, message", [
    (dict(format="monrad"), "unknown format 'monrad'"),
    (dict(format="swiss"), "paired round by round"),
    (dict(games=0), "--games must be at least 1"),
    (dict(rounds=0), "--rounds must be at least 1"),
    (dict(order="shuffled"), "unknown opening order"),
    (dict(openings=[Opening()], random_plies=2, game=TROLL), "not both"),
    (dict(random_plies=-1), "--random-plies must be >= 0"),
])
def test_bad_schedules(kwargs, message):
    with pytest.raises(ScheduleError, match=message):
        build_schedule(ENGINES, **kwargs)


def test_engine_names():
    with pytest.raises(ScheduleError, match="at least two engines"):
        build_schedule(["a"])
    with pytest.raises(ScheduleError, match="repeated: a"):
        build_schedule(["a", "b", "a"])


def test_remaining_skips_finished_keys_in_order():
    schedule = build_schedule(["a", "b", "c"], games=2)
    done = {schedule.games[0].key, schedule.games[3].key}
    left = remaining(schedule, done)
    assert [g.seq for g in left] == [1, 2, 4, 5]


def test_sizes_of_the_round_formats():
    """§Schedule, §Swiss, §Knockout: a Swiss round has engines // 2 pairings
    (the bye plays none); a knockout engines - 1 matches, counted with the
    most games a match may need."""
    assert schedule_size(7, "swiss", 2, 5) == 3 * 2 * 5
    assert schedule_size(8, "knockout", 2 * (3 + 2), 1) == 7 * 10
    with pytest.raises(ScheduleError, match="make 1000002 games"):
        check_size(3, "swiss", 2, 500_001)
    with pytest.raises(ScheduleError, match="paired round by round"):
        make_pairings(ENGINES, "knockout")

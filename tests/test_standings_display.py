"""What the standings show, in text and JSON (specs/tournament.md §Standings,
§Live display; specs/ratings.md §Edge cases, §Expected length).

Tables are rendered by a rich Console of a given width, as on a terminal of
that many columns, and read back as text: every line fits, no cell is cut to
an ellipsis, and the columns that go at a narrow width are those of the
documented drop order, in that order.
"""

from __future__ import annotations

import io
import json
import math
import re
import sys
from typing import Any

import pytest
from players import FixedRecords
from rich.console import Console

from arbiter.config import TournamentConfig
from arbiter.engine import EngineConfig
from arbiter.progress import LineDisplay, RichDisplay, pairs_table, print_standings, standings_table
from arbiter.rating import SPRT
from arbiter.run.coordinator import Coordinator
from arbiter.standings import Standings, compute_standings
from arbiter.store import Store
from arbiter.tournament import open_tournament

PY = sys.executable
WIDTHS = (80, 100, 120)
NAMES = ["sample_engines.greedy", "sample_engines.random", "sample_engines.mcts"]

#: specs/tournament.md §Live display: the drop orders, first dropped first.
STANDINGS_DROP = [["score"], ["#"], ["W", "D", "L"], ["games"], ["points"]]


def render(thing: Any, width: int) -> str:
    console = _console(width)
    console.print(thing)
    return console.file.getvalue()


class _Recording(Console):
    file: io.StringIO


def _console(width: int) -> _Recording:
    return _Recording(file=io.StringIO(), width=width, color_system=None, legacy_windows=False)


def game(white: str, black: str, result: str, pairing: Any = None, pair: int | None = None) -> dict:
    return {"white": white, "black": black, "result": result, "termination": "rule",
            "pairing": pairing, "pair": pair}


def big_round_robin() -> Standings:
    """Three engines with long names, thousands of games in game pairs: wide cells."""
    rows = []
    results = [["1-0", "1/2-1/2", "0-1", "1-0", "1/2-1/2", "1-0", "1-0"],  # first's view
               ["1/2-1/2", "0-1", "0-1", "1-0", "1/2-1/2"],
               ["1-0", "1/2-1/2", "1/2-1/2"]]
    for p, (a, b) in enumerate([(0, 1), (0, 2), (1, 2)]):
        for i in range(1500):
            result = results[p][i % len(results[p])]
            if i % 2:  # the second game of a pair: colours swapped, result from White's view
                result = {"1-0": "0-1", "0-1": "1-0"}.get(result, result)
            white, black = (NAMES[a], NAMES[b]) if i % 2 == 0 else (NAMES[b], NAMES[a])
            rows.append(game(white, black, result, pairing=p, pair=i // 2))
    return compute_standings(NAMES, rows)


def headers(text: str) -> list[str]:
    """The header words of the first table in ``text`` (the line above its rule)."""
    lines = text.splitlines()
    rule = next(i for i, line in enumerate(lines) if set(line.strip()) == {"─"})
    return re.split(r"\s{2,}", lines[rule - 1].strip())


def assert_fits(text: str, width: int) -> None:
    for line in text.splitlines():
        assert len(line) <= width, line
    assert "…" not in text


def assert_dropped_in_order(shown: list[str], all_headers: list[str], order: list[list[str]]) -> None:
    """The missing headers are a whole prefix of the drop order."""
    missing = [h for h in all_headers if h not in shown]
    for group in order:
        if not missing:
            return
        assert set(group) <= set(missing), (group, missing)
        missing = [h for h in missing if h not in group]
    assert not missing


@pytest.mark.parametrize("width", WIDTHS)
def test_standings_table_fits_the_terminal(width):
    """specs/tournament.md §Live display: the table fits 80, 100 and 120
    columns with whole cells; the columns that go are the drop order's first."""
    standings = big_round_robin()
    text = render(standings_table(standings, width=width), width)
    assert_fits(text, width)
    shown = headers(text)
    assert_dropped_in_order(shown, ["#", "engine", "games", "points", "score", "Elo", "W", "D", "L"],
                            STANDINGS_DROP)
    assert "engine" in shown and "Elo" in shown and "points" in shown
    for line in standings.engines:  # whole names and ratings, W/D/L where shown
        row = next(r for r in text.splitlines() if line.name in r)
        assert f"{line.elo:+.1f} +/- {line.error:.1f}" in row
        if "W" in shown:
            assert re.search(rf"\b{line.wins}\s+{line.draws}\s+{line.losses}\s*$", row), row
    if width >= 100:
        assert shown == ["#", "engine", "games", "points", "score", "Elo", "W", "D", "L"]


PAIR_HEADERS = ["pair", "W-D-L", "Elo", "nElo", "LOS", "pentanomial", "draws", "1st"]


def all_headers(text: str) -> list[str]:
    """The header words of every table in ``text``, in order."""
    lines = text.splitlines()
    return [word for i, line in enumerate(lines) if set(line.strip()) == {"─"}
            for word in re.split(r"\s{2,}", lines[i - 1].strip())]


@pytest.mark.parametrize("width", WIDTHS)
def test_pairs_table_fits_the_terminal_and_shows_every_column(width):
    """specs/tournament.md §Live display (Width): the final pair table fits
    80, 100 and 120 columns and drops nothing: what the first table cannot
    hold is in a second one, its rows numbered as in the first."""
    standings = big_round_robin()
    text = render(pairs_table(standings, width=width), width)
    assert_fits(text, width)
    shown = all_headers(text)
    assert [h for h in shown if h != "#"] == PAIR_HEADERS
    if width < 140:  # the names alone take 47 columns: two tables, numbered
        assert shown.count("#") == 2 and shown[:3] == ["#", "pair", "W-D-L"]
    for number, line in enumerate(standings.pairs, start=1):
        assert f"{number}   {line.first} - {line.second}" in text  # the pair whole, on one line
        penta = line.stats.penta_elo
        assert penta is not None and f"{penta:+.1f} +/-" in text  # the pair's Elo: from its game pairs
    assert "Elo, nElo and LOS from game pairs (pentanomial)" in text
    assert all_headers(render(pairs_table(standings, width=200), 200)) == PAIR_HEADERS


def test_the_match_header_and_the_pair_table_show_one_value_per_figure():
    """specs/tournament.md §Which figure where: the headline of a match and
    its pair line print the same Elo, nElo and LOS (from game pairs here),
    LOS and draws as percentages; JSON has the same, as fractions."""
    results = ["1-0", "1-0", "1-0", "1/2-1/2", "1/2-1/2", "0-1", "1-0", "1-0"] * 4  # new's view
    rows = [game("new", "old", r, 0, i // 2) if i % 2 == 0 else
            game("old", "new", {"1-0": "0-1", "0-1": "1-0"}.get(r, r), 0, i // 2)
            for i, r in enumerate(results)]
    standings = compute_standings(["new", "old"], rows)
    diff, (line,) = standings.difference, standings.pairs
    assert diff is not None
    s = line.stats
    assert (s.nelo, s.los) != (s.penta_nelo, s.penta_los)  # the figures that disagreed
    console = _console(120)
    print_standings(console, standings)
    text = console.file.getvalue()
    nelo, los = f"{s.penta_nelo:+.1f}", f"{100 * s.penta_los:.1f}%"
    assert f"nElo {nelo}, LOS {los}, draws {100 * s.draw_ratio:.1f}%" in text
    pair_row = next(r for r in text.splitlines() if r.strip().startswith("new - old"))
    assert pair_row.split() == ["new", "-", "old", f"{s.wins}-{s.draws}-{s.losses}",
                                f"{s.penta_elo:+.1f}", "+/-", f"{s.penta_elo_error:.1f}", nelo, los,
                                ",".join(map(str, s.pentanomial or ())),
                                f"{100 * s.draw_ratio:.1f}%", f"{100 * line.first_mover_score:.1f}%"]
    data = standings.to_json()
    (pair,) = data["pairs"]
    for key in ("elo", "elo_error", "elo_interval", "nelo", "los"):
        assert pair[key] == data["difference"][key], key
    assert (pair["samples"], pair["nelo"], pair["los"]) == (
        "pentanomial", round(s.penta_nelo, 1), round(s.penta_los, 4))
    assert (pair["tri_nelo"], pair["tri_los"]) == (round(s.nelo, 1), round(s.los, 4))


def test_pair_names_too_long_for_any_column_wrap_instead_of_being_cut():
    """A pair whose names alone fill the terminal wraps at the spaces."""
    long = ["an_engine_with_a_rather_long_name_v1", "an_engine_with_a_rather_long_name_v2"]
    standings = compute_standings(long, [game(long[0], long[1], "1-0"), game(long[1], long[0], "1/2-1/2")])
    text = render(pairs_table(standings, width=80), 80)
    assert_fits(text, 80)
    assert long[0] in text and long[1] in text


def test_two_engine_match_shows_the_difference_first():
    """specs/tournament.md §Standings: a two-engine match leads with the Elo
    difference and its interval (the pair's, pentanomial here), not half of it."""
    rows = [game("new", "old", r, pairing=0, pair=i // 2)
            for i, r in enumerate(["1-0", "0-1", "1-0", "1/2-1/2", "1/2-1/2", "1-0"] * 5)]
    rows = [dict(row, white=row["black"], black=row["white"], result={"1-0": "0-1", "0-1": "1-0"}.get(
        row["result"], row["result"])) if i % 2 else row for i, row in enumerate(rows)]
    standings = compute_standings(["new", "old"], rows)
    pair = standings.pairs[0].stats
    console = _console(80)
    print_standings(console, standings)
    text = console.file.getvalue()
    first = text.splitlines()[0]
    interval, penta_elo, penta_error = pair.penta_elo_interval, pair.penta_elo, pair.penta_elo_error
    assert interval is not None and penta_elo is not None and penta_error is not None
    lo, hi = interval
    assert first == (f"Elo difference new - old: {penta_elo:+.1f} +/- {penta_error:.1f}, "
                     f"95% [{lo:+.1f}, {hi:+.1f}]")
    assert "pentanomial (15 game pairs)" in text.splitlines()[1]
    # The joint ratings (mean 0) are each half the difference: not shown in text.
    half = standings.engines[0].elo
    assert half is not None and f"{half:+.1f}" not in text
    assert "Elo" not in headers(text)
    data = standings.to_json()
    assert data["difference"]["elo"] == round(penta_elo, 1)
    assert data["difference"]["elo_interval"] == [round(lo, 1), round(hi, 1)]
    assert data["difference"]["samples"] == "pentanomial"
    assert compute_standings(NAMES, []).to_json()["difference"] is None  # three engines: none


def test_order_follows_points_then_rating():
    """specs/tournament.md §Standings: points first, the rating breaks ties."""
    rows = ([game("x", "z", "1-0")] * 8 + [game("x", "z", "0-1")] * 12  # x: 8 points of 20
            + [game("y", "z", "1-0")] * 3 + [game("y", "z", "0-1")] * 1  # y: 3 of 4 (75%)
            # u and v both score 1 of 2, u against the strong z, v against the weak x
            + [game("u", "z", "1-0"), game("u", "z", "0-1"), game("v", "x", "1-0"), game("v", "x", "0-1")])
    standings = compute_standings(["v", "x", "y", "z", "u"], rows)
    order = [e.name for e in standings.engines]
    elo = {e.name: e.elo or math.nan for e in standings.engines}  # each engine has games
    points = {e.name: e.points for e in standings.engines}
    assert elo["y"] > elo["z"] > elo["x"]  # by rating: y z x
    assert order.index("z") < order.index("x") < order.index("y")  # by points: z 14, x 9, y 3
    # Equal points (1 for u and v, v listed first): the higher rating first.
    assert points["u"] == points["v"] == 1.0 and elo["u"] > elo["v"]
    assert order.index("u") < order.index("v")


def walk(value: Any, path: str = ""):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from walk(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from walk(item, f"{path}[{i}]")
    else:
        yield path, value


NUMERIC = {"score", "draw_ratio", "elo", "elo_error", "elo_interval", "nelo", "los", "penta_elo",
           "penta_elo_error", "penta_elo_interval", "penta_nelo", "penta_los", "tri_elo",
           "tri_elo_error", "tri_elo_interval", "tri_nelo", "tri_los", "first_mover_score",
           "llr", "lower", "upper", "games_left"}


def test_json_has_null_and_a_reason_for_infinite_or_undefined_figures():
    """specs/tournament.md §Standings: infinite and undefined numbers are
    `null` with a reason, never strings in numeric fields."""
    rows = ([game("a", "b", "1-0", 0, i // 2) if i % 2 == 0 else game("b", "a", "0-1", 0, i // 2)
             for i in range(6)]  # a wins every game: infinite Elo
            + [game("a", "c", "1-0", 1, i // 2) if i % 2 == 0 else game("c", "a", "1-0", 1, i // 2)
               for i in range(6)])  # every game pair 1-1: no spread, undefined penta interval
    data = json.loads(json.dumps(compute_standings(["a", "b", "c"], rows, SPRT(0, 5)).to_json()))
    for path, value in walk(data):
        key = re.sub(r"\[\d+\]$", "", path).rsplit(".", 1)[-1]
        if key in NUMERIC and ".null_reasons." not in path:
            assert value is None or isinstance(value, (int, float)) and math.isfinite(value), path
        assert value not in ("+inf", "-inf", "inf", "nan"), path
    ab, ac = data["pairs"]
    assert ab["elo"] is None and ab["elo_error"] is None and ab["penta_elo_interval"] == [None, None]
    assert ab["null_reasons"]["elo"] == "every game won: a score of 100% has no finite Elo"
    assert ac["penta_elo"] == 0.0 and ac["penta_elo_error"] is None and ac["penta_elo_interval"] is None
    assert ac["null_reasons"]["penta_elo_error"] == ("every game pair scored 1 point: "
                                                     "the results have no spread to measure")
    # the pair's shown figures are its game pairs': undefined here, and said
    # why; the same from its games are defined (specs/tournament.md §Which figure where)
    assert ac["samples"] == "pentanomial" and ac["elo_error"] is None
    assert ac["null_reasons"]["elo_error"] == ac["null_reasons"]["penta_elo_error"]
    assert ac["tri_elo_error"] is not None and "tri_elo_error" not in ac["null_reasons"]
    assert data["sprt"]["model"] == "normalized" and data["sprt"]["samples"] == "pentanomial"
    # ...and in text they print as such: "+inf" and "+/- undefined", never "+/- 0.0".
    text = render(pairs_table(compute_standings(["a", "b", "c"], rows)), 120)
    assert "+inf" in text and "+0.0 +/- undefined" in text and "+/- 0.0" not in text


def test_no_games_yet():
    standings = compute_standings(["a", "b"], [])
    data = standings.to_json()
    assert data["difference"]["elo"] is None and data["difference"]["null_reasons"]["elo"] == "no games"
    assert data["engines"][0]["null_reasons"] == {"elo": "no games", "elo_error": "no games"}
    console = _console(80)
    print_standings(console, standings)
    assert console.file.getvalue().startswith("Elo difference a - b: - (no games yet)")


# --------------------------------------------------------------------------
# A real run: the live view, the per-game lines and an SPRT's count and ETA


def engines(*kinds: str) -> list[EngineConfig]:
    return [EngineConfig(cmd=f"{PY} -m sample_engines.{kind}", name=f"sample_engines.{kind}")
            for kind in kinds]


async def test_live_view_of_a_real_run_fits_80_columns(tmp_path):
    """specs/tournament.md §Live display: at 80 columns the live view keeps
    W, D and L (the table drops only what the order says) and cuts no cell."""
    config = TournamentConfig(game="troll", engines=engines("random", "greedy", "random"),
                              games=2, tc="depth=1")
    config.engines[2].name = "sample_engines.random2"
    display = RichDisplay(console=_console(80))
    with Store(tmp_path / "live.db") as store:
        tournament_id, _ = open_tournament(store, config)
        run = Coordinator(config, store, tournament_id, observer=display)
        result = await run.run()
        assert result.status == "finished"
        for width in WIDTHS:
            display.console = _console(width)
            text = render(display.render(), width)
            assert_fits(text, width)
            shown = headers(text)
            assert {"engine", "points", "Elo", "W", "D", "L"} <= set(shown), shown
            for name in config.engine_names:
                assert name in text
            assert "6/6 games" in text


async def test_sprt_run_counts_to_the_expected_length_not_the_cap(tmp_path):
    """specs/tournament.md §Live display: in an SPRT the per-game line counts
    `[done/~expected]` (or `[done]` until the test can say: 10 game pairs), the
    end line `N games (SPRT, at most 24)`; never `N/24`.  The ETA comes with the
    estimate only.  Two random engines: far from deciding in 24 games."""
    config = TournamentConfig(game="troll", engines=engines("random", "random"), games=24,
                              tc="depth=1", concurrency=2, sprt="elo0=0 elo1=50 model=logistic")
    config.engines[1].name = "other"
    out = io.StringIO()
    expected: list[str] = []

    class Watch(LineDisplay):
        def game_finished(self, game, record, standings):
            st, run = standings.sprt_status, self.run
            assert st is not None and run is not None
            left = None if st.games_left is None else min(run.total - run.done, st.games_left)
            expected.append(f"[{run.done}]" if left is None else f"[{run.done}/~{run.done + round(left)}]")
            super().game_finished(game, record, standings)

    with Store(tmp_path / "sprt.db") as store:
        tournament_id, _ = open_tournament(store, config)
        result = await Coordinator(config, store, tournament_id, observer=Watch(out)).run()
    assert result.status == "finished"
    lines = out.getvalue().splitlines()
    game_lines = [line for line in lines if line.startswith("[")]
    assert [line.split(" ", 1)[0] for line in game_lines] == expected
    assert expected[:19] == [f"[{n}]" for n in range(1, 20)]  # fewer than 10 pairs: no estimate
    assert any("/~" in line for line in game_lines)  # then the estimate
    assert not any("/24" in line for line in lines)
    assert "model=logistic" in game_lines[-1]  # the model is named
    assert "Elo sample_engines.random - other" in game_lines[-1] and "leader" not in game_lines[-1]
    assert lines[0].endswith("0 games done (SPRT, at most 24), concurrency 2, tc depth=1")
    assert lines[-1].startswith(f"{result.status}: {result.done} games (SPRT, at most 24)")
    for line in game_lines:
        assert ("ETA" in line) == ("/~" in line.split(" ", 1)[0]), line


async def test_an_sprt_that_reaches_the_cap_says_it_is_inconclusive(tmp_path):
    """specs/tournament.md §Stopping (SPRT): a test still undecided when the
    schedule's games are all played ends `finished`, its note, the run's last
    line, the standings' SPRT line and their JSON saying that it was stopped
    at the cap and is inconclusive.  Two random engines, 4 games: far from
    either bound (two game pairs move the LLR by well under 1)."""
    config = TournamentConfig(game="troll", engines=engines("random", "random"), games=4,
                              tc="depth=1", sprt="elo0=0 elo1=50 model=logistic")
    config.engines[1].name = "other"
    out = io.StringIO()
    with Store(tmp_path / "cap.db") as store:
        tournament_id, _ = open_tournament(store, config)
        result = await Coordinator(config, store, tournament_id, observer=LineDisplay(out)).run()
        row = store.tournament(tournament_id)
        assert row is not None
        from arbiter.tournament import tournament_standings

        standings = tournament_standings(store, row)
    assert (result.status, result.done) == ("finished", 4)
    st = standings.sprt_status
    assert st is not None and st.decision is None
    note = (f"SPRT: inconclusive, stopped at the cap of 4 games (LLR {st.llr:.2f}, within "
            f"[{st.lower:.2f}, {st.upper:.2f}], {standings.sprt})")
    assert result.note == row["note"] == note
    assert out.getvalue().splitlines()[-1] == f"finished: 4 games (SPRT, at most 4) - {note}"
    console = _console(200)
    print_standings(console, standings, {**row, "status": "finished"})
    sprt_line = next(line for line in console.file.getvalue().splitlines() if line.startswith("SPRT "))
    assert sprt_line.endswith("(pentanomial) -> inconclusive: stopped at the cap of 4 games")
    sprt = standings.to_json()["sprt"]
    assert (sprt["decision"], sprt["stopped_at_cap"]) == (None, True)


async def test_the_per_game_count_never_repeats_when_games_arrive_in_batches(tmp_path):
    """specs/tournament.md §Live display: the per-game lines count 1, 2, 3 ...
    even when a pair player (the cluster's seam) hands back several game
    pairs at once, all stored before the first is told; the `leader` part
    names the standings' first engine with its points of its games.  The
    player here plays nothing: each game gets a fixed record (White wins)."""
    config = TournamentConfig(game="troll", engines=engines("random", "greedy", "mcts"), games=8,
                              tc="depth=1")
    out = io.StringIO()
    leaders: list[str] = []

    class Watch(LineDisplay):
        def game_finished(self, game, record, standings):
            first = standings.engines[0]  # the most points (§Standings)
            leaders.append(f"leader {first.name} {first.points:g}/{first.games}")
            super().game_finished(game, record, standings)

    with Store(tmp_path / "batches.db") as store:
        tournament_id, _ = open_tournament(store, config)
        result = await Coordinator(config, store, tournament_id, observer=Watch(out),
                                   player=FixedRecords()).run()
    assert (result.status, result.done) == ("finished", 24)
    game_lines = [line for line in out.getvalue().splitlines() if line.startswith("[")]
    assert [line.split("]")[0] for line in game_lines] == [f"[{n}/24" for n in range(1, 25)]
    assert [line.rsplit(" | ", 1)[1] for line in game_lines] == leaders


#: specs/tournament.md §JSON numbers: decimals by key
ELO_KEYS = {"elo", "elo_error", "elo_interval", "nelo", "error", "tri_elo", "tri_elo_error",
            "tri_elo_interval", "tri_nelo", "penta_elo", "penta_elo_error", "penta_elo_interval",
            "penta_nelo"}
FRACTION_KEYS = {"score", "draw_ratio", "los", "tri_los", "penta_los", "first_mover_score", "matrix",
                 "llr", "lower", "upper"}


def assert_json_precision(data: Any) -> int:
    """Every number under an Elo key has at most 1 decimal, under a
    fraction's (or the LLR's) at most 4, points are whole or halves;
    returns how many numbers were checked."""
    checked = 0
    for path, value in walk(data):
        if isinstance(value, bool) or not isinstance(value, float):
            continue
        key = re.sub(r"(\[\d+\])+$", "", path).rsplit(".", 1)[-1]
        if key in ELO_KEYS:
            assert round(value, 1) == value, path
        elif key in FRACTION_KEYS:
            assert round(value, 4) == value, path
        elif key == "points":
            assert (2 * value).is_integer(), path
        else:
            continue
        checked += 1
    return checked


def test_standings_json_numbers_have_their_stated_precision():
    """specs/tournament.md §JSON numbers: Elo to 1 decimal, fractions and
    the LLR to 4, in every part of the standings' JSON."""
    data = json.loads(json.dumps(big_round_robin().to_json()))
    assert assert_json_precision(data) > 60
    rows = [game("a", "b", r, 0, i // 2) for i, r in enumerate(["1-0", "0-1", "1/2-1/2", "1-0"] * 7)]
    match = compute_standings(["a", "b"], rows, SPRT(0, 5)).to_json()
    assert assert_json_precision(match) > 20 and match["sprt"]["llr"] != 0

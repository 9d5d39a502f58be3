"""Game records (specs/records.md): the PGN-like text, its parser, replay
through the referee, JSONL, and the ``export``/``replay``/``show``/``import``
commands on real files, real SQLite databases and real engine processes.

The commands run in-process (tests/cli.py), the engines and databases they
use are real."""

from __future__ import annotations

import copy
import functools
import json
import random
import sqlite3
import sys
from pathlib import Path

import pytest
from cli import invoke
from hypothesis import given, settings
from hypothesis import strategies as st

from arbiter import record_jsonl, records, replay
from arbiter.games import GAME_NAMES, Color, IllegalMoveError, get_game
from arbiter.pgn import (
    MoveData,
    format_clock,
    format_move_comment,
    format_score,
    format_seconds,
    parse_clock,
    parse_move_comment,
    parse_score,
)
from arbiter.record import GameRecord, Ply, Score

DATA = Path(__file__).parent / "data" / "records"
HANDWRITTEN = DATA / "handwritten.pgn"
#: an export written by the arbiter of commit 3b87a4c, before clock comments
#: and ArbiterTermination: ten games of the four games, five endings
OLD_EXPORT = DATA / "export-3b87a4c"
BAD_GAMES = DATA / "bad_games.pgn"
PYTHON = sys.executable
RANDOM = f"cmd={PYTHON} arg=-m arg=sample_engines.random name=random"
GREEDY = f"cmd={PYTHON} arg=-m arg=sample_engines.greedy name=greedy"
ILLEGAL = f"cmd={PYTHON} arg={Path(__file__).parent / 'bad_engines' / 'illegal.py'} name=illegal"


# --- records made through the referee ----------------------------------------------


SCORES = [None, "cp 35", "cp -1234", "cp 0", "mate 3", "mate -2", "winprob 0.62", "winprob 1e-05"]


def random_record(name: str, seed: int, *, book: int = 2, from_fen_after: int = 0,
                  stop_early: bool = False) -> GameRecord:
    """A finished game of random legal moves with random per-move data.

    ``from_fen_after``: start from the position string after that many
    plies; ``stop_early``: stop before the end and record a time forfeit of
    the side to move (a match ending, specs/records.md §7).  Seeded, so the
    same arguments give the same game: played once, a fresh copy each call
    (a test may change it)."""
    return copy.deepcopy(_random_record(name, seed, book, from_fen_after, stop_early))


@functools.cache
def _random_record(name: str, seed: int, book: int, from_fen_after: int,
                   stop_early: bool) -> GameRecord:
    rng = random.Random(f"{name}/{seed}")
    game = get_game(name)
    start = game.start()
    for _ in range(from_fen_after):
        start = start.play(rng.choice(sorted(start.legal_moves())))
    position = start
    played: list[tuple[str, Color]] = []
    limit = rng.randint(3, 12) if stop_early else 400
    while not position.is_over() and len(played) < limit:
        move = rng.choice(sorted(position.legal_moves()))
        played.append((move, position.to_move))
        position = position.play(move)
    moves = [Ply(move, color.value, rng.randint(0, 5000), score=_score(rng.choice(SCORES)),
                        depth=rng.choice([None, rng.randint(1, 30)])) for move, color in played]
    outcome = position.outcome()
    if stop_early or outcome is None:
        loser = position.to_move
        result, termination = ("0-1" if loser is Color.WHITE else "1-0"), "time-forfeit"
        detail = f"{loser.value} lost on time: {{no bestmove}} within 1.000 s"
    else:
        result, termination = outcome.result, outcome.termination.value
        detail = f"{outcome.termination.value} \\ \"done\""
    tc = rng.choice([{"white": "10+0.1", "black": "10+0.1"}, {"white": "st=2", "black": "40/60+0.5"}])
    return GameRecord(
        game=name, white=f'eng "{seed}"', black="back\\slash", result=result,
        termination=termination, termination_detail=detail,
        fen=start.fen() if from_fen_after else None,
        opening_moves=[m.move for m in moves[:book]], moves=moves[book:], time_control=tc,
        start_time="2024-05-01T10:22:03.118Z", end_time="2024-05-01T10:23:00.001Z",
        white_id={"name": "Engine One 1.0"}, black_id={})


def _score(text: str | None) -> Score | None:
    return None if text is None else Score.parse(text)


def sample_records() -> list[tuple[GameRecord, dict[str, str]]]:
    games = []
    for number, name in enumerate(GAME_NAMES, start=1):
        games.append((random_record(name, number), {"Event": "t", "Round": f"1.{number}"}))
        games.append((random_record(name, number, book=0, from_fen_after=3),
                      {"Event": "t", "Round": f"2.{number}", "Annotator": "me"}))
        games.append((random_record(name, number, stop_early=True), {"Event": "t"}))
    return games


def essentials(record: GameRecord) -> dict:
    """What the text form holds of a record (specs/records.md §4)."""
    return {
        "game": record.game, "white": record.white, "black": record.black,
        "result": record.result, "termination": record.termination,
        "detail": records.comment_text(record.termination_detail), "fen": record.fen,
        "opening": record.opening_moves, "time_control": record.time_control,
        "times": (record.start_time, record.end_time), "white_id": record.white_id.get("name"),
        "moves": [(m.move, m.color, m.time_ms, m.score, m.depth) for m in record.moves],
    }


# --- small formats -------------------------------------------------------------------


@pytest.mark.parametrize("score, text", [
    ("cp 35", "+0.35"), ("cp -120", "-1.20"), ("cp 0", "0.00"), ("cp 5", "+0.05"),
    ("cp 1234", "+12.34"), ("mate 3", "+M3"), ("mate -2", "-M2"), ("winprob 0.62", "62%"),
    ("winprob 1e-05", "0.001%"), ("winprob 1", "100%"),
])
def test_scores_are_written_from_the_movers_view_and_read_back(score, text):
    """specs/records.md §4: cp/100, +M/-M, percentages."""
    assert format_score(score) == text
    assert parse_score(text) == score


@pytest.mark.parametrize("ms, text", [(520, "0.52s"), (1000, "1s"), (0, "0s"), (7, "0.007s"),
                                      (61234, "61.234s")])
def test_times_are_seconds_without_trailing_zeros(ms, text):
    assert format_seconds(ms) == text
    data = parse_move_comment(text)
    assert data is not None and data.time_ms == ms


def test_move_comments_and_free_text():
    data = parse_move_comment("+0.35/12 0.52s")
    assert data is not None and (data.score, data.depth, data.time_ms) == ("cp 35", 12, 520)
    data = parse_move_comment("?/7 1s")
    assert data is not None and data.depth == 7 and data.score is None
    for free in ("a good move", "+0.35/12", "0.52", "+0.35/x 1s", "1.0005s", ""):
        assert parse_move_comment(free) is None, free


# --- round trips ------------------------------------------------------------------------


def test_records_to_text_to_records_to_text_is_identical():
    """The issue's round trip, for every game: from the start, from a
    position string, with a match ending; odd names and details."""
    games = sample_records()
    text = records.write_games(games)
    parsed = records.parse_games(text, "rt.pgn")
    assert len(parsed) == len(games)
    again = []
    for (record, _), game in zip(games, parsed, strict=False):
        report = replay.replay(game)
        assert report.ok, report.error
        back = replay.to_record(game)
        assert essentials(back) == essentials(record)
        again.append((back, records.context_tags(game)))
    assert records.write_games(again) == text


def test_layout_lines_blank_lines_and_tag_order():
    """specs/records.md §2-§4: 80 columns, one blank line between games."""
    games = sample_records()
    text = records.write_games(games)
    movetext = [line for line in text.splitlines() if not line.startswith("[")]
    assert all(len(line) <= records.LINE_WIDTH for line in movetext)  # tags are never wrapped
    assert text.endswith("\n") and "\n\n\n" not in text
    assert text.count("\n\n[Event ") == len(games) - 1
    first = records.parse_games(text, "x")[0]
    assert list(first.tags)[:7] == list(records.SEVEN_TAG_ROSTER)
    assert first.tags["White"] == 'eng "1"' and first.tags["Black"] == "back\\slash"
    assert '[White "eng \\"1\\""]' in text and '[Black "back\\\\slash"]' in text


def test_atoll_pairs_start_with_blacks_move_and_fen_starts_number_from_its_ply():
    """specs/records.md §4: p1 (Black in Atoll) opens each numbered pair."""
    record = random_record("atoll", 5, book=0)
    movetext = records.write_game(record).split("\n\n", 1)[1]
    first, second = record.moves[0], record.moves[1]
    assert first.color == "black" and second.color == "white"
    assert movetext.startswith(f"1. {first.move} {{")
    assert f"}} {second.move} {{" in movetext and f"2. {record.moves[2].move} {{" in movetext
    # a position string with p2 (White) to move: "N... move"
    record = random_record("atoll", 5, book=0, from_fen_after=3)
    assert record.fen is not None and get_game("atoll").from_fen(record.fen).to_move is Color.WHITE
    movetext = records.write_game(record).split("\n\n", 1)[1]
    assert movetext.startswith(f"2... {record.moves[0].move} {{")


@settings(max_examples=60, deadline=None)
@given(name=st.text(st.characters(blacklist_categories=["Cs", "Cc"]), max_size=30),
       detail=st.text(st.characters(blacklist_categories=["Cs"]), max_size=60))
def test_any_name_survives_and_any_detail_stays_inside_its_comment(name, detail):
    record = random_record("troll", 1)
    record.white, record.termination_detail = name, detail
    text = records.write_game(record, {"Event": name})
    [game] = records.parse_games(text, "x")
    assert game.tags["White"] == name and game.tags["Event"] == name
    assert replay.to_record(game).termination_detail == records.comment_text(detail)
    [(back, tags)] = record_jsonl.parse_jsonl(record_jsonl.write_jsonl([(record, {"Event": name})]), "x")
    assert back.white == name and back.termination_detail == detail and tags["Event"] == name


def test_jsonl_keeps_the_whole_record():
    games = sample_records()
    text = record_jsonl.write_jsonl(games)
    assert len(text.splitlines()) == len(games)
    back = record_jsonl.parse_jsonl(text, "x.jsonl")
    assert [r.to_dict() for r, _ in back] == [r.to_dict() for r, _ in games]
    assert record_jsonl.write_jsonl(back) == text
    bad = text.replace('"result":', '"resul":', 1)
    with pytest.raises(records.RecordSyntaxError, match=r"^x.jsonl:1: game 1: bad JSONL record"):
        record_jsonl.parse_jsonl(bad, "x.jsonl")


def test_append_game_gives_what_write_games_gives(tmp_path):
    games = sample_records()[:3]
    path = tmp_path / "live.pgn"
    for record, tags in games:
        records.append_game(path, record, tags)
    assert path.read_text() == records.write_games(games)


# --- reading hand-written files ------------------------------------------------------------


def test_hand_written_games_replay_and_read_as_written():
    """specs/records.md §5: optional numbers and comments, ;, %, NAGs, !?,
    variations skipped, upper case moves, FEN, PGN's "normal", and *."""
    games = records.parse_games(HANDWRITTEN.read_text(), str(HANDWRITTEN))
    reports = [replay.replay(game) for game in games]
    assert [r.ok for r in reports] == [True] * 5, [r.error for r in reports]
    assert [r.game for r in reports] == ["troll", "morris", "talisman", "atoll", "troll"]
    assert [r.skipped_variations for r in reports] == [1, 1, 0, 0, 0]
    troll = games[0]
    assert troll.moves[2].text == "E4" and troll.moves[4].text == "b6"
    assert troll.closing_comment == "White connects rank 1 to rank 8"
    assert troll.moves[3].comments == ["a free-text comment"]
    final = get_game("troll").position(None, [m.text.lower() for m in troll.moves])
    outcome = final.outcome()
    assert reports[0].final_fen == final.fen() and outcome is not None and outcome.result == "1-0"
    morris = replay.to_record(games[1])
    assert morris.fen == "3/3/3/B1W3/2W/2B/3 w 7 7 0 4" and morris.termination == "blocked"
    assert (str(morris.moves[0].score), morris.moves[0].depth, morris.moves[0].time_ms) == ("cp 35", 4, 1500)
    assert morris.moves[2].time_ms == 0 and morris.moves[2].score is None  # no comment
    talisman = replay.to_record(games[2])
    assert talisman.opening_moves == ["B", "C"] and talisman.termination == "cannot-catch-up"
    assert talisman.black == 'random "the" \\ mover'
    assert (str(talisman.moves[0].score), talisman.moves[0].depth) == ("mate 3", 12)
    assert (str(talisman.moves[3].score), talisman.moves[3].depth, talisman.moves[3].time_ms) == (
        "winprob 1e-05", 3, 2500)  # a comment broken over two lines
    assert replay.to_record(games[3]).moves[1].move == "swap"
    assert reports[4].result == "*"
    with pytest.raises(ValueError, match=r"game 5: an unfinished game \(\*\) is not a record"):
        replay.to_record(games[4])


def illegal_reason(name: str, fen: str | None, moves: list[str], bad: str) -> str:
    position = get_game(name).position(fen, moves)
    with pytest.raises(IllegalMoveError) as exc:
        position.parse_move(bad)
    return exc.value.reason


def test_replay_names_what_is_wrong_in_each_bad_game():
    """Each game of tests/data/records/bad_games.pgn has one mistake; the
    CLI names file, line, game and the mistake, exit 1, no traceback."""
    run = invoke("replay", BAD_GAMES)
    assert run.returncode == 1
    where = str(BAD_GAMES)
    reason = illegal_reason("morris", None, ["a1", "d7", "g7"], "a1")
    expected = [
        f"{where}:2: game 1: bad tag '[White \"Alice]': tag White: the value's closing quote is missing",
        f"{where}:8: game 2: tag Game: unknown game 'chess'",
        f"{where}:16: game 3: ply 4 (move 2, black): illegal move 'a1': {reason}",
        f"{where}:21: game 4: result 1-0 but the final position is not over (white to move)",
        f"{where}:26: game 5: result 0-1 contradicts the final position: 1-0 by connection",
        f"{where}:32: game 6: result 0-1 contradicts Termination 'time-forfeit': black, to move, "
        "is the side that failed, so the result is 1-0",
        f"{where}:37: game 7: the result token 1-0 differs from the Result tag 0-1 (line 35)",
        f"{where}:39: game 8: no Game tag",
        f"{where}:46: game 9: tag PlyCount says 3 plies but the movetext has 2",
        f"{where}:53: game 10: tag FEN: invalid position '8/8/8/8/8/8/8/9 w 0'",
        f"{where}:60: game 11: tag Termination 'resigned' is not a known reason",
        f"{where}:66: game 12: tag Result given twice (first on line 65)",
    ]
    lines = run.stdout.splitlines()
    assert len(lines) == len(expected) + 1
    for line, start in zip(lines, expected, strict=False):
        assert line.startswith(start), (line, start)
    assert lines[-1] == "12 games: 0 OK, 12 bad"
    data = json.loads(invoke("replay", BAD_GAMES, "--json").stdout)
    assert [r["kind"] for r in data["reports"]] == [
        "syntax", "unknown-game", "illegal-move", "result", "result", "result", "result",
        "unknown-game", "tag", "tag", "tag", "syntax"]
    assert (data["reports"][2]["ply"], data["reports"][2]["move"]) == (4, "a1")


def test_truncated_files_are_reported_never_read_as_shorter_games():
    text = records.write_games(sample_records()[:2])
    cut = text.index("\n\n[Event") + 1  # the first game whole, then a cut
    for end in range(cut + 2, len(text) - 1, 97):
        items = records.read_games(text[:end], "cut.pgn")
        assert len(items) == 2 and isinstance(items[0], records.ParsedGame)
        error = items[1]
        assert isinstance(error, records.RecordSyntaxError), end
        assert error.game_number == 2 and error.filename == "cut.pgn"
        assert "truncated file?" in error.message or "bad tag" in error.message, error.message


def test_unclosed_comment_or_variation_does_not_swallow_the_next_game():
    text = ('[Game "troll"]\n[Result "*"]\n\n1. d5 {forgot to close\n\n'
            '[Game "troll"]\n[Result "*"]\n\n1. d5 (1. e4 *\n\n'
            '[Game "troll"]\n[Result "*"]\n\n1. d5 {fine} *\n')
    items = records.read_games(text, "f.pgn")
    assert [str(i) for i in items[:2]] == [
        "f.pgn:4: game 1: comment '{' not closed before the next game's tags (line 6)",
        "f.pgn:9: game 2: variation '(' never closed before the next game's tags (line 11)",
    ]
    assert isinstance(items[2], records.ParsedGame)
    assert replay.replay(items[2]).ok and items[2].number == 3


@pytest.mark.parametrize("text, message", [
    ('[Game "troll"]\n[Result "*"]\n\n1. d5 } *\n', "f.pgn:4: game 1: '}' without an opening '{'"),
    ('[Game "troll"]\n[Result "*"]\n\n1. d5 ) *\n', "f.pgn:4: game 1: ')' without an opening '('"),
    ('[ "troll"]\n\n1. d5 *\n', "f.pgn:1: game 1: bad tag '[ \"troll\"]': a tag needs a name"),
    ('[Game troll]\n\n1. d5 *\n', "f.pgn:1: game 1: bad tag '[Game troll]': tag Game: the value must be a quoted string"),
    ('[Game "troll"\n\n1. d5 *\n', "f.pgn:1: game 1: bad tag '[Game \"troll\"': tag Game: ']' expected"),
    ('[Game "troll"]\n\n1. d5 "e4" *\n', "f.pgn:3: game 1: a quoted string outside a tag"),
    ('[Game "troll"]\n\n1. d5 $x *\n', "f.pgn:3: game 1: bad annotation glyph '$x'"),
    ('[Game "troll"]\n[Result "*"]\n\n1. d5\n[Game "troll"]\n\n*\n',
     "f.pgn:5: game 1: tag Game inside the movetext: the game has no result token"),
])
def test_syntax_errors_name_file_line_and_game(text, message):
    with pytest.raises(records.RecordSyntaxError) as exc:
        records.parse_games(text, "f.pgn")
    assert str(exc.value).startswith(message), str(exc.value)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(list('[]{}()";%$.!?*\n -/0123456789abdeGMNRT\\')
                                + ["d5", "e4", "1-0", "*", "\n\n", "d2-d3xa1", "A-B", "swap", "pass"]
                                + [f'[Game "{name}"]' for name in GAME_NAMES]
                                + ['[Result "*"]', '[Termination "max-plies"]', '[FEN "3/3"]']),
                max_size=60).map("".join))
def test_arbitrary_text_gives_verdicts_not_exceptions(text):
    for item in records.read_games(text, "fuzz.pgn"):
        if isinstance(item, records.ParsedGame):
            report = replay.replay(item)
            assert report.ok or (report.error is not None and report.error.startswith("fuzz.pgn:"))
        else:
            assert str(item).startswith("fuzz.pgn:")


# --- terminations the position alone does not give ------------------------------------------


def game_text(name: str, moves: str, result: str, termination: str) -> str:
    return (f'[Game "{name}"]\n[Result "{result}"]\n[Termination "{termination}"]\n\n'
            f"{moves} {result}\n")


def verdict(text: str) -> replay.ReplayReport:
    [game] = records.parse_games(text, "t.pgn")
    return replay.replay(game)


def test_match_endings_check_the_loser_and_that_the_rules_had_not_ended_the_game():
    """specs/records.md §7 point 4."""
    for termination in ("time-forfeit", "illegal-move", "malformed-bestmove", "stall"):
        assert verdict(game_text("troll", "d5 e4 c3", "1-0", termination)).ok  # black to move
        assert not verdict(game_text("troll", "d5 e4 c3", "0-1", termination)).ok
    for result in ("1-0", "0-1", "1/2-1/2"):
        assert verdict(game_text("troll", "d5 e4", result, "crash")).ok
    winning = "d4 a5 e4 d7 b6 e2 e5 e3 c8 b7 b4 f5 c4 b5 e1 a3 b8"
    report = verdict(game_text("troll", winning, "1-0", "time-forfeit"))
    assert not report.ok and report.error is not None
    assert "already over by the rules: 1-0 by connection" in report.error
    report = verdict(game_text("troll", winning, "1-0", "no-moves"))
    assert not report.ok and report.error is not None
    assert "tag Termination 'no-moves' but the final position ends by connection" in report.error


def test_max_plies_adjudication_follows_the_scores():
    """Talisman keeps scores: the higher one wins; Troll has none: a draw."""
    moves = "B C A P M S G D H L Q R M-I L-K I-J R-O A-E K-I"
    scores = get_game("talisman").position(None, moves.split()).scores()
    assert scores is not None and scores[0] != scores[1]
    right = "1-0" if scores[0] > scores[1] else "0-1"
    assert verdict(game_text("talisman", moves, right, "max-plies")).ok
    report = verdict(game_text("talisman", moves, "1/2-1/2", "max-plies"))
    assert not report.ok and report.error is not None
    assert f"scores {scores[0]}-{scores[1]}" in report.error
    assert verdict(game_text("troll", "d5 e4", "1/2-1/2", "max-plies")).ok
    assert not verdict(game_text("troll", "d5 e4", "1-0", "max-plies")).ok


# --- the commands -------------------------------------------------------------------------------


@pytest.mark.parametrize("number, ply", [(1, 5), (2, 0), (2, None), (3, 20), (4, 2), (4, None)])
def test_show_draws_the_position_after_k_plies(number, ply):
    """The diagram is the referee's for the position after K plies, with
    side to move (or the result) and Talisman's scores."""
    game = records.parse_games(HANDWRITTEN.read_text(), "h")[number - 1]
    fen = game.tags.get("FEN")
    name = game.tags["Game"]
    moves = [m.text.lower() if name == "troll" else m.text for m in game.moves]
    position = get_game(name).position(fen, moves[:len(moves) if ply is None else ply])
    run = invoke("show", HANDWRITTEN, "--game", number, *([] if ply is None else ["--ply", ply]))
    assert run.returncode == 0, run.stderr
    assert position.diagram().rstrip("\n") in run.stdout
    assert f"fen: {position.fen()}" in run.stdout
    outcome = position.outcome()
    if outcome is None:
        assert f"to move: {position.to_move.value}" in run.stdout
    else:
        assert f"game over: {outcome.result} by {outcome.termination.value}" in run.stdout
    if name == "talisman":
        scores = position.scores()
        assert scores is not None
        white, black = scores
        assert f"scores: white {white}, black {black}" in run.stdout


def test_show_and_replay_refuse_bad_requests_cleanly(tmp_path):
    run = invoke("show", HANDWRITTEN, "--game", "9")
    assert run.returncode == 2 and "no game 9: the file has 5 game(s)" in run.stderr
    run = invoke("show", HANDWRITTEN, "--game", "1", "--ply", "18")
    assert run.returncode == 2 and "ply 18 out of range: the game has 17 plies" in run.stderr
    run = invoke("show", BAD_GAMES, "--game", "3", "--ply", "4")
    assert run.returncode == 2 and "ply 4: illegal move 'a1'" in run.stderr
    (tmp_path / "latin1.pgn").write_bytes(b'[Event "caf\xe9"]\n')
    run = invoke("replay", tmp_path / "latin1.pgn")
    assert run.returncode == 2 and "latin1.pgn:1: not UTF-8 text" in run.stderr
    run = invoke("replay", tmp_path / "missing.pgn")
    assert run.returncode == 2 and "missing.pgn: no such file" in run.stderr
    (tmp_path / "empty.pgn").write_text("; nothing\n")
    run = invoke("replay", tmp_path / "empty.pgn")
    assert run.returncode == 1 and "no games in the file" in run.stderr


def test_import_refuses_a_file_with_any_bad_game(tmp_path):
    db = tmp_path / "a.db"
    run = invoke("import", BAD_GAMES, "--db", db)
    assert run.returncode == 1 and "nothing imported: 12 of 12 games are bad" in run.stderr
    assert "game 3: ply 4 (move 2, black): illegal move 'a1'" in run.stderr
    run = invoke("import", HANDWRITTEN, "--db", db)  # game 5 is unfinished
    assert run.returncode == 1 and "game 5: an unfinished game (*) is not a record" in run.stderr
    assert not db.exists() or sqlite3.connect(db).execute(
        "select count(*) from sqlite_master where name = 'games'").fetchone()[0] == 0


def standings_json(db: Path) -> dict:
    run = invoke("standings", "--db", db, "--json")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    data.pop("tournament", None)  # its id and name: the rest must agree
    return data


def test_tournament_export_replay_import_export_is_identical(tmp_path):
    """The issue's round trip through real engines and real databases; the
    live --pgn file is the export, and the standings survive the import.
    One test, not several sharing a module fixture: pytest -n 2 would play
    the tournament once in each worker."""
    db, live = tmp_path / "t.db", tmp_path / "live.pgn"
    run = invoke("tournament", "--game", "morris", "-e", RANDOM, "-e", GREEDY, "--games", "2",
                 "--rounds", "2", "--random-plies", "2", "--tc", "10+0.1", "--maxplies", "40",
                 "--db", db, "--pgn", live, "--plain")
    assert run.returncode == 0, run.stderr
    exported = invoke("export", "--db", db)
    assert exported.returncode == 0, exported.stderr
    text = exported.stdout
    assert len(records.parse_games(text, "x")) == 4
    assert '[Round "2.2"]' in text and "{book}" in text
    assert invoke("export", "--db", db).stdout == text  # the same bytes every time
    assert live.read_text() == text
    (tmp_path / "t.pgn").write_text(text)
    replay = invoke("replay", tmp_path / "t.pgn")
    assert replay.returncode == 0 and replay.stdout.endswith("4 games: 4 OK, 0 bad\n")
    fresh = tmp_path / "fresh.db"
    imported = invoke("import", tmp_path / "t.pgn", "--db", fresh)
    assert imported.returncode == 0, imported.stderr
    assert invoke("export", "--db", fresh).stdout == text
    assert standings_json(fresh) == standings_json(db)
    again = invoke("import", tmp_path / "t.pgn", "--db", fresh)
    assert again.returncode == 1 and "already imported" in again.stderr
    # the lossless form: every per-move field survives
    jsonl = invoke("export", "--db", db, "--format", "jsonl", "--out", tmp_path / "t.jsonl")
    assert jsonl.returncode == 0, jsonl.stderr
    other = tmp_path / "other.db"
    assert invoke("import", tmp_path / "t.jsonl", "--db", other).returncode == 0
    assert invoke("export", "--db", other, "--format", "jsonl").stdout == (tmp_path / "t.jsonl").read_text()
    assert invoke("export", "--db", other).stdout == text


def test_a_match_with_an_illegal_move_replays_and_names_the_move(tmp_path):
    db, live = tmp_path / "m.db", tmp_path / "m.pgn"
    run = invoke("match", "troll", ILLEGAL, RANDOM, "--games", "2", "--tc", "10+0.1",
                  "--db", db, "--pgn", live, "--plain")
    assert run.returncode == 0, run.stderr
    text = live.read_text()
    assert '[Termination "rules infraction"]\n[ArbiterTermination "illegal-move"]' in text
    assert "played illegal move" in text
    assert invoke("replay", live).returncode == 0
    assert invoke("import", live, "--db", tmp_path / "fresh.db").returncode == 0
    assert invoke("export", "--db", tmp_path / "fresh.db").stdout == text


def test_export_errors(tmp_path):
    run = invoke("export", "--db", tmp_path / "none.db")
    assert run.returncode == 2 and "no database at" in run.stderr
    run = invoke("export", "--db", tmp_path / "none.db", "--format", "xml")
    assert run.returncode == 2 and "--format must be pgn or jsonl" in run.stderr


def test_a_device_or_pipe_is_refused_before_it_is_read():
    """specs/records.md §5 (bounds): only regular files are read (an import
    reads its file twice), so ``/dev/zero`` is refused at once, exit 2, by name."""
    for command in (["replay"], ["show", "--game", "1"], ["import"]):
        result = invoke(*command, "/dev/zero")
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        assert "/dev/zero: not a regular file" in result.stderr


# --- the tags other readers need (the python-chess test: tests/test_pgn_readers.py) ------------


def test_position_string_is_in_start_position_and_the_old_fen_form_still_reads():
    """specs/records.md §3: ``StartPosition``, never ``FEN``/``SetUp`` (a
    chess reader would parse them as chess); a file of the old form reads."""
    record = random_record("atoll", 5, book=0, from_fen_after=3)
    text = records.write_game(record)
    assert f'[StartPosition "{record.fen}"]' in text
    assert "[FEN " not in text and "[SetUp " not in text
    old = text.replace("[StartPosition ", '[SetUp "1"]\n[FEN ')
    [game] = records.parse_games(old, "old.pgn")
    assert replay.replay(game).ok and replay.to_record(game).fen == record.fen
    assert records.write_game(replay.to_record(game), records.context_tags(game)) == text
    both = text.replace("[StartPosition ", f'[FEN "{record.fen}"]\n[StartPosition ')
    report = replay.replay(records.parse_games(both, "both.pgn")[0])
    assert not report.ok and report.error is not None
    assert "StartPosition (line" in report.error and "give one" in report.error


def test_time_controls_keep_our_form_beside_pgns():
    """specs/records.md §3: TimeControl in PGN's syntax, ArbiterTimeControl
    ours; an old file (our form in TimeControl) reads back the same."""
    record = random_record("troll", 1)
    record.time_control = {"white": "st=2", "black": "0.5+0.05"}
    text = records.write_game(record)
    for line in ('[WhiteTimeControl "?"]', '[BlackTimeControl "?"]',
                 '[WhiteArbiterTimeControl "st=2"]', '[BlackArbiterTimeControl "0.5+0.05"]'):
        assert line in text
    [game] = records.parse_games(text, "x")
    assert replay.to_record(game).time_control == record.time_control
    record.time_control = {"white": "depth=3", "black": "depth=3"}
    text = records.write_game(record)
    assert '[TimeControl "-"]' in text and '[ArbiterTimeControl "depth=3"]' in text
    old = text.replace('[TimeControl "-"]\n[ArbiterTimeControl "depth=3"]', '[TimeControl "depth=3"]')
    [game] = records.parse_games(old, "old.pgn")
    assert replay.to_record(game).time_control == record.time_control
    record.time_control = {}
    assert '[TimeControl "?"]' in records.write_game(record)
    assert "ArbiterTimeControl" not in records.write_game(record)


def test_every_game_ends_with_a_blank_line_so_files_concatenate(tmp_path):
    """specs/records.md §2: ``cat a.pgn b.pgn`` reads as the games of both,
    and appending to a file without the blank line (an old one) adds it."""
    games = sample_records()
    first, second = records.write_games(games[:3]), records.write_games(games[3:])
    assert first.endswith("1-0\n\n") or first.endswith("0-1\n\n") or first.endswith("2\n\n")
    both = records.parse_games(first + second, "both.pgn")
    assert [replay.to_record(g).to_dict() for g in both] == [
        replay.to_record(g).to_dict() for g in records.parse_games(records.write_games(games), "x")]
    old = tmp_path / "old.pgn"
    old.write_text(first.rstrip("\n") + "\n")  # the old form: no blank line at the end
    records.append_game(old, *games[3])
    assert old.read_text() == first + records.write_game(*games[3])
    bare = tmp_path / "bare.pgn"
    bare.write_text(first.rstrip("\n"))
    records.append_game(bare, *games[3])
    assert bare.read_text() == old.read_text()


# --- reading files in bounded memory -------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.sampled_from(["a", "é", "€", "\r", "\n", "\r\n", "\n\n", "[T \"v\"]", " "]),
                       max_size=40),
       limit=st.integers(1, 12), block=st.integers(1, 9), jsonl=st.booleans())
def test_a_file_read_by_blocks_gives_the_lines_of_its_text(tmp_path_factory, pieces, limit, block,
                                                            jsonl):
    """specs/records.md §2: CRLF, CR and LF (LF only in JSONL) whatever the
    blocks the file is read in; a line over the limit as its length only."""
    from arbiter.pgn import LongLine
    from arbiter.recordfile import file_lines

    text = "".join(pieces)
    path = tmp_path_factory.mktemp("lines") / "f.txt"
    path.write_bytes(text.encode("utf-8"))
    lines = (text if jsonl else text.replace("\r\n", "\n").replace("\r", "\n")).split("\n")
    if lines[-1] == "":
        lines.pop()
    expected = [LongLine(n, len(s)) if len(s) > limit else s for n, s in enumerate(lines, 1)]
    assert list(file_lines(str(path), limit, jsonl=jsonl, block=block)) == expected


def test_not_utf8_names_line_and_byte_of_the_file(tmp_path):
    from arbiter.recordfile import RecordFileError, file_lines

    path = tmp_path / "x.pgn"
    path.write_bytes(b"[Event \"a\"]\r\n\r\n1. d5 \xff *\n")
    with pytest.raises(RecordFileError, match=r"x.pgn:3: not UTF-8 text \(invalid start byte at byte 21\)"):
        list(file_lines(str(path), 100, block=4))


SNIPPETS = [
    '[Event "a"]\n[Game "troll"]\n\n1. d5 {0.1s} e4 1-0\n', "\n", '[Result "*"]\n', "1. a1 *\n",
    "{unclosed\n", "(open\n", ")\n", '[Bad "x]\n', "; note\n", "% escape\n", "1-0\n", "0-1 ",
    '[Event "b"]\n', "\n\n", "d5 {a\n\nb} *\n", '[Site "c"]\n\n[Round "1"]\n', "} \n", "[ x\n",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(SNIPPETS), max_size=14))
def test_reading_in_parts_gives_the_whole_files_games_and_errors(pieces):
    """specs/records.md §5: a file read one game's lines at a time gives the
    verdicts of the whole file read at once (the whole-file parser, which
    stops at the first error, agrees where it reads)."""
    from arbiter.pgn import _Parser, iter_games, text_lines

    text = "".join(pieces)
    parts = list(iter_games(text_lines(text), "f.pgn"))
    whole: list[records.ParsedGame | records.RecordSyntaxError]
    try:
        whole = list(_Parser(text, "f.pgn").games())
    except records.RecordSyntaxError as exc:
        first_error = next(i for i, item in enumerate(parts) if isinstance(item, records.RecordSyntaxError))
        assert str(parts[first_error]) == str(exc)
        whole = parts[:first_error]
    else:
        assert not any(isinstance(item, records.RecordSyntaxError) for item in parts)
    assert [(g.number, g.line, g.tags, [m.text for m in g.moves], g.result, g.closing_comment)
            for g in whole if isinstance(g, records.ParsedGame)] == [
        (g.number, g.line, g.tags, [m.text for m in g.moves], g.result, g.closing_comment)
        for g in parts[:len(whole)] if isinstance(g, records.ParsedGame)]


def test_files_read_from_disk_give_the_verdicts_of_their_text():
    from arbiter.recordfile import file_games

    for path in (HANDWRITTEN, BAD_GAMES):
        from_disk = [str(i) if isinstance(i, records.RecordSyntaxError) else replay.replay(i).summary()
                     for i in file_games(str(path))]
        from_text = [str(i) if isinstance(i, records.RecordSyntaxError) else replay.replay(i).summary()
                     for i in records.read_games(path.read_text(), str(path))]
        assert from_disk == from_text and len(from_disk) >= 5


# --- import: tournaments apart, no game twice ----------------------------------------------------


def tournaments_of(db: Path) -> list[tuple]:
    connection = sqlite3.connect(db)
    try:
        return connection.execute(
            "select t.name, t.game, t.total_games, count(g.id) from tournaments t "
            "left join games g on g.tournament = t.id group by t.id order by t.id").fetchall()
    finally:
        connection.close()


def test_jsonl_import_keeps_tournaments_apart_and_never_stores_a_game_twice(tmp_path):
    """specs/records.md §9: an export of several tournaments (two of them
    alike: same game, same engines, same name) imports as as many
    tournaments; a game already in the database, or earlier in the file, is
    not stored again; a file whose games are all there is refused."""
    source = tmp_path / "source.db"
    for game in ("troll", "troll", "morris"):
        run = invoke("match", game, RANDOM, GREEDY, "--games", "2", "--tc", "depth=1", "--new",
                     "--db", source, "--plain")
        assert run.returncode == 0, run.stderr
    assert invoke("export", "--db", source, "--format", "jsonl", "--out", tmp_path / "all.jsonl"
                  ).returncode == 0
    fresh = tmp_path / "fresh.db"
    imported = invoke("import", tmp_path / "all.jsonl", "--db", fresh)
    assert imported.returncode == 0, imported.stderr
    assert tournaments_of(fresh) == [(name, game, 2, 2) for name, game, *_ in tournaments_of(source)]
    assert len(tournaments_of(fresh)) == 3
    assert invoke("export", "--db", fresh).stdout == invoke("export", "--db", source).stdout
    for db in (fresh, source):  # imported there, or played there
        again = invoke("import", tmp_path / "all.jsonl", "--db", db)
        assert again.returncode == 1 and "already imported" in again.stderr
        assert sum(row[3] for row in tournaments_of(db)) == 6
    # one tournament's games first, then the whole export: only the others are new
    one = tmp_path / "one.jsonl"
    assert invoke("export", "--db", source, "--tournament", "2", "--format", "jsonl", "--out", one
                  ).returncode == 0
    other = tmp_path / "other.db"
    twice = tmp_path / "twice.jsonl"
    twice.write_text(one.read_text() * 2)  # a game given twice in one file is stored once
    assert invoke("import", twice, "--db", other).returncode == 0
    assert [row[3] for row in tournaments_of(other)] == [2]
    rest = invoke("import", tmp_path / "all.jsonl", "--db", other)
    assert rest.returncode == 0, rest.stderr
    assert "2 game(s) of" in rest.stdout and "not imported again" in rest.stdout
    assert sorted(row[3] for row in tournaments_of(other)) == [2, 2, 2]


# --- clock comments and the two termination tags (specs/records.md §4, §6) ---------------------


@pytest.mark.parametrize("ms, text", [(9480, "0:00:09.48"), (60_000, "0:01:00"), (0, "0:00:00"),
                                      (6_000_007, "1:40:00.007"), (43_200_001, "12:00:00.001")])
def test_clock_commands_are_hours_minutes_seconds_with_milliseconds(ms, text):
    """specs/records.md §4: ``H:MM:SS.fff`` without trailing zeros."""
    assert format_clock(ms) == text
    assert parse_clock(text) == ms


def test_move_comments_carry_the_clock_and_the_time_used():
    """specs/records.md §4, §5: ``[%clk]`` (the clock after the move, when
    there is one) and ``[%emt]`` after our EVAL TIME; read back wherever they
    stand, alone as chess tools write them, other commands skipped."""
    text = format_move_comment("cp 35", 12, 520, 9480)
    assert text == "+0.35/12 0.52s [%clk 0:00:09.48] [%emt 0:00:00.52]"
    assert parse_move_comment(text) == MoveData("cp 35", 12, 520, 9480)
    assert format_move_comment(None, None, 7) == "0.007s [%emt 0:00:00.007]"  # st=, depth=: no clock
    assert parse_move_comment("0.007s [%emt 0:00:00.007]") == MoveData(None, None, 7, None)
    assert parse_move_comment("[%clk 0:00:09.8]") == MoveData(None, None, None, 9800)
    assert parse_move_comment("[%eval 0.3] [%emt 0:00:01] [%clk 1:00:00]") == MoveData(
        None, None, 1000, 3_600_000)
    assert parse_move_comment("[%clk 0:01:00] -M2 3s") == MoveData("mate -2", None, 3000, 60_000)
    for free in ("a good move [%clk 0:00:01]", "[%eval 0.3]", "[%clk soon]", "[%clk 0:00:01] 3"):
        assert parse_move_comment(free) is None, free


def test_clocks_survive_the_text_and_the_way_back():
    """Each ply's clock is written and read back exactly; a ply without one
    (a side without a clock) has none."""
    record = random_record("morris", 3)
    for index, ply in enumerate(record.moves):
        ply.clock_ms = None if index % 5 == 4 else 10_000 - 37 * index
    text = records.write_game(record, {"Event": "clocks"})
    assert "[%clk 0:00:10]" in text and "[%clk 0:00:09.963]" in text
    [game] = records.parse_games(text, "c.pgn")
    back = replay.to_record(game)
    assert [m.clock_ms for m in back.moves] == [m.clock_ms for m in record.moves]
    assert essentials(back) == essentials(record)
    assert records.write_game(back, records.context_tags(game)) == text


def test_every_ending_has_its_pgn_termination_beside_ours():
    """specs/records.md §6: ``Termination`` PGN's value, ``ArbiterTermination`` ours."""
    endings = records.RULE_TERMINATIONS | records.MATCH_TERMINATIONS
    assert set(records.STANDARD_TERMINATIONS) == endings
    assert set(records.STANDARD_TERMINATIONS.values()) == {
        "normal", "time forfeit", "rules infraction", "abandoned", "adjudication"}
    forfeit = random_record("troll", 2, stop_early=True)
    tags = dict(records.record_tags(forfeit))
    assert (tags["Termination"], tags["ArbiterTermination"]) == ("time forfeit", "time-forfeit")
    assert list(tags).index("ArbiterTermination") == list(tags).index("Termination") + 1
    [game] = records.parse_games(records.write_game(forfeit), "f.pgn")
    assert replay.replay(game).termination == "time-forfeit"
    assert replay.to_record(game).termination == "time-forfeit"
    finished = random_record("atoll", 1)
    tags = dict(records.record_tags(finished))
    assert (tags["Termination"], tags["ArbiterTermination"]) == ("normal", finished.termination)
    with pytest.raises(ValueError, match="unknown termination 'resigned'"):
        records.record_tags(GameRecord("troll", "a", "b", "1-0", "resigned", ""))


def tagged_game(moves: str, result: str, **tags: str) -> str:
    head = "".join(f'[{name} "{value}"]\n' for name, value in {"Game": "troll", **tags}.items())
    return f"{head}\n{moves} {result}\n"


@pytest.mark.parametrize("result, termination, ours", [
    ("1-0", "abandoned", "crash"), ("0-1", "Abandoned", "crash"),
    ("1/2-1/2", "adjudication", "adjudicated-draw"), ("0-1", "adjudication", "adjudicated-resign"),
    ("1-0", "time forfeit", "time-forfeit"), ("1-0", "rules infraction", "illegal-move"),
])
def test_pgn_termination_values_alone_are_read_as_our_endings(result, termination, ours):
    """specs/records.md §6: a file of another program says only PGN's value."""
    [game] = records.parse_games(tagged_game("d5 e4 c3", result, Termination=termination), "p.pgn")
    assert replay.replay(game).ok
    assert replay.to_record(game).termination == ours


def test_termination_tags_that_disagree_or_are_unknown_are_errors():
    """specs/records.md §6, §7 point 1: both tags named, with their lines."""
    report = verdict(tagged_game("d5 e4 c3", "1-0", Termination="normal",
                                 ArbiterTermination="time-forfeit"))
    assert report.kind == "tag" and report.error == (
        "t.pgn:2: game 1: tag Termination 'normal' disagrees with ArbiterTermination "
        "'time-forfeit' (line 3), whose PGN value is 'time forfeit'")
    report = verdict(tagged_game("d5 e4 c3", "1-0", ArbiterTermination="time forfeit"))
    assert report.kind == "tag" and report.error is not None
    assert report.error.startswith("t.pgn:2: game 1: tag ArbiterTermination 'time forfeit' is not "
                                   "a known reason")
    report = verdict(tagged_game("d5 e4 c3", "0-1", Termination="time forfeit",
                                 ArbiterTermination="time-forfeit"))  # black to move lost
    assert report.kind == "result" and "contradicts Termination 'time-forfeit'" in str(report.error)
    winning = "d4 a5 e4 d7 b6 e2 e5 e3 c8 b7 b4 f5 c4 b5 e1 a3 b8"
    report = verdict(tagged_game(winning, "1-0", Termination="normal", ArbiterTermination="no-moves"))
    assert report.error == ("t.pgn:3: game 1: tag ArbiterTermination 'no-moves' but the final "
                            "position ends by connection")
    assert verdict(tagged_game(winning, "1-0", Termination="normal",
                               ArbiterTermination="connection")).ok


def test_files_written_before_clock_comments_still_replay_and_import(tmp_path):
    """An export of the arbiter before clock comments and ArbiterTermination
    (``Termination`` then held our reason) replays and imports, in both
    forms; exported again it says the same endings in the two tags."""
    old_text = OLD_EXPORT.with_suffix(".pgn").read_text()
    assert "[%clk" not in old_text and "ArbiterTermination" not in old_text
    old = records.parse_games(old_text, "old.pgn")
    for suffix in (".pgn", ".jsonl"):
        path = OLD_EXPORT.with_suffix(suffix)
        run = invoke("replay", path)
        assert run.returncode == 0 and run.stdout.endswith("10 games: 10 OK, 0 bad\n"), run.stdout
        db = tmp_path / f"old{suffix}.db"
        imported = invoke("import", path, "--db", db)
        assert imported.returncode == 0, imported.stderr
        again = records.parse_games(invoke("export", "--db", db).stdout, "again.pgn")
        # (the import groups the games by game and tournament: compared as sets)
        assert sorted(ending_of(g, "ArbiterTermination") for g in again) == sorted(
            ending_of(g, "Termination") for g in old)
        assert sorted(ending_of(g, "Termination") for g in again) == sorted(
            (moves, records.standard_termination(ending)) for moves, ending in
            (ending_of(g, "Termination") for g in old))
        clocks = [m.data.clock_ms for g in again for m in g.moves if m.data is not None]
        if suffix == ".pgn":  # the old text had no clocks to give
            assert clocks and set(clocks) == {None}
        else:  # the JSONL record held every ply's clock
            assert None not in clocks[:10]


def ending_of(game: records.ParsedGame, tag: str) -> tuple[str, str]:
    """A game's moves and the value of its tag ``tag``."""
    return " ".join(m.text for m in game.moves), game.tags[tag]

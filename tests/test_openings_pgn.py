"""Openings from a PGN file of games, cut to N plies (specs/tournament.md
§Openings: ``--openings FILE.pgn --opening-plies N``, as cutechess-cli's and
fastchess's ``-openings file=FILE format=pgn plies=N``).

The reader is pure (tested in-process); the flags are tested through real
matches of the sample engines into real databases, and our own export is
read back as a book."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli import invoke

from arbiter.config import ConfigError, read_openings
from arbiter.games import get_game
from arbiter.schedule import OpeningError, ScheduleError, is_pgn_openings, pgn_openings

TROLL = get_game("troll")
MORRIS = get_game("morris")
PYTHON = sys.executable
RANDOM = f"cmd={PYTHON} arg=-m arg=sample_engines.random name=random"
GREEDY = f"cmd={PYTHON} arg=-m arg=sample_engines.greedy name=greedy"

#: three Troll games as people and programs write them: tags or none, numbers
#: or none, comments, a variation, a position string, an unfinished result
BOOK = """\
% a book for the tests
[Event "book"]
[Game "troll"]

1. d5 {our book} e4 2. c3 (2. c4 b6) f6 3. b6 *

1. D4 a5 2. E4 1/2-1/2

[Game "Troll"]
[StartPosition "{fen}"]

c3 {+0.10/1 0.05s [%clk 0:00:09.9]} f6 *
"""


def book_text() -> str:
    return BOOK.replace("{fen}", TROLL.position(None, ["d5", "e4"]).fen())


def test_each_game_is_an_opening_from_its_start_position_with_its_moves():
    openings = pgn_openings(TROLL, book_text(), "book.pgn")
    assert [(o.fen, o.moves) for o in openings] == [
        (None, ("d5", "e4", "c3", "f6", "b6")),
        (None, ("d4", "a5", "e4")),  # canonical spelling
        (TROLL.position(None, ["d5", "e4"]).fen(), ("c3", "f6")),
    ]
    assert [o.source for o in openings] == ["book.pgn:2", "book.pgn:7", "book.pgn:9"]


@pytest.mark.parametrize("plies, lengths", [(0, [0, 0, 0]), (2, [2, 2, 2]), (4, [4, 3, 2]),
                                            (None, [5, 3, 2])])
def test_opening_plies_cut_every_opening(plies, lengths):
    openings = pgn_openings(TROLL, book_text(), "book.pgn", plies)
    assert [len(o.moves) for o in openings] == lengths
    assert openings[2].fen is not None  # a cut keeps the start position


@pytest.mark.parametrize("text, message", [
    ('[Game "morris"]\n\nd7 *\n', "b.pgn:1: game 1: a game of 'morris', not of troll"),
    ('1. d5 e4\n\n[Game "troll"]\n\nd5 *\n', "b.pgn:3: game 1: tag Game inside the movetext"),
    ("1. d5 e4 *\n\n1. d5 d5 *\n", "b.pgn:3: game 2: ply 2: illegal move 'd5'"),
    ('[StartPosition "nonsense"]\n\n*\n', "b.pgn:1: game 1: tag StartPosition:"),
    ('[FEN "x"]\n[StartPosition "y"]\n\n*\n', "b.pgn:1: game 1: tags StartPosition and FEN"),
    ("% only an escape line\n", "b.pgn: no games in the file"),
])
def test_bad_books_name_the_file_the_line_and_the_game(text, message):
    with pytest.raises(ScheduleError) as exc:
        pgn_openings(TROLL, text, "b.pgn")
    assert str(exc.value).startswith(message), str(exc.value)


def test_a_book_of_whole_games_needs_fewer_plies():
    """A finished game is no opening: the message says what to give."""
    won = "d4 a5 e4 d7 b6 e2 e5 e3 c8 b7 b4 f5 c4 b5 e1 a3 b8"
    text = f"{won} 1-0\n"
    with pytest.raises(OpeningError, match=r"already over after this opening \(1-0, connection\): "
                                           r"give --opening-plies fewer than 17"):
        pgn_openings(TROLL, text, "b.pgn")
    assert len(pgn_openings(TROLL, text, "b.pgn", 16)[0].moves) == 16


def test_which_files_are_read_as_pgn(tmp_path):
    """§Openings: ``*.pgn``, or a first line that is a tag; a text book whose
    name ends otherwise stays a text book, and its lines are cut too."""
    assert is_pgn_openings("BOOK.PGN", "d5 e4")
    assert is_pgn_openings("book.txt", "# a comment\n\n  [Game \"troll\"]\n\n1. d5 *\n")
    assert not is_pgn_openings("book.txt", "# [Game \"troll\"]\nd5 e4 c3\n")
    text = tmp_path / "book.txt"
    text.write_text("d5 e4 c3\nf6 e6\n")
    assert [o.moves for o in read_openings("troll", str(text), 1)] == [("d5",), ("f6",)]
    tagged = tmp_path / "tagged.book"
    tagged.write_text(book_text())
    assert len(read_openings("troll", str(tagged))) == 3
    with pytest.raises(ConfigError, match=r"tagged.book:3: game 1: a game of 'troll', not of morris"):
        read_openings("morris", str(tagged))
    tagged.write_text("[Event \"no Game tag\"]\n\n1. a2 *\n")
    with pytest.raises(ConfigError, match=r"tagged.book:3: game 1: ply 1: illegal move 'a2'"):
        read_openings("morris", str(tagged))  # not a Morris move


def stored_games(db: Path, tournament: int = 1) -> list[dict]:
    """The records of a tournament's games, in schedule order (its JSONL export)."""
    run = invoke("export", "--db", db, "--tournament", tournament, "--format", "jsonl")
    assert run.returncode == 0, run.stderr
    return [json.loads(line)["record"] for line in run.stdout.splitlines()]


def test_a_match_plays_the_books_games_cut_to_n_plies_and_resume_keeps_them(tmp_path):
    """Each game pair plays one game of the book, both colours, its first N
    plies as the opening; the cut openings define the tournament."""
    book = tmp_path / "book.pgn"
    book.write_text(book_text())
    db = tmp_path / "m.db"
    args = ("match", "troll", RANDOM, GREEDY, "--tc", "depth=1", "--db", db, "--plain",
            "--openings", book)
    run = invoke(*args, "--opening-plies", "3", "--games", "6")
    assert run.returncode == 0, run.stderr
    played = [(g["fen"], g["opening_moves"]) for g in stored_games(db)]
    fen = TROLL.position(None, ["d5", "e4"]).fen()
    assert played == [(None, ["d5", "e4", "c3"])] * 2 + [(None, ["d4", "a5", "e4"])] * 2 + [
        (fen, ["c3", "f6"])] * 2
    again = invoke(*args, "--opening-plies", "3", "--games", "6")
    assert again.returncode == 0 and "already finished" in again.stderr
    other = invoke(*args, "--opening-plies", "1", "--games", "2")  # another N: another tournament
    assert other.returncode == 0, other.stderr
    assert [g["opening_moves"] for g in stored_games(db, 2)] == [["d5"], ["d5"]]
    resumed = invoke("tournament", "--resume", "1", "--db", db, "--opening-plies", "2")
    assert resumed.returncode == 2 and "drop --opening-plies" in resumed.stderr
    alone = invoke("match", "troll", RANDOM, GREEDY, "--opening-plies", "2", "--db", db)
    assert alone.returncode == 2 and "give --openings FILE too" in alone.stderr


def test_our_own_export_is_a_book(tmp_path):
    """A tournament's export read back as openings (the games' first plies),
    from a config file's keys."""
    db = tmp_path / "t.db"
    run = invoke("match", "morris", RANDOM, GREEDY, "--games", "2", "--tc", "depth=1",
                 "--maxplies", "20", "--db", db, "--plain")
    assert run.returncode == 0, run.stderr
    (tmp_path / "book.pgn").write_text(invoke("export", "--db", db).stdout)
    (tmp_path / "run.toml").write_text(
        'game = "morris"\nengine = ["random", "greedy"]\ngames = 4\ntc = "depth=1"\n'
        'maxplies = 30\nopenings = "book.pgn"\nopening_plies = 4\ndb = "book.db"\n')
    run = invoke("tournament", tmp_path / "run.toml", "--plain")
    assert run.returncode == 0, run.stderr
    source = stored_games(db)
    played = stored_games(tmp_path / "book.db")
    assert [g["opening_moves"] for g in played] == [
        [m["move"] for m in source[n]["moves"][:4]] for n in (0, 0, 1, 1)]

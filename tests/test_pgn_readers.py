"""Records that a third-party PGN reader can read (specs/records.md §2, §3).

python-chess (a test-only dependency) reads a real export: short
tournaments and matches of all four games, a game from a position string
given by an openings file, and every ending the bad engines provoke cheaply.
Its reader must reach every game's movetext (a ``FEN`` tag holding our
position string once made it skip the game), see each move's comment, the
closing comment and the result, read ``TimeControl`` in PGN's syntax, and
read two exports concatenated (``cat a.pgn b.pgn``) as the games of both.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from cli import PROCESS_TIMEOUT, invoke, start

from arbiter import records
from arbiter.games import get_game

pytest.importorskip("chess")
import chess.pgn as chess_pgn  # noqa: E402  (after the skip: a test-only dependency)

PYTHON = sys.executable
BAD = Path(__file__).parent / "bad_engines"
RANDOM = f"cmd={PYTHON} arg=-m arg=sample_engines.random name=random"
GREEDY = f"cmd={PYTHON} arg=-m arg=sample_engines.greedy name=greedy"


def bad(script: str, *args: str, name: str | None = None) -> str:
    extra = "".join(f" arg={arg}" for arg in args)
    return f"cmd={PYTHON} arg={BAD / script}{extra} name={name or Path(script).stem}"


class Collector(chess_pgn.BaseVisitor["Collector"]):
    """What a PGN reader sees of a game: its tags, every comment, the
    result, and each error it met (none is expected)."""

    def begin_game(self) -> None:
        self.headers: dict[str, str] = {}
        self.comments: list[str] = []
        self.tokens: list[str] = []
        self.outcome: str | None = None
        self.errors: list[str] = []

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        self.headers[tagname] = tagvalue

    def begin_parse_san(self, board, san: str) -> chess_pgn.SkipType:
        self.tokens.append(san)  # our moves are not chess moves: seen, not parsed
        return chess_pgn.SKIP

    def visit_comment(self, comment: str) -> None:
        self.comments.append(" ".join(comment.split()))

    def visit_result(self, result: str) -> None:
        self.outcome = result

    def handle_error(self, error: Exception) -> None:
        self.errors.append(str(error))

    def result(self) -> Collector:
        return self


def read_with_python_chess(text: str) -> list[Collector]:
    handle = io.StringIO(text)
    games = []
    while (game := chess_pgn.read_game(handle, Visitor=Collector)) is not None:
        games.append(game)
    return games


def run(*args) -> None:
    result = invoke(*args)
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def export_db(tmp_path_factory) -> Path:
    """A real database: every game, a position-string opening, every ending."""
    where = tmp_path_factory.mktemp("readers")
    db = where / "all.db"
    # the hung engine's game (a stall: its stop timeout, then its shutdown, about 8 s of
    # waiting) in a process of its own, into the same database, while the rest play here
    hung = start("match", "troll", bad("hang_go.py"), RANDOM, "--games", "1", "--tc", "depth=1",
                 "--stall", "0.5", "--db", db, "--plain")
    try:
        for game in ("troll", "atoll", "morris", "talisman"):  # rule endings (and max-plies, maybe)
            run("match", game, RANDOM, GREEDY, "--games", "2", "--tc", "depth=1",
                "--maxplies", "30" if game == "talisman" else "400", "--db", db, "--plain")
        # a max-plies ending for certain: a Troll game needs more than 4 plies to end (none of
        # 3000 random playouts ended within 10)
        run("match", "troll", RANDOM, GREEDY, "--games", "1", "--tc", "depth=1", "--maxplies", "4",
            "--db", db, "--plain")
        opening = get_game("atoll").start()
        for _ in range(3):
            opening = opening.play(sorted(opening.legal_moves())[0])
        openings = where / "openings.txt"
        openings.write_text(f"{opening.fen()}\n")
        run("tournament", "--game", "atoll", "-e", RANDOM, "-e", GREEDY, "--games", "2",
            "--openings", openings, "--tc", "depth=1", "--db", db, "--plain")
        # one game per bad engine: its ending is the same in either colour
        for engine, tc in [(bad("illegal.py"), "10+0.1"), (bad("garbage.py", "empty"), "10+0.1"),
                           (bad("crash.py"), "10+0.1"), (bad("slow.py", "0.5"), "st=0.1")]:
            run("match", "troll", engine, RANDOM, "--games", "1", "--tc", tc, "--stall", "0.5",
                "--db", db, "--plain")
        _, err = hung.communicate(timeout=PROCESS_TIMEOUT)
    finally:  # a failure above leaves no process behind
        if hung.poll() is None:
            hung.kill()
            hung.communicate()
    assert hung.returncode == 0, err
    return db


@pytest.fixture(scope="module")
def export(export_db) -> str:
    """The PGN export of :func:`export_db`."""
    exported = invoke("export", "--db", export_db)
    assert exported.returncode == 0, exported.stderr
    return exported.stdout


def test_the_export_holds_every_game_an_opening_and_every_ending(export):
    """The fixture is what it claims: the check that the rest means something."""
    ours = records.parse_games(export, "export.pgn")
    assert {g.tags["Game"] for g in ours} == {"troll", "atoll", "morris", "talisman"}
    assert any(records.START_TAG in g.tags for g in ours)
    endings = {g.tags[records.ARBITER_TERMINATION] for g in ours}
    assert {"max-plies", "illegal-move", "malformed-bestmove", "crash", "time-forfeit",
            "stall"} <= endings
    assert endings & {"connection", "no-moves", "blocked", "fewer-than-three"}


def test_python_chess_reads_every_game_of_an_export(export):
    """specs/records.md §3: our position string is not in a FEN tag, so a
    chess reader reads the movetext of every game."""
    ours = records.parse_games(export, "export.pgn")
    theirs = read_with_python_chess(export)
    assert len(theirs) == len(ours)
    for mine, seen in zip(ours, theirs, strict=True):
        assert seen.errors == [], (mine.tags, seen.errors)
        assert seen.headers == mine.tags
        assert seen.outcome == mine.result == mine.tags["Result"]
        closing = [mine.closing_comment] if mine.closing_comment else []
        assert len(seen.comments) == len(mine.moves) + len(closing)
        assert seen.comments[len(mine.moves):] == closing
        for name in ("TimeControl", "WhiteTimeControl", "BlackTimeControl"):
            if name in seen.headers and seen.headers[name] != "?":
                chess_pgn.parse_time_control(seen.headers[name])  # PGN's syntax: no error


def test_python_chess_reads_each_moves_clock_and_time_used(export, export_db):
    """specs/records.md §4: python-chess's own readers of ``[%clk]`` and
    ``[%emt]`` give each ply's clock and think time as stored in the
    database; ``Termination`` holds PGN's standard value (§6)."""
    lines = invoke("export", "--db", export_db, "--format", "jsonl").stdout.splitlines()
    stored = [json.loads(line)["record"] for line in lines]
    theirs = read_with_python_chess(export)
    assert len(theirs) == len(stored)
    clocked = 0
    for seen, record in zip(theirs, stored, strict=True):
        book = len(record["opening_moves"])
        comments = seen.comments[book:book + len(record["moves"])]
        for comment, ply in zip(comments, record["moves"], strict=True):
            node = chess_pgn.Game()
            node.comment = comment
            assert node.emt() == ply["time_ms"] / 1000, comment
            if ply["clock_ms"] is None:
                assert node.clock() is None, comment
            else:
                assert node.clock() == ply["clock_ms"] / 1000, comment
                clocked += 1
        assert seen.headers["Termination"] == records.standard_termination(record["termination"])
        assert seen.headers["ArbiterTermination"] == record["termination"]
    assert clocked > 0  # the games at 10+0.1 had clocks
    assert {seen.headers["Termination"] for seen in theirs} == {
        "normal", "time forfeit", "rules infraction", "abandoned", "adjudication"}


def test_concatenated_exports_read_as_both(export, tmp_path):
    """specs/records.md §2: an export ends with a blank line, so ``cat a b``
    is a record file, for our reader and for python-chess."""
    ours = records.parse_games(export, "export.pgn")
    (tmp_path / "a.pgn").write_text(export)
    (tmp_path / "b.pgn").write_text(export)
    both = (tmp_path / "a.pgn").read_text() + (tmp_path / "b.pgn").read_text()
    assert export.endswith("\n\n")
    again = records.parse_games(both, "both.pgn")
    assert [g.tags for g in again] == [g.tags for g in ours] * 2
    theirs = read_with_python_chess(both)
    assert len(theirs) == 2 * len(ours)
    assert all(not game.errors and game.outcome for game in theirs)
    (tmp_path / "both.pgn").write_text(both)
    replay = invoke("replay", tmp_path / "both.pgn")
    assert replay.returncode == 0, replay.stdout
    assert replay.stdout.endswith(f"{2 * len(ours)} games: {2 * len(ours)} OK, 0 bad\n")


@pytest.mark.parametrize("ours, pgn", [
    ("10+0.1", "10+0.1"), ("40/60+0.5", "40/60+0.5"), ("40/60", "40/60"), ("1:30+1", "90+1"),
    ("60", "60"), ("60+1,depth=12", "60+1"), ("inf", "-"), ("depth=8", "-"),
    ("nodes=1000", "-"), ("st=2", "?"), ("0.5+0.05", "?"), (None, "?"),
])
def test_time_controls_in_pgn_syntax(ours, pgn):
    """specs/records.md §3: PGN's TimeControl where PGN has a form (its
    seconds are whole), ``-`` without a clock, ``?`` where it has none."""
    assert records.pgn_time_control(ours) == pgn
    parsed = chess_pgn.parse_time_control(pgn)
    if pgn == "-":
        assert parsed.type == chess_pgn.TimeControlType.UNLIMITED
    elif pgn != "?":
        part = parsed.parts[0]
        assert (part.moves, part.time) == ((40, 60) if pgn.startswith("40/") else
                                           (0, int(pgn.split("+")[0])))

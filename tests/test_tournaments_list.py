"""``arbiter tournaments``: a header row and fixed columns (specs/tournament.md
§Listing and deleting), whatever the names hold."""

from __future__ import annotations

import sys

from cli import invoke
from rich.cells import cell_len

from arbiter.cli.standings import LIST_NAME_WIDTH, tournament_table

PYTHON = sys.executable
RANDOM = f"cmd={PYTHON} arg=-m arg=sample_engines.random name=random"
GREEDY = f"cmd={PYTHON} arg=-m arg=sample_engines.greedy name=greedy"
HEADER = ("ID", "NAME", "GAME", "FORMAT", "CREATED", "GAMES", "STATUS")


def row(number: int, name: str, **extra) -> dict:
    return {"id": number, "name": name, "game": "troll", "format": "round-robin", "done": 2,
            "total_games": 2, "created": "2024-05-01T10:22:03.118Z", "status": "finished",
            "running_now": False, **extra}


def column_starts(line: str, cells: list[str]) -> list[int]:
    """Where (in terminal cells) each of ``cells`` starts in ``line``, found left to right."""
    starts, at = [], 0
    for cell in cells:
        at = line.index(cell, at)
        starts.append(cell_len(line[:at]))
        at += len(cell)
    return starts


def test_every_column_starts_at_the_same_place_on_every_line():
    """Names of every width (wide characters, a control character, one
    longer than the column) leave the columns where the header says."""
    long = "a tournament with a name much longer than the column"
    rows = [row(1, "first"), row(12, "名前のトーナメント"), row(3, "tab\there\nnewline"),
            row(104, long, status="running", running_now=False, format="gauntlet", done=7,
                total_games=120)]
    lines = tournament_table(rows)
    assert len(lines) == 5 and lines[0].split() == list(HEADER)
    shown_long = long[:LIST_NAME_WIDTH - 1] + "…"
    expected = [list(HEADER),
                ["1", "first", "troll", "round-robin", "2024-05-01 10:22", "2/2 games", "finished"],
                ["12", "名前のトーナメント", "troll", "round-robin", "2024-05-01 10:22", "2/2 games", "finished"],
                ["3", "tab?here?newline", "troll", "round-robin", "2024-05-01 10:22", "2/2 games",
                 "finished"],
                ["104", shown_long, "troll", "gauntlet", "2024-05-01 10:22", "7/120 games",
                 "running, but no run is alive (killed?): run it again to resume"]]
    header_starts = column_starts(lines[0], list(HEADER))
    for line, cells in zip(lines[1:], expected[1:], strict=True):
        starts = column_starts(line, cells)
        # the ID is right-aligned under its header; every other column starts with its header's
        assert starts[0] + cell_len(cells[0]) == header_starts[0] + len("ID"), line
        assert starts[1:] == header_starts[1:], (line, starts, header_starts)
        assert "\n" not in line and "\t" not in line
    assert all(cell_len(line.split("  troll")[0]) == cell_len(lines[1].split("  troll")[0])
               for line in lines[1:])


def test_the_listing_of_a_database(tmp_path):
    db = tmp_path / "t.db"
    for name in ("short", "x" * 40):
        run = invoke("match", "troll", RANDOM, GREEDY, "--games", "2", "--tc", "depth=1",
                     "--name", name, "--db", db, "--plain")
        assert run.returncode == 0, run.stderr
    listing = invoke("tournaments", "--db", db)
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines[0].split() == list(HEADER) and len(lines) == 3
    assert lines[2].split()[:2] == ["2", "x" * (LIST_NAME_WIDTH - 1) + "…"]
    assert [line.index("finished") for line in lines[1:]] == [lines[0].index("STATUS")] * 2
    assert invoke("standings", "--list", "--db", db).stdout == listing.stdout
    for number in (1, 2):
        assert invoke("tournaments", "delete", number, "--yes", "--db", db).returncode == 0
    empty = invoke("tournaments", "--db", db)
    assert empty.returncode == 0 and empty.stdout == "" and "no tournaments in" in empty.stderr

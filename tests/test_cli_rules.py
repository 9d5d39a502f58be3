"""The rules CLI (`arbiter games|moves|perft`), in-process (tests/cli.py),
and the command line's start-up in a real process: a light command imports
only what it needs."""

from __future__ import annotations

import json

import pytest
import typer
from cli import arbiter, invoke

from arbiter import cli as arbiter_cli
from arbiter.games import GAME_NAMES, get_game, perft

#: what `arbiter games` must not import: each belongs to heavier commands
#: (engines and their event loop, the database, tables, tournaments, records)
HEAVY_MODULES = ("trio", "sqlite_utils", "rich.console", "rich.table", "arbiter.engine",
                 "arbiter.match", "arbiter.store", "arbiter.tournament", "arbiter.records",
                 "arbiter.check",
                 # typer 0.29 imports it to convert any parameter (pyproject.toml keeps 0.28)
                 "pydantic")


def test_games_lists_every_game_with_a_description_in_a_real_process_importing_no_engine_machinery():
    run = arbiter("games", env={"PYTHONPROFILEIMPORTTIME": "1"})  # -X importtime: one line per module
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert [line.split()[0] for line in lines] == list(GAME_NAMES)
    assert all(len(line.split()) > 2 for line in lines)
    imported = {line.rsplit("|", 1)[1].strip() for line in run.stderr.splitlines()
                if line.startswith("import time:")}
    assert {"arbiter.cli.rules", "arbiter.games"} <= imported
    assert not imported & set(HEAVY_MODULES), sorted(imported & set(HEAVY_MODULES))


def test_every_command_is_registered_by_the_module_the_lazy_group_imports_for_it():
    for module in set(arbiter_cli.COMMAND_MODULES.values()):
        __import__(f"arbiter.cli.{module}")
    registered = {info.name or typer.main.get_command_name(info.callback.__name__):
                  info.callback.__module__ for info in arbiter_cli.app.registered_commands
                  if info.callback is not None}
    assert registered == {name: f"arbiter.cli.{module}"
                          for name, module in arbiter_cli.COMMAND_MODULES.items()}


def test_help_lists_every_command_and_a_typo_gets_suggestions():
    run = invoke("--help")
    assert run.returncode == 0, run.stderr
    rows = [line[2:] for line in run.stdout.splitlines() if line.startswith("│ ")]
    listed = [row.split()[0] for row in rows if row[:1].isalpha()]  # not a wrapped line
    assert listed == list(arbiter_cli.COMMAND_MODULES)
    run = invoke("gmes")
    assert run.returncode == 2
    assert "No such command 'gmes'. Did you mean 'games', 'moves'?" in run.stderr


@pytest.mark.parametrize("name", GAME_NAMES)
def test_moves_json_matches_the_referee(name):
    game = get_game(name)
    start = game.start()
    first = sorted(start.legal_moves())[0]
    run = invoke("moves", name, "--moves", first, "--json")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    after = start.play(first)
    assert data == {
        "game": name,
        "fen": after.fen(),
        "to_move": after.to_move.value,
        "legal": sorted(after.legal_moves()),
        "result": None,
        "termination": None,
    }


@pytest.mark.parametrize("name", GAME_NAMES)
def test_an_illegal_move_names_the_ply_and_the_move(name):
    start = get_game(name).start()
    first = sorted(start.legal_moves())[0]
    run = invoke("moves", name, "--moves", f"{first} {first}")
    assert run.returncode == 2
    assert "ply 2" in run.stderr
    assert repr(first) in run.stderr
    assert "Traceback" not in run.stderr


def test_unknown_game_and_bad_fen_are_clear_errors():
    run = invoke("moves", "chess")
    assert run.returncode == 2 and "unknown game 'chess'" in run.stderr
    run = invoke("moves", "troll", "--fen", "not a position")
    assert run.returncode == 2 and "invalid position" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("name", GAME_NAMES)
def test_perft_prints_the_count_last(name):
    run = invoke("perft", name, "2", "--divide")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    expected = perft(get_game(name).start(), 2)
    assert lines[-1] == str(expected)
    assert sum(int(line.split(": ")[1]) for line in lines[:-1]) == expected

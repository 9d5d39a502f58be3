"""The rules CLI (`arbiter games|moves|perft`), run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from arbiter.games import GAME_NAMES, get_game, perft


def arbiter(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arbiter", *args], capture_output=True, text=True, timeout=120
    )


def test_games_lists_every_game_with_a_description():
    run = arbiter("games")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert [line.split()[0] for line in lines] == list(GAME_NAMES)
    assert all(len(line.split()) > 2 for line in lines)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_moves_json_matches_the_referee(name):
    game = get_game(name)
    start = game.start()
    first = sorted(start.legal_moves())[0]
    run = arbiter("moves", name, "--moves", first, "--json")
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
    run = arbiter("moves", name, "--moves", f"{first} {first}")
    assert run.returncode == 2
    assert "ply 2" in run.stderr
    assert repr(first) in run.stderr
    assert "Traceback" not in run.stderr


def test_unknown_game_and_bad_fen_are_clear_errors():
    run = arbiter("moves", "chess")
    assert run.returncode == 2 and "unknown game 'chess'" in run.stderr
    run = arbiter("moves", "troll", "--fen", "not a position")
    assert run.returncode == 2 and "invalid position" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("name", GAME_NAMES)
def test_perft_prints_the_count_last(name):
    run = arbiter("perft", name, "2", "--divide")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    expected = perft(get_game(name).start(), 2)
    assert lines[-1] == str(expected)
    assert sum(int(line.split(": ")[1]) for line in lines[:-1]) == expected

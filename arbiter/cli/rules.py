"""Rules commands: ``games``, ``moves``, ``perft`` -- the referee on the command line."""

from __future__ import annotations

import json

import typer

from arbiter.games import (
    GameError,
    Position,
    all_games,
    get_game,
    perft,
    perft_divide,
    split_moves,
)

from .app import app, fail


def load_position(game_name: str, fen: str | None, moves: str | None) -> Position:
    """The position named on the command line, or a clear error (exit 2)."""
    try:
        game = get_game(game_name)
        return game.position(fen, split_moves(moves))
    except GameError as exc:
        fail(str(exc))


@app.command()
def games() -> None:
    """List the games with a one-line description."""
    for game in all_games():
        typer.echo(f"{game.name:<10} {game.description}")


@app.command()
def moves(
    game: str = typer.Argument(..., help="troll, atoll, morris or talisman"),
    fen: str | None = typer.Option(None, "--fen", help="start from this position string"),
    moves: str | None = typer.Option(None, "--moves", help='moves to play first, e.g. "d5 e4"'),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """The legal moves after a sequence of moves."""
    position = load_position(game, fen, moves)
    outcome = position.outcome()
    legal = sorted(position.legal_moves())
    if as_json:
        typer.echo(json.dumps({
            "game": position.game.name,
            "fen": position.fen(),
            "to_move": position.to_move.value,
            "legal": legal,
            "result": outcome.result if outcome else None,
            "termination": outcome.termination.value if outcome else None,
        }))
        return
    typer.echo(f"fen: {position.fen()}")
    typer.echo(f"to move: {position.to_move.value}")
    if outcome:
        typer.echo(f"result: {outcome.result} ({outcome.termination.value})")
    typer.echo(f"legal ({len(legal)}): {' '.join(legal)}")


@app.command("perft")
def perft_command(
    game: str = typer.Argument(..., help="troll, atoll, morris or talisman"),
    depth: int = typer.Argument(..., min=0, help="plies"),
    fen: str | None = typer.Option(None, "--fen"),
    moves: str | None = typer.Option(None, "--moves"),
    divide: bool = typer.Option(False, "--divide", help="print the count below each move"),
) -> None:
    """Count the legal move sequences of exactly DEPTH plies (last line: the count)."""
    position = load_position(game, fen, moves)
    if divide and depth >= 1:
        counts = perft_divide(position, depth)
        for move in sorted(counts):
            typer.echo(f"{move}: {counts[move]}")
        typer.echo(str(sum(counts.values())))
    else:
        typer.echo(str(perft(position, depth)))

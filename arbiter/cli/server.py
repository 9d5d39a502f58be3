"""Server commands: ``token`` (``specs/wire.md`` §Authentication).

``arbiter token add NAME`` prints a new token once; ``arbiter token list``
shows the tokens' names and times, never a secret; ``arbiter token revoke
NAME`` ends one.  One command with an action word, so that the command line
stays a flat list of commands (``tests/test_cli_rules.py``).
"""

from __future__ import annotations

import enum
import json
import sys

import typer

from arbiter.store import DEFAULT_DB
from arbiter.tokens import TokenError, TokenStore

from .app import app, fail


class TokenAction(enum.Enum):
    ADD = "add"
    LIST = "list"
    REVOKE = "revoke"


@app.command()
def token(
    action: TokenAction = typer.Argument(..., help="add NAME, list, or revoke NAME"),
    name: str | None = typer.Argument(None, help="the token's name (add, revoke)"),
    db: str = typer.Option(DEFAULT_DB, "--db", help="the results database"),
    as_json: bool = typer.Option(False, "--json", help="list: machine-readable output"),
) -> None:
    """Make, list or revoke the tokens remote engines connect with."""
    if (name is None) != (action is TokenAction.LIST):
        fail(f"token {action.value} takes a NAME" if name is None
             else "token list takes no NAME")
    try:
        with TokenStore(db) as tokens:
            if action is TokenAction.ADD:
                assert name is not None
                secret = tokens.add(name)
                typer.echo(secret)
                print(f"token {name!r} added; it is shown only this once", file=sys.stderr)
            elif action is TokenAction.REVOKE:
                assert name is not None
                tokens.revoke(name)
                typer.echo(f"token {name!r} revoked")
            else:
                _print_list(tokens.list(), as_json)
    except TokenError as exc:
        fail(str(exc))


def _print_list(rows: list[dict[str, str | None]], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        state = "active" if row["revoked"] is None else f"revoked {row['revoked']}"
        typer.echo(f"{row['name']}  created {row['created']}  {state}")

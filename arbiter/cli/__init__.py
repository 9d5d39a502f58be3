"""The ``arbiter`` command line (typer).

One module per area registers its commands on :data:`app`; nothing imports
this package.  Errors a user can cause (bad move, bad spec, bad file) are
reported as one clear line on stderr with a non-zero exit, never a traceback.

A command line imports only the module of the command it names
(:data:`COMMAND_MODULES`), so ``arbiter games`` starts without trio, SQLite,
rich tables or the match and tournament machinery.  ``--help``, and a name
that is no command (for the "did you mean" suggestion), import them all.
"""

from __future__ import annotations

import importlib
from typing import Any

import typer
from typer.core import TyperGroup

from . import rules  # noqa: F401  (light, and the group needs two commands to be a group)
from .app import app

__all__ = ["COMMAND_MODULES", "app"]

#: the module of this package that registers each command, in the order
#: ``arbiter --help`` lists them (tests/test_cli_rules.py checks it against
#: what the modules register)
COMMAND_MODULES: dict[str, str] = {
    "play": "play",
    "check": "check",
    "export": "records",
    "replay": "records",
    "show": "records",
    "import": "records",
    "games": "rules",
    "moves": "rules",
    "perft": "rules",
    "tournament": "tournament",
    "match": "tournament",
    "standings": "tournament",
    "demo": "tournament",
    "token": "server",
    "serve": "server",
    "connect": "server",
    "web": "web",
    "worker": "cluster",
}


def _import_commands(module: str | None) -> None:
    """Import ``module`` of this package (every command module when None):
    importing one registers its commands on :data:`app`."""
    for name in [module] if module is not None else dict.fromkeys(COMMAND_MODULES.values()):
        importlib.import_module(f"{__name__}.{name}")


class _LazyCommands(TyperGroup):
    """The top-level group, importing a command's module when the command is
    first looked up (typer builds the group from the commands registered so
    far, so the group adds the ones a late import registered)."""

    # ctx and the command are click's types, which typer vendors (typer._click)
    # since 0.2x and imported from click before: Any fits both.
    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands:
            self._add(COMMAND_MODULES.get(cmd_name))
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: Any) -> list[str]:
        self._add(None)
        known = [name for name in COMMAND_MODULES if name in self.commands]
        return known + [name for name in self.commands if name not in COMMAND_MODULES]

    def _add(self, module: str | None) -> None:
        _import_commands(module)
        self.commands.update(typer.main.get_group(app).commands)


app.info.cls = _LazyCommands  # what typer.Typer(cls=...) sets

"""The ``arbiter`` command line (typer).

One module per area registers its commands on :data:`app`; nothing imports
this package.  Errors a user can cause (bad move, bad spec, bad file) are
reported as one clear line on stderr with a non-zero exit, never a traceback.

A command line imports only the module of the command it names
(:data:`COMMAND_MODULES`), so ``arbiter games`` starts without trio, SQLite,
rich tables or the match and tournament machinery.  ``--help``, and a name
that is no command (for the "did you mean" suggestion), import them all.

Options of cutechess-cli and fastchess (``-concurrency 4``) are read before
typer parses a command's arguments (:mod:`arbiter.cli.compat`, one table).
"""

from __future__ import annotations

import copy
import importlib
import sys
from typing import Any

import typer
from rich.markup import escape
from typer.core import TyperArgument, TyperGroup

from . import (
    compat,
    rules,  # noqa: F401  (light, and the group needs two commands to be a group)
)
from .app import app, fail

__all__ = ["COMMAND_MODULES", "app"]

#: the module of this package that registers each command, in the order
#: ``arbiter --help`` lists them (tests/test_cli_rules.py checks it against
#: what the modules register)
COMMAND_MODULES: dict[str, str] = {
    "play": "play",
    "check": "check",
    "engine": "check",
    "export": "records",
    "replay": "records",
    "show": "records",
    "import": "records",
    "games": "rules",
    "moves": "rules",
    "perft": "rules",
    "tournament": "tournament",
    "match": "tournament",
    "standings": "standings",
    "ratings": "ratings",
    "demo": "tournament",
    "tournaments": "standings",
    "stop": "stop",
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
        for command in self.commands.values():
            plain_help(command)

    def get_params(self, ctx: Any) -> list[Any]:
        plain_help(self)
        return super().get_params(ctx)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """cutechess-cli and fastchess options with no command run one
        (:func:`arbiter.cli.compat.before_command`)."""
        return super().parse_args(ctx, _read_foreign(compat.before_command(args)))

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        """The command, and its arguments with the options of cutechess-cli
        and fastchess read as ours, before typer parses them
        (:func:`arbiter.cli.compat.translate`)."""
        name, command, rest = super().resolve_command(ctx, args)
        if command is None or name is None:
            return name, command, rest
        try:
            translation = compat.translate(name, rest, _option_values(command))
        except compat.CompatError as exc:
            fail(str(exc))
        return name, command, _read_foreign(translation)


def _read_foreign(translation: compat.Translation) -> list[str]:
    """The arguments of a translation, its notes said on stderr."""
    for note in translation.notes:
        print(f"arbiter: note: {note}", file=sys.stderr)
    return translation.args


def _option_values(command: Any) -> dict[str, bool]:
    """Each option name of ``command`` (``--games``, ``-e``, ``--reuse``)
    and whether it takes a value."""
    found = {"--help": False}
    for param in command.params:
        if getattr(param, "param_type_name", None) != "option":
            continue
        takes = not (getattr(param, "is_flag", False) or getattr(param, "count", False))
        for name in [*param.opts, *param.secondary_opts]:
            found[name] = takes
    return found


#: the value a help text shows for an option, by parameter name, where the
#: upper-cased name would say less (every other one: ``--tc TC``)
METAVARS = {"engine": "SPEC", "engines_file": "FILE", "db": "FILE", "pgn": "FILE", "log": "DIR",
            "openings": "FILE", "out": "FILE", "fen": "POSITION", "moves": "MOVES",
            "opening_plies": "N"}


def _no_type(*args: Any, **kwargs: Any) -> str:
    return ""


def plain_help(command: Any) -> None:
    """Help texts shown as written and without typer's type noise, for
    ``command`` and the commands of a sub-group (once each):

    * the texts are escaped for rich, so ``[engines.NAME]`` and
      ``[name=... arg=...]`` are shown, not taken for markup and dropped;
    * a flag shows no value (not ``<bool>``); any other parameter without
      its own metavar shows :data:`METAVARS` or its upper-cased name (not
      ``<list[str]>``), and an argument no type (not ``GAME <str>``)."""
    if getattr(command, "_plain_help", False):
        return
    command._plain_help = True
    if command.help:
        command.help = escape(command.help)
    for param in command.params:
        if getattr(param, "help", None):
            param.help = escape(param.help)
        if isinstance(param, TyperArgument):
            # typer's argument row adds its type ("GAME <str>") whatever the
            # metavar: it asks the parameter's type for it (a copy here, the
            # type objects are shared)
            param.type = copy.copy(param.type)
            param.type.get_metavar = _no_type  # type: ignore[method-assign]  # see above
        if param.metavar is not None:
            continue
        flag = getattr(param, "is_flag", False) or getattr(param, "count", False)
        param.metavar = "" if flag else METAVARS.get(param.name, (param.name or "VALUE").upper())
    help_option = command.get_help_option

    def plain_help_option(ctx: Any) -> Any:  # --help is made per call, outside params
        option = help_option(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = plain_help_option
    for sub in getattr(command, "commands", {}).values():
        plain_help(sub)


app.info.cls = _LazyCommands  # what typer.Typer(cls=...) sets

"""cutechess-cli's and fastchess's options on arbiter's command line
(``specs/tournament.md`` §cutechess-cli and fastchess options).

A user pastes ``-concurrency 4 -rounds 10 -games 2 -each tc=10+0.1 -pgnout
out.pgn -openings file=book.txt``.  Before typer parses a command's arguments
(``arbiter/cli/__init__.py``), :func:`translate` reads every single-dash
option of those tools: one we understand is rewritten into ours, with one
note line on stderr naming our option; one we cannot honour stops the command
with a message naming our option, or saying that we have none (exit 2).
Without a command, such options run ``arbiter tournament``
(:func:`before_command`).

The mapping is data, in one place: :data:`OPTIONS` (the command-line
options), :data:`ENGINE_KEYS` (the words of ``-engine`` and ``-each``), in
:mod:`arbiter.cli.compat_options` (re-exported here with
:func:`markdown_table`, which prints it for the spec).

Pure: no I/O but the notes :func:`translate` returns; typer is not imported.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from arbiter.cli.compat_options import (
    ENGINE_KEYS,
    OPTIONS,
    CompatError,
    Foreign,
    Takes,
    markdown_table,
)

__all__ = ["CompatError", "Takes", "Foreign", "OPTIONS", "ENGINE_KEYS", "translate",
           "before_command", "markdown_table", "NO_COMMAND"]

#: the command that options of those tools run when no command is given
NO_COMMAND = "tournament"


# --------------------------------------------------------------------------
# Rewriting a command line
# --------------------------------------------------------------------------

#: a token that is a foreign option's name: one dash, a letter, and more
_FOREIGN = re.compile(r"-[A-Za-z][A-Za-z0-9-]+")


def foreign_name(token: str) -> str | None:
    """The name of a single-dash long option (``-concurrency``), else None."""
    return token[1:] if _FOREIGN.fullmatch(token) else None


@dataclass
class Translation:
    """A command line rewritten: the arguments typer parses, and the notes."""

    args: list[str]
    notes: list[str] = field(default_factory=list)


def before_command(args: Sequence[str]) -> Translation:
    """The top-level arguments (before the command): ``-help`` and
    ``-version`` as ours, and foreign options without a command run
    :data:`NO_COMMAND`."""
    args = list(args)
    if not args:
        return Translation(args)
    if args[0] in ("-help", "-version", "-v"):  # -v: fastchess's
        return Translation(["--help" if args[0] == "-help" else "--version"] + args[1:])
    name = foreign_name(args[0])
    if name in OPTIONS:
        return Translation([NO_COMMAND] + args, [
            f"cutechess-cli/fastchess options without a command: running `arbiter {NO_COMMAND}`"])
    return Translation(args)


def translate(command: str, args: Sequence[str], options: Mapping[str, bool]) -> Translation:
    """``args`` of ``arbiter COMMAND`` with every foreign option read
    (:data:`OPTIONS`); ``options`` maps each of the command's own option
    names (``--games``, ``-e``) to whether it takes a value, so that values
    are never taken for options.  :class:`CompatError` for an option that is
    refused, unknown, missing its value, or that becomes one of ours the
    command does not have."""
    out: list[str] = []
    notes: list[str] = []
    index = 0
    while index < len(args):
        token = args[index]
        index += 1
        if token == "--":
            out += args[index - 1:]
            break
        if token in options or token.split("=", 1)[0] in options:
            out.append(token)
            if options.get(token) and index < len(args):  # its value, whatever it looks like
                out.append(args[index])
                index += 1
            continue
        name = foreign_name(token)
        if name is None or (name not in OPTIONS and token[:2] in options):
            out.append(token)  # an argument, or a short option with its value glued (-c4)
            continue
        foreign = OPTIONS.get(name)
        if foreign is None:
            raise CompatError(f"{token}: not an option of arbiter, cutechess-cli or fastchess "
                              f"(arbiter's have two dashes: `arbiter {command} --help`; the "
                              "cutechess-cli and fastchess ones it reads: specs/tournament.md "
                              "§cutechess-cli and fastchess options)")
        values, index = _values(foreign, args, index)
        ours, note = foreign.reading(values)
        _check_ours(command, token, ours, options, foreign.note)
        out += ours
        notes.append(_note(token, values, ours, note or foreign.note))
    return Translation(out, notes)


def _values(foreign: Foreign, args: Sequence[str], index: int) -> tuple[list[str], int]:
    """The values that follow a foreign option, and where the next token is."""
    if foreign.takes is Takes.ONE:
        if index >= len(args):
            raise CompatError(f"-{foreign.name} needs a value")
        return [args[index]], index + 1
    if foreign.takes is Takes.MAYBE_ONE:
        if index < len(args) and re.fullmatch(foreign.optional, args[index]):
            return [args[index]], index + 1
        return [], index
    if foreign.takes is Takes.WORDS:
        end = index
        while end < len(args) and not args[end].startswith("-"):
            end += 1
        if end == index:
            raise CompatError(f"-{foreign.name} needs its words (key=value ...)")
        return list(args[index:end]), end
    return [], index


def _check_ours(command: str, token: str, ours: list[str], options: Mapping[str, bool],
                note: str) -> None:
    """Each of our options in ``ours`` must be one of the command's."""
    for option in ours[:1] + [word for word in ours[1:] if word.startswith("--")]:
        if option in options:
            continue
        if command == "match" and option in ("-e", "--game", "--format"):
            note = ("`arbiter match GAME A B` takes the game and its two engines as arguments; "
                    "or use `arbiter tournament`")
        raise CompatError(f"{token} is {option} here, which `arbiter {command}` does not have"
                          + (f" ({note})" if note else "") + "; nothing was started")


def _note(token: str, values: list[str], ours: list[str], note: str) -> str:
    given = " ".join([token, *(shlex.quote(v) for v in values)])
    if ours:
        said = f"{given} read as {' '.join(shlex.quote(o) for o in ours)}"
    else:
        said = f"{given}: nothing to set"
    return f"{said} ({note})" if note else said

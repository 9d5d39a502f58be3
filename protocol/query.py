"""The answer to ``query``: what a ``response`` must say about a position (pure code).

``specs/protocol.md`` §query: ``query gameover``, ``query p1turn`` and
``query result`` are answered with ``true``/``false`` or
``p1win``/``p2win``/``draw``/``none``, where p1 is the side that moves first
in its game.  One home for that rule: the engine SDK answers with it, the
conformance checker compares an engine's answers with it.

The position is any referee position (``arbiter.games.Position``): only its
``game.first``, ``to_move`` and ``outcome()`` are read, so this module
imports nothing at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only for the annotation: protocol/ does not depend on the referee
    from arbiter.games import Position

__all__ = ["query_answer"]


def query_answer(position: Position | None, what: str) -> str:
    """The ``response`` word for ``query what`` in ``position`` (p1 = the side
    that moves first in its game).  Without a position (none was set yet) no
    game is over and none has a result."""
    if position is None:
        return "none" if what == "result" else "false"
    first = position.game.first
    if what == "p1turn":
        return "true" if position.to_move is first else "false"
    outcome = position.outcome()
    if what == "gameover":
        return "true" if outcome is not None else "false"
    if outcome is None:
        return "none"
    if outcome.winner is None:
        return "draw"
    return "p1win" if outcome.winner is first else "p2win"

"""The answer to ``query``: what a ``response`` must say about a position (pure code).

``specs/protocol.md`` §query: ``query gameover``, ``query p1turn`` and
``query result`` are answered with ``true``/``false`` or
``p1win``/``p2win``/``draw``/``none``, where p1 is the side that moves first
in its game.  One home for that rule: the engine SDK answers with it, the
conformance checker compares an engine's answers with it.

The position is any referee position (``arbiter.games.Position``), read
through the structural :class:`QueriedPosition`: only its ``game.first``,
``to_move`` and ``outcome()``, so protocol/ depends on no referee.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["query_answer", "QueriedPosition"]


class _Game(Protocol):
    @property
    def first(self) -> object: ...


class _Outcome(Protocol):
    @property
    def winner(self) -> object | None: ...


class QueriedPosition(Protocol):
    """What ``query`` reads of a position: whose turn, who moves first, the outcome."""

    @property
    def game(self) -> _Game: ...

    @property
    def to_move(self) -> object: ...

    def outcome(self) -> _Outcome | None: ...


def query_answer(position: QueriedPosition | None, what: str) -> str:
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

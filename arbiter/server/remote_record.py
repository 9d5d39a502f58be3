"""What the wire adds to a game with remote engines (``specs/wire.md``
§Clock fairness, §Disconnect and resume): before it, each remote engine
told which player it is (:func:`seat_remote_engines`); after it, each
remote ply's round trip and lag compensation, and the ``disconnect`` ending.

The record's additions are read from the engines' :class:`~arbiter.engine.socket_transport.SocketTransport`
after :func:`arbiter.match.play_game` returned, so the match itself knows
nothing of the network.
"""

from __future__ import annotations

from arbiter.engine import Engine
from arbiter.engine.socket_transport import SocketTransport
from arbiter.games import Color, Game
from arbiter.record import GameRecord, MatchTermination

__all__ = ["remote_transport", "seat_remote_engines", "settle_remote_record", "tell_game_over"]


def remote_transport(engine: Engine) -> SocketTransport | None:
    """The engine's socket transport, None for a local engine."""
    transport = engine.transport
    return transport if isinstance(transport, SocketTransport) else None


def seat_remote_engines(game: Game, white: Engine, black: Engine) -> None:
    """Before a game: tell each remote engine's transport whether it plays
    p1 (the game's first player), so that a search resumed after a drop
    gives back the time away on that engine's clock only (the other side's
    clock did not run)."""
    for color, engine in ((Color.WHITE, white), (Color.BLACK, black)):
        transport = remote_transport(engine)
        if transport is not None:
            transport.plays_p1 = color is game.first


def settle_remote_record(record: GameRecord, white: Engine, black: Engine) -> GameRecord:
    """``record`` with the lag of each remote ply (``rtt_ms``, ``comp_ms``)
    and, when the loser on time was a remote engine still disconnected,
    the termination ``disconnect``.  Changed in place and returned."""
    for color, engine in (("white", white), ("black", black)):
        transport = remote_transport(engine)
        if transport is None:
            continue
        plies = [ply for ply in record.moves if ply.color == color]
        for ply, (rtt, comp) in zip(plies, transport.lag, strict=False):
            ply.rtt_ms, ply.comp_ms = rtt, comp
        lost = record.result == ("0-1" if color == "white" else "1-0")
        if lost and transport.detached_since is not None \
                and record.termination == MatchTermination.TIME_FORFEIT.value:
            record.termination = MatchTermination.DISCONNECT.value
            record.termination_detail = (f"{record.white if color == 'white' else record.black} "
                                         "was disconnected and did not come back before its time "
                                         "ran out")
    return record


def tell_game_over(game: str, record: GameRecord, white: Engine, black: Engine) -> None:
    """A ``game_over`` frame to each remote engine of the game."""
    for engine in (white, black):
        transport = remote_transport(engine)
        if transport is not None:
            transport.game_over(game, record.result, record.termination,
                                record.termination_detail)

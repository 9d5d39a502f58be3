"""One game between two engines, refereed, clocked and recorded.

The rules of a game in progress are a pure state machine
(:mod:`arbiter.match.state`: events in, actions out, no I/O); the trio
driver (:mod:`arbiter.match.driver`) plays it against two engine processes.
The record of a finished game lives below both, in :mod:`arbiter.record`.
``specs/match.md`` says what a game is and how it ends.
"""

from arbiter.engine import EngineStartError
from arbiter.record import MatchTermination

from .driver import DEFAULT_TC, Player, play_engines, play_game

__all__ = ["play_game", "play_engines", "Player", "DEFAULT_TC", "MatchTermination", "EngineStartError"]

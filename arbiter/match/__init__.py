"""One game between two engines, refereed, clocked and recorded.

The rules of a game in progress are a pure state machine
(:mod:`arbiter.match.state`: events in, actions out, no I/O); the trio
driver (:mod:`arbiter.match.driver`) plays it against two engine processes.
The record of a finished game lives below both, in :mod:`arbiter.record`.
``specs/match.md`` says what a game is and how it ends.
"""

from arbiter.engine import EngineStartError
from arbiter.record import GameRecord, MatchTermination, MoveRecord

from .driver import DEFAULT_TC, Player, play_engines, play_game

# GameRecord and MoveRecord are re-exported for the modules that still import
# them from here; their home is arbiter.record (MoveRecord is now Ply).
__all__ = [
    "play_game", "play_engines", "Player", "DEFAULT_TC", "MatchTermination", "EngineStartError",
    "GameRecord", "MoveRecord",
]

"""What the server remembers of a remote engine's session from the lines it
sends it (pure: no I/O, no trio; the caller gives the times).

:class:`~arbiter.engine.socket_transport.SocketTransport` moves bytes; this
is what it needs to know of the UGI conversation going over them, for two
rules of ``specs/wire.md``:

- **clock fairness** (§Clock fairness): the game's
  :class:`~protocol.wire.LagQuota` (set from the game's first ``go``, reset
  by ``uginewgame``), the search in progress (when its ``go`` went), the
  time a ``bestmove`` is credited with (:meth:`RemoteSession.credit`) and
  each such move's round trip and compensation (:attr:`RemoteSession.lag`);
- **resume** (§Disconnect and resume): what a fresh engine is told again
  (the options set, ``uginewgame``, an ``isready`` not answered yet) and
  the search in progress replayed with the mover's time less the time away
  (:meth:`RemoteSession.replayed_search`).
"""

from __future__ import annotations

from protocol.wire import LagQuota

__all__ = ["RemoteSession", "quota_of"]


class RemoteSession:
    """One remote engine's session as the lines it was sent tell it."""

    def __init__(self) -> None:
        self.quota: LagQuota | None = None  # the game's (None: no clock, or not known yet)
        self._quota_known = False  # the game's first go has been looked at
        #: when the search in progress was handed over (None: no search)
        self.go_at: float | None = None
        self._search: list[str] = []  # its position and go lines, replayed after a resume
        #: plies of the last position line
        self.moves = 0
        #: games begun (``uginewgame`` lines)
        self.games = 0
        # what a fresh engine is told again after a resume: the options set
        # (by the text before " value ": one line per option, so bounded),
        # and whether an isready waits for its readyok (a game's start)
        self._options: dict[str, str] = {}
        #: an ``isready`` went that no ``readyok`` answered yet
        self.ready_asked = False
        #: whether this engine plays p1 in its game (set by whoever seats it;
        #: None: not known): a resumed search's go then gives back the time
        #: away on its own clock only
        self.plays_p1: bool | None = None
        #: per bestmove of the game: (round trip ms or None, compensation ms)
        self.lag: list[tuple[int | None, int]] = []

    def sent(self, lines: list[str], now: float) -> bool:
        """Lines handed to the engine at ``now``: a new game resets the
        quota; a ``go`` starts a search (its time control sets the quota at
        the game's first); the options set and an ``isready`` are kept for
        a fresh engine.  True when a ``go`` was among them."""
        went = False
        for line in lines:
            if line == "uginewgame":
                self.quota, self._quota_known, self.lag = None, False, []
                self.go_at, self._search, self.games = None, [], self.games + 1
            elif line.startswith("position"):
                self._search = [line]
                _, _, moves = line.partition(" moves ")
                self.moves = len(moves.split())
            elif line.startswith("go"):
                if not self._quota_known:
                    self._quota_known = True
                    self.quota = quota_of(line)
                self._search.append(line)
                self.go_at = now
                went = True
            elif line == "isready":
                self.ready_asked = True
            elif line.startswith("setoption"):
                self._options[line.partition(" value ")[0]] = line
        return went

    def answered(self, lines: list[str]) -> None:
        """Lines of the engine: a ``readyok`` answers the ``isready`` kept."""
        if self.ready_asked and "readyok" in lines:
            self.ready_asked = False

    def ends_search(self, lines: list[str]) -> bool:
        """Whether ``lines`` answer the search in progress (a ``bestmove``)."""
        if self.go_at is not None:
            for line in lines:  # (a loop: a generator costs more than these few lines)
                if line.startswith("bestmove"):
                    return True
        return False

    def credit(self, now: float, think_ms: int | None, rtt: float | None) -> float:
        """The time a bestmove read at ``now`` is credited with: the search's
        measured time less the lag compensation (specs/wire.md §Clock
        fairness); ``rtt`` (seconds, None: not measured) goes into :attr:`lag`."""
        assert self.go_at is not None
        elapsed = now - self.go_at
        comp = 0.0
        if self.quota is not None:
            _, comp = self.quota.charge(elapsed, None if think_ms is None else think_ms / 1000)
        self.lag.append((None if rtt is None else round(rtt * 1000), round(comp * 1000)))
        self.go_at, self._search = None, []
        return now - comp

    def lag_allowance(self) -> float:
        """The most the lag quota can take off the search in progress
        (seconds; 0 without a quota or a search)."""
        quota = self.quota
        return quota.quota if quota is not None and self.go_at is not None else 0.0

    def setup_lines(self) -> list[str]:
        """What a fresh engine is told after its ``ugiok``: the options set
        so far (the last of each) and ``uginewgame`` if a game began."""
        return [*self._options.values(), *(["uginewgame"] if self.games else [])]

    def replayed_search(self, now: float) -> list[str]:
        """The search's position and go lines (none: no search in progress),
        the mover's time in the go less the time since it first went (its
        clock ran meanwhile, the other's did not): ``p1time`` or ``p2time``
        by :attr:`plays_p1`; both when that is not known."""
        if self.go_at is None or not self._search:
            return []
        spent = round((now - self.go_at) * 1000)
        lines = list(self._search)
        words = lines[-1].split()
        mover = ("p1time", "p2time") if self.plays_p1 is None else \
            ("p1time",) if self.plays_p1 else ("p2time",)
        for index, word in enumerate(words[:-1]):
            if word in mover and words[index + 1].isdigit():
                words[index + 1] = str(max(int(words[index + 1]) - spent, 1))
        lines[-1] = " ".join(words)
        return lines


def quota_of(go: str) -> LagQuota | None:
    """The lag quota of a game whose first ``go`` line is ``go``: its time
    control read from the clock fields (the larger side's time as the base,
    the larger increment); None for a search without a clock."""
    words = go.split()
    values: dict[str, int] = {}
    for index, word in enumerate(words[:-1]):
        if word in ("p1time", "p2time", "p1inc", "p2inc") and words[index + 1].isdigit():
            values[word] = int(words[index + 1])
    if "p1time" not in values and "p2time" not in values:
        return None
    base = max(values.get("p1time", 0), values.get("p2time", 0)) / 1000
    increment = max(values.get("p1inc", 0), values.get("p2inc", 0)) / 1000
    return LagQuota(base, increment)

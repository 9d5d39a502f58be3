"""A search's answer and its ``info``: what the arbiter keeps and records.

The ``info`` lines of a search are the engine's to write as it likes, so
what they cost the arbiter is bounded as they arrive (:class:`SearchInfo`:
each line cut, the newest few kept, :mod:`protocol.limits`), and they are
parsed only when asked for (:attr:`Reply.info`): the match asks while the
opponent thinks, off the path from one move to the next ``go``.  That
delayed parsing is the seam of lazy ``info``: nothing else parses them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from arbiter.record import ReportedInfo, Score
from protocol.codec import ProtocolError, parse_engine_line
from protocol.limits import MAX_INFO_KEPT, MAX_INFO_LINE_KEPT, MAX_INFO_LINES_KEPT, MAX_PV_KEPT
from protocol.messages import WHITESPACE, Info

__all__ = ["SearchInfo", "ReportedInfo", "Reply", "merge_info", "cut_line"]

#: The fields merged from ``info`` lines (the latest value of each), and the
#: score's, which come together from the latest line with a score.
_INFO_FIELDS = ("depth", "seldepth", "nodes", "nps", "time", "pv")
_SCORE_FIELDS = ("score_cp", "score_mate", "score_winprob")


def cut_line(line: str, limit: int) -> str:
    """``line`` cut to at most ``limit`` characters at a token boundary (a
    token cut in two is dropped); ``line`` itself if it is no longer."""
    if len(line) <= limit:
        return line
    if line[limit] in WHITESPACE:
        return line[:limit]
    head = line[:limit]
    return head[:max(head.rfind(" "), head.rfind("\t"), head.rfind("\r"), 0)]


class SearchInfo:
    """The ``info`` lines kept for the search in progress: each cut at
    :data:`~protocol.limits.MAX_INFO_LINE_KEPT` characters, the newest ones
    only (at most :data:`~protocol.limits.MAX_INFO_LINES_KEPT` lines and
    :data:`~protocol.limits.MAX_INFO_KEPT` characters), older ones dropped
    as new ones come.  Keeping a line costs a few operations, whatever it
    holds; it is not parsed here."""

    __slots__ = ("_lines", "_chars")

    def __init__(self) -> None:
        self._lines: deque[str] = deque()
        self._chars = 0

    def keep(self, line: str) -> None:
        line = cut_line(line, MAX_INFO_LINE_KEPT)
        lines = self._lines
        lines.append(line)
        self._chars += len(line)
        while len(lines) > 1 and (self._chars > MAX_INFO_KEPT or len(lines) > MAX_INFO_LINES_KEPT):
            self._chars -= len(lines.popleft())

    def take(self) -> list[str] | None:
        """The lines kept (oldest first), now given away; None if there are none."""
        if not self._lines:
            return None
        taken = list(self._lines)
        self.clear()
        return taken

    def clear(self) -> None:
        self._lines.clear()
        self._chars = 0


class Reply:
    """A ``bestmove`` and what came with it: when its line was read
    (``trio.current_time()``), and the fields of the search's ``info`` lines
    merged (:func:`merge_info`), parsed when :attr:`info` is first asked for.
    (A plain slotted class: one is made per ply.)"""

    __slots__ = ("move", "ponder", "time", "_lines", "_info")

    def __init__(self, move: str, time: float, info_lines: list[str] | None = None,
                 ponder: str | None = None):
        self.move = move
        self.ponder = ponder
        self.time = time
        self._lines = info_lines
        self._info: ReportedInfo | None = None

    @property
    def info(self) -> ReportedInfo:
        """What the engine reported of this search (parsed on first use)."""
        info = self._info
        if info is None:
            info = self._info = merge_info(self._lines) if self._lines else ReportedInfo()
            self._lines = None
        return info

    def __repr__(self) -> str:
        return f"Reply({self.move!r}, time={self.time!r}, info={self.info!r})"


def merge_info(lines: Sequence[str | Info]) -> ReportedInfo:
    """The latest value of each field over a search's ``info`` lines (oldest
    first; raw text, parsed here, or parsed already); malformed lines are
    ignored (``specs/match.md`` §Engine errors).  The lines are read newest
    first, so the work stops once every field has its value.  The pv is cut
    at :data:`~protocol.limits.MAX_PV_KEPT` moves."""
    merged: dict[str, object] = {}
    scored = False
    complete = len(_INFO_FIELDS) + len(_SCORE_FIELDS)
    for item in reversed(lines):
        if isinstance(item, str):
            try:
                parsed = parse_engine_line(item)
            except ProtocolError:
                continue  # malformed info: ignored
            if not isinstance(parsed, Info):
                continue
            item = parsed
        for key in _INFO_FIELDS:
            if key not in merged:
                value = getattr(item, key)
                if value is not None and value != ():
                    merged[key] = value
        if not scored and (item.score_cp is not None or item.score_mate is not None
                           or item.score_winprob is not None):
            scored = True
            for key in _SCORE_FIELDS:
                merged[key] = getattr(item, key)
        if len(merged) == complete:
            break
    pv = merged.get("pv")
    if isinstance(pv, tuple) and len(pv) > MAX_PV_KEPT:
        merged["pv"] = pv[:MAX_PV_KEPT]
    if not merged:
        return ReportedInfo()
    score = Score.from_info(merged)
    for key in _SCORE_FIELDS:
        merged.pop(key, None)
    return ReportedInfo(**merged, score=score)  # type: ignore[arg-type]  # the codec's types

"""What a coordinator and a worker say to each other: plain data, no I/O.

A batch of game pairs travels as a *request* (a dict of JSON values: the
games' keys, colours and openings pair by pair, the match settings, the
engines by **name and options only**) and comes back as a *result* (the
records as ``GameRecord.to_dict()`` values, each one's plies as one JSON
text: :func:`result_game`; events, a failure, the keys of pairs not begun).
Nothing here imports Dask or trio, so both sides and the tests read the same
rules (``specs/cluster.md`` §Requests and results).

* :func:`versions`: what must match between a coordinator and its workers;
* :func:`make_request` / :func:`engine_for`: the coordinator's side of a
  request, and how a worker turns a requested engine into a command from its
  own engines file;
* :func:`read_result`: a worker's result, checked key by key against the
  request (a worker is trusted with games, not with the database).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import importlib.metadata
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arbiter.engine import EngineConfig
from arbiter.games import Color
from arbiter.record import GameRecord, Ply, Score, as_result
from arbiter.schedule import ScheduledGame

__all__ = [
    "CLUSTER_VERSION", "WorkerRefused", "versions", "version_problem", "make_request",
    "engine_for", "Outcome", "result_game", "read_result",
]

#: The layout of requests and results; a change to either bumps it.
CLUSTER_VERSION = 4


class WorkerRefused(RuntimeError):
    """A worker that cannot play a request: other versions, an engine it does
    not have, no arbiter plugin.  Its message names the worker and the cause;
    it travels back to the coordinator as the task's error."""


def _digest(package: str) -> str:
    """SHA-256 (first 12 hex digits) of a package's Python sources, in name
    order: two installs agree on it only if they run the same code."""
    root = Path(__file__).resolve().parent.parent.parent / package
    hasher = hashlib.sha256()
    for path in sorted(root.glob("*.py")):
        hasher.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return hasher.hexdigest()[:12]


@functools.cache
def versions() -> dict[str, str]:
    """What a worker must share with its coordinator (``specs/cluster.md``
    §Versions): the arbiter's version, the game rules (the referee's code,
    ``arbiter/games/``), the engine protocol (``protocol/``) and
    :data:`CLUSTER_VERSION`."""
    try:
        arbiter = importlib.metadata.version("arbiter")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree
        arbiter = "unknown"
    return {"arbiter": arbiter, "rules": _digest("arbiter/games"), "protocol": _digest("protocol"),
            "cluster": str(CLUSTER_VERSION)}


def version_problem(worker: str, ours: Mapping[str, str], coordinator: Mapping[str, Any]) -> str | None:
    """Why worker ``worker`` (running ``ours``) refuses a request of a
    coordinator running ``coordinator``, or None if they agree."""
    differ = [key for key in ("arbiter", "rules", "protocol", "cluster")
              if str(coordinator.get(key)) != ours[key]]
    if not differ:
        return None
    said = ", ".join(f"{key} {ours[key]} here, {coordinator.get(key)} on the coordinator"
                     for key in differ)
    return (f"worker {worker} refused the games: its arbiter differs from the coordinator's "
            f"({said}); run the same arbiter version on both")


# --------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------


def make_request(settings: Mapping[str, Any], engines: Sequence[EngineConfig],
                 pairs: Sequence[Sequence[ScheduledGame]], stop: str, drain: str) -> dict[str, Any]:
    """The request for ``pairs`` (each a game pair, or what is left of it),
    played in order on one slot.

    ``settings`` are the match settings (``game``, ``tc``, ``timemargin_ms``,
    ``maxplies``, ``stall_ms``, ``restart``, ``resign``, ``draw``); ``engines``
    the tournament's, of which only the name, the options and the engine's own
    time control travel; ``stop`` and ``drain`` name the coordination
    primitives the worker watches (stop the games; begin no further pair)."""
    wanted = {name for games in pairs for g in games for name in (g.white, g.black)}
    return {
        "versions": versions(), "stop": stop, "drain": drain, **dict(settings),
        "engines": {e.name: {"options": dict(e.options), "tc": e.tc, "timemargin_ms": e.timemargin_ms}
                    for e in engines if e.name in wanted},
        "pairs": [[g.to_dict() for g in games] for games in pairs],
    }


def engine_for(name: str, requested: Mapping[str, Any], tables: Mapping[str, EngineConfig],
               worker: str, source: str) -> EngineConfig:
    """Engine ``name`` as this worker runs it: the command, arguments,
    directory and environment of its own engines file (``tables``, read from
    ``source``), the options of its table overridden by the requested ones, the
    requested time control.  :class:`WorkerRefused` if the file has no such
    engine: a coordinator never sends a command line."""
    table = tables.get(name)
    if table is None:
        known = ", ".join(sorted(tables)) or "none"
        raise WorkerRefused(f"worker {worker} has no engine {name!r} in {source} (it has: {known}); "
                            f"define engine {name!r} there (an engines.{name} table), or play without it")
    engine = copy.deepcopy(table)
    engine.name = name
    options = requested.get("options") or {}
    engine.options = {**engine.options, **{str(k): None if v is None else str(v)
                                           for k, v in options.items()}}
    engine.tc = requested.get("tc") or None
    engine.timemargin_ms = int(requested.get("timemargin_ms") or 0)
    return engine


# --------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------


def result_game(key: str, record: GameRecord) -> dict[str, Any]:
    """A played game as a worker's result carries it: its key and its record's
    ``to_dict()`` with the plies as one JSON text, which the coordinator
    checks (:func:`read_record`) and then stores as it came, instead of
    encoding the same plies again (``specs/cluster.md`` §Requests and results)."""
    values = record.to_dict()
    values["moves"] = json.dumps(values["moves"])
    return {"key": key, "record": values}


@dataclass
class Outcome:
    """A result as the coordinator keeps it: the records of the requested
    games, each at most once (``played``), the worker's events, what was
    dropped and why (``dropped``), the requested keys of pairs the worker did
    not begin because the run was drained (``skipped``), and the failure that
    ended the batch, if one did (a handshake failing twice: the run aborts)."""

    worker: str
    played: list[tuple[ScheduledGame, GameRecord]] = field(default_factory=list)
    events: list[dict[str, str]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failure: str | None = None


#: A record's keys as :meth:`GameRecord.to_dict` writes them, in its order.
_RECORD_KEYS = tuple(GameRecord.__dataclass_fields__)
#: A ply's keys as :meth:`Ply.to_dict` writes them: a local engine's ply,
#: and a remote engine's (with its lag fields, written when ``comp_ms`` is set).
_PLY_KEYS = tuple(Ply("", Color.WHITE, 0).to_dict())
_REMOTE_PLY_KEYS = _PLY_KEYS + ("rtt_ms", "comp_ms")
#: A ply's colour texts (:class:`Color`'s values): any other is not a ply's.
_COLOR_TEXTS = frozenset(color.value for color in Color)
#: Score texts remembered as canonical (or not): a tournament's scores repeat
#: (a few thousand distinct ``cp``/``mate`` values), and past this many the
#: least recent are forgotten, so memory stays bounded whatever workers send.
SCORE_TEXTS = 4096


@functools.lru_cache(maxsize=SCORE_TEXTS)
def _canonical_score(text: str) -> bool:
    """Whether ``text`` is a score written as :class:`Score` writes it."""
    try:
        return str(Score.parse(text)) == text
    except ValueError:
        return False


def _canonical(record: Any) -> bool:
    """Whether ``record`` (JSON values) is exactly ``to_dict()`` of the
    record it parses to: the keys in their order, every ply's too, each
    colour a :class:`Color`'s text, each score's text as :class:`Score` writes it, ``moves`` and ``pv`` lists.
    Such a record parses (:meth:`GameRecord.from_dict` raises nothing) and
    its values are stored as they came; any other is parsed and written
    anew (:func:`read_result`), as before."""
    if type(record) is not dict or tuple(record) != _RECORD_KEYS:
        return False
    moves = record["moves"]
    if type(moves) is not list:
        return False
    for ply in moves:
        if type(ply) is not dict:
            return False
        keys = tuple(ply)
        if keys != _PLY_KEYS and (keys != _REMOTE_PLY_KEYS or ply["comp_ms"] is None):
            return False
        if type(ply["pv"]) is not list:
            return False
        color = ply["color"]
        if type(color) is not str or color not in _COLOR_TEXTS:
            return False
        score = ply["score"]
        if score is not None and (type(score) is not str or not _canonical_score(score)):
            return False
    return True


class ReceivedRecord(GameRecord):
    """A worker's record as it came (JSON values that :func:`_canonical`
    found to be exactly a record's ``to_dict()``): its fields are read as
    they are, :meth:`to_dict` gives those values back, and the plies are
    made :class:`Ply` objects only when :attr:`moves` is first read (the
    ``--pgn`` file does; the store, the standings and the display do not).
    It is that record in every other way: ``to_dict()``, the fields and
    ``==`` are those of ``GameRecord.from_dict`` of the same values.  Why:
    making 50 plies objects and writing them back as values is most of
    what a coordinator does with a game (``bench/README.md`` §``cluster.py``)."""

    def __init__(self, data: dict[str, Any], moves_text: str | None = None):
        # data: values that _canonical accepted; moves_text: the JSON text
        # their plies were read from, if they came as one
        values = dict(data)
        self._ply_values: list[dict[str, Any]] | None = values.pop("moves")
        self._plies: list[Ply] | None = None
        self._moves_text = moves_text
        values["result"] = as_result(values["result"])
        self.__dict__.update(values)

    @property  # a field of GameRecord, made lazy here
    def moves(self) -> list[Ply]:
        if self._plies is None:
            self._plies = [Ply.from_dict(ply) for ply in self._ply_values or []]
        return self._plies

    @moves.setter
    def moves(self, plies: list[Ply]) -> None:
        self._plies, self._ply_values, self._moves_text = plies, None, None

    def encoded_moves(self) -> str | None:
        return self._moves_text

    @property
    def plies(self) -> int:
        made = self._ply_values
        return len(self.opening_moves) + (len(self.moves) if made is None else len(made))

    def to_dict(self) -> dict[str, Any]:
        made = self._ply_values
        if made is None:  # the plies replaced since: written from them
            return super().to_dict()
        data: dict[str, Any] = {}
        for name in _RECORD_KEYS:
            if name == "moves":
                data[name] = [{**ply, "pv": ply["pv"].copy()} for ply in made]
            else:
                value = self.__dict__[name]
                data[name] = value.copy() if isinstance(value, list | dict) else value
        return data

    def values_to_store(self) -> dict[str, Any]:
        made = self._ply_values
        if made is None:
            return super().values_to_store()
        # the values as they came, shared (the store only reads them): copying
        # every ply to store it once was a fifth of the coordinator's cost per game
        return {name: made if name == "moves" else self.__dict__[name] for name in _RECORD_KEYS}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GameRecord):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # as GameRecord's: mutable, unhashable


def read_record(values: Any) -> GameRecord:
    """The record of a worker's JSON values (:func:`result_game`'s, the plies
    one JSON text, or a ``to_dict()`` as it is): as they came if they are a
    record's own ``to_dict()`` (:class:`ReceivedRecord`, which keeps the
    plies' text for the store), else parsed (:meth:`GameRecord.from_dict`).
    ValueError (and the parser's other errors) for text that is not JSON or
    values that are not a record."""
    text = values.get("moves") if isinstance(values, Mapping) else None
    if type(text) is str:
        values = {**values, "moves": json.loads(text)}
    else:
        text = None
    if _canonical(values):
        return ReceivedRecord(values, text)
    return GameRecord.from_dict(values)


def read_result(result: Any, games: Sequence[ScheduledGame]) -> Outcome:
    """A worker's result for the request of ``games``, checked: a record is
    kept only for a requested key, once, with the scheduled colours; anything
    else is dropped with a reason (``specs/cluster.md`` §Exactly once)."""
    if not isinstance(result, Mapping):
        return Outcome("?", dropped=[f"a result that is not a mapping ({type(result).__name__})"])
    outcome = Outcome(str(result.get("worker", "?")))
    by_key = {g.key: g for g in games}
    seen: set[str] = set()
    played = result.get("games") or []
    if isinstance(played, str | bytes):
        try:
            played = json.loads(played)
        except ValueError as exc:
            played = []
            outcome.dropped.append(f"games that are not JSON ({exc})")
    for item in played if isinstance(played, list) else []:
        key = str(item.get("key")) if isinstance(item, Mapping) else "?"
        scheduled = by_key.get(key)
        if scheduled is None or key in seen:
            outcome.dropped.append(f"game {key!r}: {'a second result' if key in seen else 'not requested'}")
            continue
        try:
            record = read_record(item["record"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # whatever a worker sent
            outcome.dropped.append(f"game {key}: not a game record ({exc!r})")
            continue
        if (record.white, record.black) != (scheduled.white, scheduled.black):
            outcome.dropped.append(f"game {key}: played by {record.white} and {record.black}, "
                                   f"scheduled for {scheduled.white} and {scheduled.black}")
            continue
        seen.add(key)
        outcome.played.append((scheduled, record))
    skipped = result.get("skipped") or []
    outcome.skipped = [str(k) for k in skipped if str(k) in by_key and str(k) not in seen] \
        if isinstance(skipped, list) else []
    for event in result.get("events") or []:
        if isinstance(event, Mapping):
            outcome.events.append({k: str(event.get(k, "")) for k in ("kind", "detail", "engine", "key")})
    failure = result.get("failure")
    outcome.failure = None if failure is None else str(failure)
    return outcome

"""The reference positions of the conformance checker, stored in ``positions.json``.

Every position is a move sequence from the game's start position, played in
a seeded random game by the referee, and chosen because it shows a *feature*
an engine must get right (:mod:`arbiter.check.features`, ``specs/check.md``
§Positions); with them, the end of one finished game per result, for
``query``.  :func:`positions` and :func:`final_positions` re-check every
entry with the referee when it is loaded (once per process), so a change of
the rules that invalidates one fails loudly with :class:`PositionDataError`
(and ``tests/test_check.py`` loads them all).

The file is written by :func:`regenerate` (``python3 -m arbiter.check.positions
--regenerate``), never by hand: after a rules change, regenerate and review
the diff.  Keeping the positions as data, not generated at run time, keeps
them stable between runs and versions, and keeps the search for rare cases
(a forced Troll pass turns up in about one random game in a thousand) out of
every run.

The file (format :data:`FORMAT`): ``{"format": 1, "about": "...", "games":
{GAME: {"positions": [{"feature": F, "moves": "m1 m2 ..."}, ...], "final":
[{"result": "1-0", "moves": "..."}, ...]}}}``, one entry per line.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from arbiter.check.features import COMMON_FEATURES, FEATURES, QUICK_FEATURES, mover_is_p1
from arbiter.games import GAME_NAMES, Game, Position, Result, get_game, play_moves

__all__ = ["CheckPosition", "FinalPosition", "PositionDataError", "positions", "final_positions",
           "generate", "regenerate", "dumps", "parse", "DATA_FILE"]

#: The data file, shipped as package data next to this module.
DATA_FILE = "positions.json"
#: The version of the file's layout (see the module docstring).
FORMAT = 1
#: The results a finished game may have (PGN).
RESULTS = tuple(result.value for result in Result)
#: Seeded random games the generator plays per game, at most, looking for every feature.
MAX_GAMES = 4000
#: Plies after which a generator game is abandoned (no game of the four gets near it).
MAX_PLIES = 400
#: Entries of the feature ``sample`` per game (the full suite's bulk).
SAMPLES = 10
#: The first seed of the ``sample`` games (apart from the seeds of the feature search).
SAMPLE_SEED = 100_000

_ABOUT = ("Positions from real games for `arbiter check` (specs/check.md §Positions). "
          "Written by `python3 -m arbiter.check.positions --regenerate`: do not edit by hand.")


@dataclass(frozen=True)
class CheckPosition:
    """A position to search: ``moves`` from the start, picked for ``feature``.

    ``quick`` entries form the smaller set of ``arbiter check --quick``."""

    game: str
    feature: str
    moves: tuple[str, ...]
    quick: bool

    @property
    def label(self) -> str:
        return f"{self.feature} (ply {len(self.moves)})"

    def position(self) -> Position:
        return play_moves(get_game(self.game).start(), self.moves)

    @property
    def why(self) -> str:
        return FEATURES[self.game][self.feature][0]


@dataclass(frozen=True)
class FinalPosition:
    """The last position of a finished game, for ``query`` (``result`` is PGN)."""

    game: str
    moves: tuple[str, ...]
    result: str

    def position(self) -> Position:
        return play_moves(get_game(self.game).start(), self.moves)


class PositionDataError(ValueError):
    """A stored position the referee no longer accepts, that lost its feature,
    or a data file that is missing or not in the format."""


# --- the data file ------------------------------------------------------------------

#: game -> {"positions": [(feature, moves)], "final": [(result, moves)]}, moves space-separated.
Data = dict[str, dict[str, list[tuple[str, str]]]]


def parse(text: str, source: str = DATA_FILE) -> Data:
    """The data of a positions file; PositionDataError (naming ``source``) if
    it is not JSON in the format, or lacks a game.  The positions themselves
    are verified by the referee later, when a game's are loaded."""
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise PositionDataError(f"{source}: not JSON: {exc}") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or not isinstance(raw.get("games"), dict):
        raise PositionDataError(f"{source}: not a positions file of format {FORMAT}")
    games = raw["games"]
    unknown = sorted(set(games) - set(GAME_NAMES))
    missing = [name for name in GAME_NAMES if name not in games]
    if unknown or missing:
        raise PositionDataError(f"{source}: unknown games {unknown}, missing games {missing}")
    return {name: {"positions": _entries(games[name], "positions", "feature", source, name),
                   "final": _entries(games[name], "final", "result", source, name)}
            for name in GAME_NAMES}


def _entries(game: object, part: str, key: str, source: str, name: str) -> list[tuple[str, str]]:
    """The ``(key value, moves)`` pairs of one list of a game's data."""
    where = f"{source}: {name} {part}"
    items = game.get(part) if isinstance(game, dict) else None
    if not isinstance(items, list):
        raise PositionDataError(f"{where}: not a list")
    pairs = []
    for index, item in enumerate(items, start=1):
        if (not isinstance(item, dict) or set(item) != {key, "moves"}
                or not isinstance(item[key], str) or not isinstance(item["moves"], str)):
            raise PositionDataError(f"{where}, entry {index}: not {{{key!r}: text, 'moves': text}}")
        if key == "result" and item[key] not in RESULTS:
            raise PositionDataError(f"{where}, entry {index}: result {item[key]!r} is not one of {RESULTS}")
        pairs.append((item[key], item["moves"]))
    return pairs


def dumps(data: Data) -> str:
    """The file's text for ``data``: JSON with one entry per line, so that a
    regeneration's diff shows the entries that changed."""
    out = ["{", f'  "format": {FORMAT},', f'  "about": {json.dumps(_ABOUT, ensure_ascii=False)},',
           '  "games": {']
    for g, name in enumerate(GAME_NAMES):
        out.append(f"    {json.dumps(name)}: {{")
        for p, (part, key) in enumerate((("positions", "feature"), ("final", "result"))):
            out.append(f'      "{part}": [')
            entries = data[name][part]
            out.extend(f"        {json.dumps({key: value, 'moves': moves}, ensure_ascii=False)}"
                       + ("," if i < len(entries) - 1 else "")
                       for i, (value, moves) in enumerate(entries))
            out.append("      ]" + ("," if p == 0 else ""))
        out.append("    }" + ("," if g < len(GAME_NAMES) - 1 else ""))
    out += ["  }", "}"]
    return "\n".join(out) + "\n"


@functools.cache
def _stored() -> Data:
    try:
        text = resources.files(__package__).joinpath(DATA_FILE).read_text(encoding="utf-8")
    except OSError as exc:
        raise PositionDataError(f"cannot read the checker's positions ({DATA_FILE}): {exc}") from None
    return parse(text)


# --- loading: every entry verified by the referee -----------------------------------------


def _verify(entry: CheckPosition) -> Position:
    where = f"check position {entry.game}/{entry.feature} ({' '.join(entry.moves)})"
    try:
        pos = entry.position()
    except Exception as exc:  # the referee's error names the ply
        raise PositionDataError(f"{where}: {exc}") from None
    if pos.outcome() is not None:
        raise PositionDataError(f"{where}: the game is over there")
    if entry.feature not in FEATURES[entry.game]:
        raise PositionDataError(f"{where}: unknown feature {entry.feature!r}")
    if not FEATURES[entry.game][entry.feature][1](pos, entry.moves):
        raise PositionDataError(f"{where}: the position no longer shows {entry.feature!r}")
    return pos


def positions(game: str, quick: bool = False) -> list[CheckPosition]:
    """The checked positions of ``game`` (the ``quick`` subset if asked),
    each verified with the referee (once per process)."""
    entries = _verified(get_game(game).name)
    return [e for e in entries if e.quick] if quick else list(entries)


@functools.cache
def _verified(game: str) -> tuple[CheckPosition, ...]:
    return _verify_all(game, _stored())


def _verify_all(game: str, data: Data) -> tuple[CheckPosition, ...]:
    entries = tuple(CheckPosition(game, feature, tuple(moves.split()), feature in QUICK_FEATURES[game])
                    for feature, moves in data[game]["positions"])
    for entry in entries:
        _verify(entry)
    return entries


def final_positions(game: str) -> list[FinalPosition]:
    """Ends of real games, one per result that occurred, each re-verified."""
    return _final_positions(get_game(game).name, _stored())


def _final_positions(game: str, data: Data) -> list[FinalPosition]:
    found = []
    for result, moves in data[game]["final"]:
        entry = FinalPosition(game, tuple(moves.split()), result)
        outcome = entry.position().outcome()
        if outcome is None or outcome.result != result:
            raise PositionDataError(f"final position {game} {result}: the referee says "
                                    f"{outcome.result if outcome else 'not over'}")
        found.append(entry)
    return found


# --- the generator -------------------------------------------------------------------


def _random_game(game: Game, rng: random.Random, avoid_wins: bool,
                 max_plies: int = MAX_PLIES) -> Iterator[tuple[Position, tuple[str, ...]]]:
    """Positions of one random game: (position, moves so far) for each ply, then
    the final position.  ``avoid_wins`` makes the players skip immediately
    winning moves when they can, so that boards fill up (Troll's pass)."""
    pos = game.start()
    moves: list[str] = []
    while pos.outcome() is None and len(moves) < max_plies:
        yield pos, tuple(moves)
        legal = pos.legal_moves()
        if avoid_wins and len(legal) > 1:
            quiet = [m for m in legal if pos.play(m).outcome() is None]
            legal = quiet or legal
        move = rng.choice(legal)
        moves.append(move)
        pos = pos.play(move)
    yield pos, tuple(moves)


def generate(game_name: str, max_games: int = MAX_GAMES) -> dict[str, list[tuple[str, str]]]:
    """Search seeded random games for one position per feature and the final
    position of one game per result.

    Special features take the first position found, in seed order.  The
    common ones (:data:`~arbiter.check.features.COMMON_FEATURES`) look only
    at every sixth game, each at a different one, so that they come from
    different games; ``sample`` entries are taken at a random ply of games of
    their own."""
    game = get_game(game_name)
    features = {k: v for k, v in FEATURES[game.name].items() if k != "sample"}
    common = [name for name in COMMON_FEATURES if name in features]
    found: dict[str, str] = {}
    finals: dict[str, str] = {}
    for seed in range(max_games):
        rng = random.Random(seed)
        for pos, moves in _random_game(game, rng, avoid_wins=seed % 2 == 1):
            outcome = pos.outcome()
            if outcome is not None:
                finals.setdefault(outcome.result, " ".join(moves))
                break
            for name, (_, predicate) in features.items():
                if name in found or (name in common and seed % len(common) != common.index(name)):
                    continue
                if predicate(pos, moves):
                    found[name] = " ".join(moves)
        if len(found) == len(features) and len(finals) >= 2:
            break
    missing = sorted(set(features) - set(found))
    if missing:
        print(f"# {game.name}: not found in {max_games} games: {', '.join(missing)}", file=sys.stderr)
    entries = [(name, found[name]) for name in features if name in found]
    entries += [("sample", moves) for moves in _samples(game)]
    return {"positions": entries, "final": sorted(finals.items())}


def _samples(game: Game) -> list[str]:
    """:data:`SAMPLES` positions at a random ply of games of their own, p1 and p2 to move in turn."""
    samples = []
    for index in range(SAMPLES):
        rng = random.Random(SAMPLE_SEED + index)
        plies = list(_random_game(game, rng, avoid_wins=False))[:-1]  # not the final position
        want_p1 = index % 2 == 0
        choices = [moves for pos, moves in plies if mover_is_p1(pos) is want_p1] or \
            [moves for pos, moves in plies]
        samples.append(" ".join(rng.choice(choices)))
    return samples


def regenerate(path: str | Path | None = None, games: Sequence[str] = GAME_NAMES,
               max_games: int = MAX_GAMES) -> Data:
    """Generate the positions of ``games`` afresh (the others keep their stored
    entries), verify them with the referee, and write the file (by default the
    package's own ``positions.json``).  Returns the data written."""
    data = {name: {part: list(entries) for part, entries in stored.items()}
            for name, stored in _stored().items()}
    for name in games:
        data[name] = generate(name, max_games)
    text = dumps(data)
    checked = parse(text, "the regenerated positions")
    for name in games:
        _verify_all(name, checked)
        _final_positions(name, checked)
    target = Path(path) if path is not None else Path(__file__).with_name(DATA_FILE)
    target.write_text(text, encoding="utf-8")
    return checked


def main(argv: Sequence[str] | None = None) -> int:
    """``python3 -m arbiter.check.positions``: verify the stored positions, or
    ``--regenerate`` them; exit status 3 if they do not verify (as ``arbiter check``)."""
    parser = argparse.ArgumentParser(prog="python3 -m arbiter.check.positions", description=main.__doc__)
    parser.add_argument("--regenerate", action="store_true", help="generate the positions afresh and write them")
    parser.add_argument("--game", action="append", choices=GAME_NAMES,
                        help="regenerate only this game (repeatable; default: every game)")
    parser.add_argument("--output", help=f"write here instead of the package's {DATA_FILE}")
    args = parser.parse_args(argv)
    try:
        data = regenerate(args.output, args.game or GAME_NAMES) if args.regenerate else _stored()
        for name in GAME_NAMES:
            entries = _verify_all(name, data)
            print(f"{name}: {len(entries)} positions ({sum(e.quick for e in entries)} quick), "
                  f"{len(_final_positions(name, data))} finished games")
    except PositionDataError as exc:
        print(f"positions: {exc}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":  # pragma: no cover - a maintenance tool
    sys.exit(main())

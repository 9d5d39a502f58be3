"""The engine SDK: a Python object with ``choose_move`` becomes a complete engine.

Subclass :class:`Engine`, implement :meth:`Engine.choose_move`, and call
:func:`run` (``python -m sample_engines.random`` does exactly that).  The SDK
does the rest of ``specs/protocol.md``: the handshake and options (including
the game-selection combo :data:`~protocol.messages.GAME_OPTION`), position
tracking through the referee (``arbiter.games``), time management from the
clock fields of ``go``, ``stop`` and ``isready`` during a search, ``query``
and ``quit``.  Every line is flushed as it is written.

Threads, because ``stop`` and ``isready`` must be answered while the engine
thinks: the main thread reads stdin and answers at once; each ``go`` runs
``choose_move`` in a worker thread, which checks :meth:`SearchLimits.stopped`
as often as it can.  It lives beside the referee it tracks positions with,
not in ``protocol/``, which is pure and imports nothing of ``arbiter``.

The time management (:func:`time_budget_ms`, :class:`SearchLimits`,
:class:`OverheadMeter` and their constants) is :mod:`arbiter.sdk_time`;
this module runs the engine and re-exports those names.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from typing import BinaryIO, ClassVar, TextIO

from arbiter.games import GAME_NAMES, Game, GameError, Position, get_game
from arbiter.sdk_time import (
    DEFAULT_BUDGET_MS,
    DEFAULT_MOVES_TO_GO,
    MAX_CLOCK_SHARE,
    MAX_RESERVE_SHARE,
    MAX_UNCHECKED_MS,
    MOVE_OVERHEAD_MS,
    OVERHEAD_WINDOW,
    OverheadMeter,
    SearchLimits,
    scheduling_delay_ms,
    time_budget_ms,
)
from protocol import messages as m
from protocol.codec import LineSplitter, ProtocolError, parse_arbiter_line, tokenize
from protocol.query import query_answer


class Engine:
    """Base class of an engine.  Override :meth:`choose_move`; optionally
    :attr:`options`, :meth:`on_option`, :meth:`new_game`.

    The SDK keeps ``self.game`` (the selected :class:`Game`) and
    ``self.values`` (option values by declared name: bool for check, int for
    spin, str for combo/string) up to date, and ``self.rng`` seeded from the
    ``Seed`` option when the engine declares one (0 = fresh entropy).
    """

    name: ClassVar[str] = "Engine"
    author: ClassVar[str] = "Arbiter project"
    #: Engine-specific options; the SDK adds the game combo and the
    #: ``movestogo`` declaration in front.
    options: ClassVar[tuple[m.OptionDecl, ...]] = ()

    def __init__(self, game: str = "troll") -> None:
        self.game: Game = get_game(game)
        self.game.prepare()  # at start-up, on no clock
        self.rng = random.Random()
        self.values: dict[str, object] = {}
        self._emit: Callable[[str], None] = lambda line: None
        for decl in self.all_options():
            if decl.default is not None and decl.type != "button":
                self.values[decl.name] = _typed(decl, decl.default)
        self._seed_rng()

    # -- what subclasses implement --------------------------------------------

    def choose_move(self, position: Position, limits: SearchLimits) -> str:
        """A legal move of ``position`` (not terminal), within ``limits``."""
        raise NotImplementedError

    def new_game(self) -> None:
        """``uginewgame``: forget whatever belongs to the previous game."""

    def on_option(self, name: str, value: object) -> None:
        """An option changed (``value`` is typed; None for a button)."""

    # -- helpers for subclasses ------------------------------------------------

    def info(self, **fields: object) -> None:
        """Report progress: ``self.info(depth=3, nodes=1200, score_cp=35, pv=("d5",))``.

        Safe to call from the search thread; a no-op when not running under :func:`run`."""
        self._emit(m.Info(**fields).to_line())  # type: ignore[arg-type]

    # -- plumbing --------------------------------------------------------------

    @classmethod
    def all_options(cls) -> tuple[m.OptionDecl, ...]:
        """The declared options: the game combo, the check option that says
        the SDK reads ``movestogo`` (:data:`~protocol.messages.MOVESTOGO_OPTION`),
        then the engine's own."""
        game_combo = m.OptionDecl(m.GAME_OPTION, "combo", "troll", vars=GAME_NAMES)
        movestogo = m.OptionDecl(m.MOVESTOGO_OPTION, "check", "true")
        return (game_combo, movestogo) + tuple(cls.options)

    def select_game(self, name: str) -> None:
        self.game = get_game(name)
        self.game.prepare()  # during the handshake, on no clock
        self.values[m.GAME_OPTION] = self.game.name

    def set_option(self, name: str, value: str | None) -> None:
        """Validate and apply ``setoption``; ProtocolError says what is wrong."""
        decl = next((d for d in self.all_options() if d.name.lower() == name.lower()), None)
        if decl is None:
            raise ProtocolError(f"unknown option {name!r}")
        value = decl.validate_value(value)
        if decl.name == m.GAME_OPTION:
            assert value is not None
            self.select_game(value)
            return
        typed = None if value is None else _typed(decl, value)
        if typed is not None:
            self.values[decl.name] = typed
        if decl.name == "Seed":
            self._seed_rng()
        self.on_option(decl.name, typed)

    def _seed_rng(self) -> None:
        seed = self.values.get("Seed")
        self.rng = random.Random(seed if isinstance(seed, int) and seed != 0 else None)


def _typed(decl: m.OptionDecl, value: str) -> object:
    if decl.type == "check":
        return value == "true"
    if decl.type == "spin":
        return int(value)
    return value


def lenient_go(line: str) -> m.Go:
    """The limits of a ``go`` line that makes sense, with unknown words,
    bad values and repeats dropped (at worst a bare ``go``)."""
    words = tokenize(line)[1:]
    values: dict[str, object] = {}
    index = 0
    while index < len(words):
        word = words[index]
        if word == "infinite":
            values["infinite"] = True
        elif word in m.GO_INT_FIELDS and index + 1 < len(words):
            try:
                number = m.parse_int(words[index + 1], word)
                m.Go(**{word: number})  # type: ignore[arg-type]
            except ProtocolError:
                pass
            else:
                values.setdefault(word, number)
            index += 1
        index += 1
    return m.Go(**values)  # type: ignore[arg-type]


class EngineRunner:
    """The stdin/stdout loop around one :class:`Engine`."""

    def __init__(self, engine: Engine, stdin: BinaryIO | int = 0, stdout: TextIO | None = None):
        self.engine = engine
        self._in_fd = stdin if isinstance(stdin, int) else stdin.fileno()
        self._out = stdout if stdout is not None else sys.stdout
        self._out_lock = threading.Lock()
        self._fen: str | None = None
        self._moves: tuple[str, ...] = ()
        self._position: Position | None = engine.game.start()
        self._search: threading.Thread | None = None
        self._limits: SearchLimits | None = None
        self._read_at = time.monotonic()  # when the input being handled was read
        #: the answers' measured overhead: the reserve of the next budgets
        self.overhead = OverheadMeter()
        engine._emit = self.write

    @property
    def last_limits(self) -> SearchLimits | None:
        """The limits of the current (or last) search."""
        return self._limits

    # -- output ------------------------------------------------------------------

    def write(self, line: str) -> None:
        with self._out_lock:
            try:
                self._out.write(line + "\n")
                self._out.flush()
            except (BrokenPipeError, ValueError):
                pass  # the arbiter went away: nothing left to tell it

    def error(self, text: str) -> None:
        """Problems are reported as ``info string``: nothing else may be unasked."""
        self.write(m.Info(string=" ".join(("error: " + text).split())).to_line())

    # -- input loop ------------------------------------------------------------------

    def run(self) -> None:
        splitter = LineSplitter()
        while True:
            try:
                data = os.read(self._in_fd, 65536)
            except OSError:
                data = b""
            self._read_at = time.monotonic()
            if not data:  # EOF: the arbiter is gone; act on a last unterminated line
                try:
                    last = splitter.close()
                except ProtocolError:
                    last = None
                if last is not None and self.handle(last) is False:
                    return
                # Let a running timed search answer (handy from a shell);
                # an infinite one is stopped first.
                infinite = self._limits is not None and self._limits.infinite
                self._finish_search(stop=infinite, wait=True)
                return
            try:
                lines = splitter.feed(data)
            except ProtocolError as exc:
                self.error(str(exc))
                lines = exc.lines
            for line in lines:
                if self.handle(line) is False:
                    self._finish_search(stop=True, wait=False)
                    return

    def handle(self, line: str) -> bool:
        """Act on one line; False when the engine must exit."""
        try:
            msg = parse_arbiter_line(line)
        except ProtocolError as exc:
            if exc.command != "go":
                self.error(str(exc))
                return True
            # A `go` must be answered whatever it says: search with what it
            # says that makes sense (another manager may send UCI's `ponder`).
            msg = lenient_go(line)
            self.error(f"{exc}; searching with '{msg.to_line()}'")
        if msg is None:
            return True
        if isinstance(msg, m.Quit):
            return False
        if isinstance(msg, m.IsReady):
            self.write("readyok")
        elif isinstance(msg, m.Stop):
            self._finish_search(stop=True, wait=False)
        elif isinstance(msg, m.Query):
            self.write(m.Response(query_answer(self._position, msg.what)).to_line())
        elif isinstance(msg, m.Ugi):
            self._handshake()
        else:
            # Everything else changes what a search would see: finish the
            # running one first (an arbiter should have waited for bestmove).
            self._finish_search(stop=True, wait=True)
            if isinstance(msg, m.SetOption):
                self._set_option(msg)
            elif isinstance(msg, m.UgiNewGame):
                self.engine.new_game()
                self._between_games()
            elif isinstance(msg, m.SetPosition):
                self._set_position(msg)
            elif isinstance(msg, m.Go):
                self._go(msg)
        return True

    def _handshake(self) -> None:
        self.write(m.IdName(self.engine.name).to_line())
        self.write(m.IdAuthor(self.engine.author).to_line())
        for decl in self.engine.all_options():
            if decl.name == m.GAME_OPTION:
                decl = m.OptionDecl(decl.name, "combo", self.engine.game.name, vars=decl.vars)
            self.write(decl.to_line())
        self.write("ugiok")

    def _set_option(self, msg: m.SetOption) -> None:
        game_before = self.engine.game
        try:
            self.engine.set_option(msg.name, msg.value)
        except ProtocolError as exc:
            self.error(f"setoption: {exc}")
            return
        if self.engine.game is not game_before:
            self._fen, self._moves = None, ()
            self._position = self.engine.game.start()

    def _set_position(self, msg: m.SetPosition) -> None:
        game = self.engine.game
        start: Position | None = None
        todo: tuple[str, ...] = msg.moves
        # A move list that extends the last one: play only the new moves.
        if (self._position is not None and msg.fen == self._fen
                and msg.moves[: len(self._moves)] == self._moves):
            start, todo = self._position, msg.moves[len(self._moves):]
        try:
            if start is None:
                start = game.from_fen(msg.fen) if msg.fen is not None else game.start()
            position = start
            for ply, move in enumerate(todo, start=len(msg.moves) - len(todo) + 1):
                try:
                    position = position.play(move)
                except GameError as exc:
                    raise GameError(f"ply {ply}: {exc}") from None
        except Exception as exc:  # GameError, or a referee bug: report, never crash
            self._fen, self._moves, self._position = None, (), None
            self.error(f"position ({game.name}): {exc}")
            return
        self._fen, self._moves, self._position = msg.fen, msg.moves, position

    def _go(self, go: m.Go) -> None:
        position = self._position
        if position is None:
            self.error("go without a valid position")
            self.write(m.BestMove("none").to_line())
            return
        mover_is_p1 = position.to_move is position.game.first
        limits = SearchLimits.from_go(go, mover_is_p1, start=self._read_at,
                                      reserve_ms=self.overhead.reserve_ms())
        self._limits = limits
        self._search = threading.Thread(
            target=self._search_and_answer, args=(position, limits), name="search", daemon=True
        )
        self._search.start()

    def _search_and_answer(self, position: Position, limits: SearchLimits) -> None:
        """The worker thread: whatever the engine does, exactly one bestmove.

        A timed search runs with Python's cyclic garbage collector off, and
        the SDK collects once its ``bestmove`` is written, while the opponent
        thinks: a full collection in the middle of a search walks every
        object the search made (an mcts tree: up to 40 ms, measured, which
        lost games on time at ``go movetime 50``; bench/README.md §Sample
        engines keep their time)."""
        timed = limits.budget is not None and not limits.infinite
        if timed:
            gc.disable()
        limits.begin()
        legal = position.legal_moves()
        move = legal[0] if legal else "none"
        if not legal:
            self.error("go in a finished game")
        else:
            try:
                chosen = self.engine.choose_move(position, limits)
                if isinstance(chosen, str) and chosen in legal:
                    move = chosen  # canonical already: no parse on the way to bestmove
                elif isinstance(chosen, str) and position.is_legal(chosen):
                    move = position.parse_move(chosen)
                else:
                    self.error(f"engine chose {chosen!r}, not legal here; playing {move}")
            except Exception as exc:  # an engine bug must not leave the arbiter waiting
                self.error(f"search failed: {type(exc).__name__}: {exc}; playing {move}")
        if limits.infinite:
            limits.stop_event.wait()  # bestmove only after stop in infinite mode
            limits.begin()  # (waiting is no work)
        limits.checked()  # the stretch from the engine's last look to the answer
        self.write(m.BestMove(move).to_line())
        if timed:
            assert limits.budget is not None
            answered = time.monotonic()
            gc.enable()
            gc.collect()
            collected = time.monotonic()
            late = answered - (limits.start + limits.budget)
            self.overhead.record(late * 1000, limits.longest_stall * 1000, (collected - answered) * 1000)

    def _between_games(self) -> None:
        """``uginewgame``, on no clock: collect and freeze what the game's
        selection built since start-up (the referee's tables of the game
        ``setoption`` chose, which :func:`run`'s freeze could not see), so
        the collection after each answer walks only what the game makes;
        then measure the machine (:func:`scheduling_delay_ms`) into the
        overhead, the reserve of the first moves."""
        gc.collect()
        gc.freeze()
        self.overhead.record(0.0, scheduling_delay_ms())

    def wait_search(self) -> None:
        """Wait until the running search (if any) has written its ``bestmove``
        (for callers that drive :meth:`handle` themselves, such as tests)."""
        self._finish_search(stop=False, wait=True)

    def _finish_search(self, *, stop: bool, wait: bool) -> None:
        if self._search is None:
            return
        if stop and self._limits is not None:
            self._limits.stop_event.set()
        if wait:
            self._search.join()
        if not self._search.is_alive():
            self._search = None


def run(engine_class: type[Engine], argv: list[str] | None = None) -> None:
    """Entry point of ``python -m sample_engines.<name> [--game G]``."""
    parser = argparse.ArgumentParser(description=f"{engine_class.name}: a UGI engine "
                                     "(see specs/protocol.md); speaks on stdin/stdout.")
    parser.add_argument("--game", default="troll", choices=GAME_NAMES,
                        help="the game to play when the arbiter does not set "
                        f"{m.GAME_OPTION} (default: troll)")
    for decl in engine_class.options:
        if decl.type in ("spin", "string", "combo", "check"):
            parser.add_argument(f"--{decl.name.lower().replace(' ', '-')}", dest=f"opt_{decl.name}",
                                metavar="VALUE", help=f"initial value of option {decl.name}")
    args = parser.parse_args(argv)
    engine = engine_class(args.game)
    for decl in engine_class.options:
        value = getattr(args, f"opt_{decl.name}", None)
        if value is not None:
            try:
                engine.set_option(decl.name, value)
            except ProtocolError as exc:
                parser.error(str(exc))
    # what the engine made to start (its modules, its game's tables) lives as
    # long as the process: no collection walks it again (each timed search's
    # collection after its answer, EngineRunner._search_and_answer)
    gc.freeze()
    try:
        EngineRunner(engine).run()
    except KeyboardInterrupt:
        pass
    finally:
        try:
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            pass
    # Daemon search threads must not hold the exit; skip interpreter teardown.
    os._exit(0)


__all__ = [
    "Engine", "EngineRunner", "SearchLimits", "OverheadMeter", "run", "time_budget_ms",
    "query_answer", "MOVE_OVERHEAD_MS", "MAX_UNCHECKED_MS", "OVERHEAD_WINDOW",
    "MAX_RESERVE_SHARE",
    # the time management, re-exported from arbiter.sdk_time
    "DEFAULT_MOVES_TO_GO", "MAX_CLOCK_SHARE", "DEFAULT_BUDGET_MS", "scheduling_delay_ms",
]

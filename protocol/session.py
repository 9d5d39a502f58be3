"""The state of one engine as the arbiter sees it (h11-style, no I/O).

The arbiter passes every line it wants to write through :meth:`EngineSession.send`
and every line it reads through :meth:`EngineSession.receive`; the session
checks that the conversation follows ``specs/protocol.md`` and raises
:class:`~protocol.codec.ProtocolError` when either side breaks it.  Deadlines,
pipes and processes are the caller's business.

States, and what moves between them, are data (:data:`SENDS`,
:data:`RECEIVES`, as ``protocol/wire.py`` keeps the wire's)::

    NEW --ugi--> STARTING --ugiok--> IDLE --go--> SEARCHING --bestmove--> IDLE
    any state --quit--> CLOSED
    an engine line that breaks the protocol --> ERROR

ERROR is final, as h11's is: the first violation of the engine is kept
(:attr:`EngineSession.error`), and every later line or message (but ``quit``)
is refused with it, so nothing after a broken conversation is taken as if it
were whole.  A malformed ``info`` line is not a violation (it costs the engine
nothing: specs/match.md §Engine errors).  The conformance checker, which lists
every violation of a run rather than the first, makes its session with
``tolerant=True``: violations are raised and the state stays.

The arbiter's hot path (one ``go`` and one ``bestmove`` per ply) is served
without building what it does not need, with the same state changes and
checks: :meth:`EngineSession.send_go` formats ``go`` from a
:class:`~protocol.search.SearchLimits` without a message object, and
:meth:`EngineSession.receive` recognises a plain ``bestmove <move>`` and a
bare ``readyok`` before it reaches for the tokenizer.
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import replace

from . import messages as m
from .codec import parse_engine_line
from .errors import ProtocolError
from .limits import MAX_COMBO_VARS, MAX_OPTIONS
from .messages import ArbiterMessage, EngineMessage
from .search import SearchLimits, go_bytes, go_message


class SessionState(enum.Enum):
    NEW = "new"  # nothing sent yet: ugi comes first
    STARTING = "starting"  # ugi sent, ugiok not yet received
    IDLE = "idle"  # handshake done, no search running
    SEARCHING = "searching"  # between go and bestmove
    CLOSED = "closed"  # quit sent
    ERROR = "error"  # the engine broke the protocol: nothing more is taken


_S = SessionState

#: state -> {message the arbiter may send: the state after it}
#: (specs/protocol.md §Order).  ``stop`` when idle is harmless (the search
#: may just have ended); a broken engine may still be told to ``quit``.
SENDS: dict[SessionState, dict[type, SessionState]] = {
    _S.NEW: {m.Ugi: _S.STARTING, m.Quit: _S.CLOSED},
    _S.STARTING: {m.Quit: _S.CLOSED},
    _S.IDLE: {m.IsReady: _S.IDLE, m.Stop: _S.IDLE, m.SetOption: _S.IDLE, m.Go: _S.SEARCHING,
              m.Query: _S.IDLE, m.UgiNewGame: _S.IDLE, m.SetPosition: _S.IDLE, m.Quit: _S.CLOSED},
    _S.SEARCHING: {m.IsReady: _S.SEARCHING, m.Stop: _S.SEARCHING, m.Quit: _S.CLOSED},
    _S.CLOSED: {},
    _S.ERROR: {m.Quit: _S.CLOSED},
}

#: why a message not in :data:`SENDS` is refused: per (state, message type)
#: where it has its own reason, else per state ({line}, {name}, {error})
SEND_REFUSALS: dict[SessionState | tuple[SessionState, type], str] = {
    _S.NEW: "cannot send {line!r} before ugi",
    _S.STARTING: "cannot send {line!r} before ugiok",
    _S.SEARCHING: "cannot send {name} during a search (send stop and wait for bestmove)",
    _S.CLOSED: "cannot send {line!r}: the session is closed",
    _S.ERROR: "cannot send {line!r}: the engine broke the protocol ({error})",
    **{(state, m.Ugi): "ugi was already sent" for state in (_S.STARTING, _S.IDLE, _S.SEARCHING)},
}

#: state -> {engine message taken: the state after it}.  ``info`` is taken
#: in every state but ERROR; after ``quit`` (CLOSED) whatever the engine
#: still says is moot and taken unchecked.
RECEIVES: dict[SessionState, dict[type, SessionState]] = {
    _S.STARTING: {m.IdName: _S.STARTING, m.IdAuthor: _S.STARTING, m.OptionDecl: _S.STARTING,
                  m.UgiOk: _S.IDLE},
    _S.IDLE: {m.ReadyOk: _S.IDLE, m.Response: _S.IDLE},
    _S.SEARCHING: {m.ReadyOk: _S.SEARCHING, m.Response: _S.SEARCHING, m.BestMove: _S.IDLE},
}

_HANDSHAKE = (m.IdName, m.IdAuthor, m.OptionDecl, m.UgiOk)

#: why an engine message not in :data:`RECEIVES` is refused ({command}, {move})
RECEIVE_REFUSALS: dict[SessionState | tuple[SessionState, type], str] = {
    _S.NEW: "{command} before ugi was sent",
    _S.STARTING: "{command} during the handshake (before ugiok)",
    **{(state, kind): "{command} after the handshake ended"
       for state in (_S.IDLE, _S.SEARCHING) for kind in _HANDSHAKE},
    (_S.IDLE, m.BestMove): "bestmove {move!r} while not searching (a second bestmove?)",
}


def _refusal(table: dict[SessionState | tuple[SessionState, type], str], state: SessionState,
             kind: type) -> str:
    return table.get((state, kind)) or table.get(state) or f"{kind.__name__} in state {state.value}"


class EngineSession:
    """One engine's side of the protocol, seen from the arbiter.

    ``tolerant``: a violation of the engine's is raised but does not move
    the session to ERROR (the conformance checker, which goes on to list
    every violation)."""

    def __init__(self, *, tolerant: bool = False) -> None:
        self.state = SessionState.NEW
        self.tolerant = tolerant
        #: the engine's first violation, once in ERROR
        self.error: str | None = None
        self.name: str | None = None
        self.author: str | None = None
        #: Declared options by name, in declaration order.
        self.options: dict[str, m.OptionDecl] = {}
        self.ugi_sent = False
        #: ``stop`` was sent during the current search.
        self.stop_sent = False
        self._last_go: m.Go | None = None
        self._last_limits: tuple[SearchLimits, bool] | None = None
        self._pending_ready = 0
        self._pending_queries: deque[str] = deque()
        #: the engine reads ``movestogo`` (it declares MOVESTOGO_OPTION, true)
        self._movestogo = False

    # -- lookups -------------------------------------------------------------

    def option(self, name: str) -> m.OptionDecl | None:
        """The declared option called ``name`` (names are case-insensitive)."""
        found = self.options.get(name)
        if found is not None:
            return found
        lowered = name.lower()
        for declared_name, decl in self.options.items():
            if declared_name.lower() == lowered:
                return decl
        return None

    @property
    def game_option(self) -> m.OptionDecl | None:
        """The engine's game-selection combo (:data:`~protocol.messages.GAME_OPTION`)."""
        decl = self.option(m.GAME_OPTION)
        return decl if decl is not None and decl.type == "combo" else None

    def plays(self, game: str) -> bool | None:
        """Whether the engine says it plays ``game``: None when it declares no
        game option (it plays what it was configured for)."""
        decl = self.game_option
        if decl is None:
            return None
        return any(var.lower() == game.lower() for var in decl.vars)

    @property
    def reads_movestogo(self) -> bool:
        """The engine declared the check option
        :data:`~protocol.messages.MOVESTOGO_OPTION` and its value (the
        default, or the last ``setoption``) is ``true``: :meth:`send_go`
        sends ``movestogo`` to it.  Otherwise the ``go`` lines made from
        limits keep to the forms ``ugi.md`` lists."""
        return self._movestogo

    def _note_movestogo(self, value: str | None) -> None:
        decl = self.option(m.MOVESTOGO_OPTION)
        self._movestogo = decl is not None and decl.type == "check" and value == "true"

    @property
    def last_go(self) -> m.Go | None:
        """The ``go`` of the current (or last) search (made on demand when it
        was sent by :meth:`send_go`)."""
        if self._last_go is None and self._last_limits is not None:
            self._last_go = go_message(*self._last_limits)
        return self._last_go

    @property
    def pending_ready(self) -> int:
        """``isready`` sent and not answered yet."""
        return self._pending_ready

    @property
    def pending_queries(self) -> tuple[str, ...]:
        return tuple(self._pending_queries)

    # -- arbiter -> engine ---------------------------------------------------

    def send(self, msg: ArbiterMessage) -> bytes:
        """The bytes to write for ``msg`` (its line and LF), after checking
        it is allowed now (:data:`SENDS`); updates the state."""
        state, kind = self.state, type(msg)
        after = SENDS[state].get(kind)
        if after is None:
            raise ProtocolError(_refusal(SEND_REFUSALS, state, kind).format(
                line=msg.to_line(), name=kind.__name__, error=self.error))
        if isinstance(msg, m.SetOption):
            msg = self._checked_option(msg)
        elif isinstance(msg, m.Go):
            self.stop_sent = False
            self._last_go, self._last_limits = msg, None
        elif isinstance(msg, m.IsReady):
            self._pending_ready += 1
        elif isinstance(msg, m.Stop):
            self.stop_sent = self.stop_sent or state is SessionState.SEARCHING
        elif isinstance(msg, m.Query):
            self._pending_queries.append(msg.what)
        elif isinstance(msg, m.Ugi):
            self.ugi_sent = True
        self.state = after
        return msg.to_line().encode("utf-8") + b"\n"

    def _checked_option(self, msg: m.SetOption) -> m.SetOption:
        decl = self.option(msg.name)
        if decl is None:
            raise ProtocolError(f"option {msg.name!r} was not declared by the engine")
        value = decl.validate_value(msg.value)
        if decl.name.lower() == m.MOVESTOGO_OPTION.lower():
            self._note_movestogo(value)
        return m.SetOption(decl.name, value)

    def send_go(self, limits: SearchLimits, mover_is_p1: bool) -> bytes:
        """``send(go_message(limits, mover_is_p1))`` for the hot path: the
        bytes of the ``go`` line and the state moved to SEARCHING, without a
        message object (:attr:`last_go` makes it if asked for).

        ``limits.moves_to_go`` is sent only to an engine that
        :attr:`reads_movestogo`; for any other it is left out."""
        state = self.state
        if state is not SessionState.IDLE:
            raise ProtocolError(_refusal(SEND_REFUSALS, state, m.Go).format(
                line="go", name="Go", error=self.error))
        if limits.moves_to_go is not None and not self._movestogo:
            limits = replace(limits, moves_to_go=None)
        data = go_bytes(limits, mover_is_p1)
        self.state = SessionState.SEARCHING
        self.stop_sent = False
        self._last_go = None
        self._last_limits = (limits, mover_is_p1)
        return data

    # -- engine -> arbiter ---------------------------------------------------

    def receive(self, line: str) -> EngineMessage | None:
        """Parse a line the engine wrote and apply it (:data:`RECEIVES`);
        None for blank or unknown lines.  Raises ProtocolError for malformed
        lines (``command`` tells which) and for messages not allowed now; but
        for a malformed ``info`` line, the session is then in ERROR.

        ``line`` is one line as :class:`~protocol.codec.LineSplitter` gives
        them (no LF).  The two lines every game waits for are recognised
        first, without the tokenizer: exactly ``bestmove <move>`` during a
        search, and exactly ``readyok`` when an ``isready`` is pending."""
        state = self.state
        if (state is SessionState.SEARCHING and line.startswith("bestmove ") and len(line) > 9
                and line.count(" ") == 1 and line.isascii() and "\t" not in line
                and "\r" not in line and "\n" not in line):
            self.state = SessionState.IDLE
            return _checked_bestmove(line[9:])
        elif (line == "readyok" and self._pending_ready
              and (state is SessionState.IDLE or state is SessionState.SEARCHING)):
            self._pending_ready -= 1
            return m.ReadyOk()
        if state is SessionState.ERROR:
            raise ProtocolError(f"the engine already broke the protocol ({self.error}); "
                                f"{line[:80]!r} not taken")
        try:
            msg = parse_engine_line(line)
            if msg is None or state is SessionState.CLOSED or isinstance(msg, m.Info):
                return msg  # unknown, moot after quit, or info (allowed at any time)
            self.state = self._received(state, msg)
            return msg
        except ProtocolError as exc:
            if exc.command != "info" and not self.tolerant:
                self.state, self.error = SessionState.ERROR, str(exc)
            raise

    def _received(self, state: SessionState, msg: EngineMessage) -> SessionState:
        """The state after ``msg``, its effects applied; ProtocolError if refused."""
        kind = type(msg)
        after = RECEIVES.get(state, {}).get(kind)
        command = _command(msg)
        if after is None:
            raise ProtocolError(_refusal(RECEIVE_REFUSALS, state, kind).format(
                command=command, move=getattr(msg, "move", None)), command=command)
        if isinstance(msg, m.ReadyOk):
            if not self._pending_ready:
                raise ProtocolError("readyok without isready", command="readyok")
            self._pending_ready -= 1
        elif isinstance(msg, m.Response):
            if not self._pending_queries:
                raise ProtocolError("response without query", command="response")
            self._pending_queries.popleft()
        elif isinstance(msg, m.IdName):
            self.name = msg.name
        elif isinstance(msg, m.IdAuthor):
            self.author = msg.author
        elif isinstance(msg, m.OptionDecl):
            self._declare(msg)
        elif isinstance(msg, m.UgiOk):
            decl = self.option(m.MOVESTOGO_OPTION)
            self._note_movestogo(None if decl is None else decl.default)
        return after

    def _declare(self, msg: m.OptionDecl) -> None:
        if self.option(msg.name) is not None:
            raise ProtocolError(f"option {msg.name!r} declared twice", command="option")
        if len(self.options) >= MAX_OPTIONS:
            raise ProtocolError(f"more than {MAX_OPTIONS} options declared", command="option")
        if len(msg.vars) > MAX_COMBO_VARS:
            raise ProtocolError(
                f"option {msg.name!r} has more than {MAX_COMBO_VARS} vars", command="option"
            )
        self.options[msg.name] = msg


def _checked_bestmove(move: str) -> m.BestMove:
    """``BestMove(move)`` for a move already known to be what its validation
    asks of a token (non-empty ASCII, no blank, tab, CR or LF: the cheap case
    of :meth:`EngineSession.receive` checked that), without checking it again:
    the validation costs more than the rest of the cheap case together."""
    bestmove = object.__new__(m.BestMove)
    object.__setattr__(bestmove, "move", move)  # a frozen dataclass: set as its __init__ does
    object.__setattr__(bestmove, "ponder", None)
    return bestmove


def _command(msg: EngineMessage) -> str:
    return msg.to_line().split(" ", 1)[0]

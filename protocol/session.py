"""The state of one engine as the arbiter sees it (h11-style, no I/O).

The arbiter passes every line it wants to write through :meth:`EngineSession.send`
and every line it reads through :meth:`EngineSession.receive`; the session
checks that the conversation follows ``specs/protocol.md`` and raises
:class:`~protocol.codec.ProtocolError` when either side breaks it.  Deadlines,
pipes and processes are the caller's business.

States::

    STARTING --ugiok--> IDLE --go--> SEARCHING --bestmove--> IDLE
    any state --quit--> CLOSED

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
    STARTING = "starting"  # before ugiok (also before ugi is sent)
    IDLE = "idle"  # handshake done, no search running
    SEARCHING = "searching"  # between go and bestmove
    CLOSED = "closed"  # quit sent


class EngineSession:
    """One engine's side of the protocol, seen from the arbiter."""

    def __init__(self) -> None:
        self.state = SessionState.STARTING
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
        it is allowed now; updates the state."""
        state = self.state
        name = type(msg).__name__
        if state is SessionState.CLOSED:
            raise ProtocolError(f"cannot send {msg.to_line()!r}: the session is closed")
        if isinstance(msg, m.Quit):
            self.state = SessionState.CLOSED
            return self._bytes(msg)
        if isinstance(msg, m.Ugi):
            if self.ugi_sent:
                raise ProtocolError("ugi was already sent")
            self.ugi_sent = True
            return self._bytes(msg)
        if not self.ugi_sent:
            raise ProtocolError(f"cannot send {msg.to_line()!r} before ugi")
        if isinstance(msg, m.IsReady):
            if state is SessionState.STARTING:
                raise ProtocolError("cannot send isready before ugiok")
            self._pending_ready += 1
            return self._bytes(msg)
        if isinstance(msg, m.Stop):
            if state is SessionState.SEARCHING:
                self.stop_sent = True
            elif state is SessionState.STARTING:
                raise ProtocolError("cannot send stop before ugiok")
            return self._bytes(msg)  # in IDLE: harmless (the search may just have ended)
        if state is SessionState.STARTING:
            raise ProtocolError(f"cannot send {msg.to_line()!r} before ugiok")
        if state is SessionState.SEARCHING:
            raise ProtocolError(f"cannot send {name} during a search (send stop and wait for bestmove)")
        # IDLE from here on.
        if isinstance(msg, m.SetOption):
            decl = self.option(msg.name)
            if decl is None:
                raise ProtocolError(f"option {msg.name!r} was not declared by the engine")
            value = decl.validate_value(msg.value)
            if decl.name.lower() == m.MOVESTOGO_OPTION.lower():
                self._note_movestogo(value)
            return self._bytes(m.SetOption(decl.name, value))
        if isinstance(msg, m.Go):
            self.state = SessionState.SEARCHING
            self.stop_sent = False
            self._last_go = msg
            self._last_limits = None
            return self._bytes(msg)
        if isinstance(msg, m.Query):
            self._pending_queries.append(msg.what)
            return self._bytes(msg)
        if isinstance(msg, (m.UgiNewGame, m.SetPosition)):
            return self._bytes(msg)
        raise ProtocolError(f"not an arbiter message: {msg!r}")

    @staticmethod
    def _bytes(msg: ArbiterMessage) -> bytes:
        return msg.to_line().encode("utf-8") + b"\n"

    def send_go(self, limits: SearchLimits, mover_is_p1: bool) -> bytes:
        """``send(go_message(limits, mover_is_p1))`` for the hot path: the
        bytes of the ``go`` line and the state moved to SEARCHING, without a
        message object (:attr:`last_go` makes it if asked for).

        ``limits.moves_to_go`` is sent only to an engine that
        :attr:`reads_movestogo`; for any other it is left out."""
        state = self.state
        if state is not SessionState.IDLE:
            if state is SessionState.SEARCHING:
                raise ProtocolError("cannot send Go during a search (send stop and wait for bestmove)")
            if state is SessionState.CLOSED:
                raise ProtocolError("cannot send go: the session is closed")
            raise ProtocolError("cannot send go before ugiok")
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
        """Parse a line the engine wrote and apply it; None for blank or
        unknown lines.  Raises ProtocolError for malformed lines (``command``
        tells which) and for messages not allowed now.

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
        msg = parse_engine_line(line)
        if msg is None or state is SessionState.CLOSED:
            return msg  # after quit, whatever the engine still says is moot
        if isinstance(msg, m.Info):
            return msg  # allowed at any time
        if state is SessionState.STARTING:
            return self._receive_handshake(msg)
        if isinstance(msg, (m.IdName, m.IdAuthor, m.OptionDecl, m.UgiOk)):
            raise ProtocolError(f"{msg.to_line().split()[0]} after the handshake ended", command=_command(msg))
        if isinstance(msg, m.ReadyOk):
            if not self._pending_ready:
                raise ProtocolError("readyok without isready", command="readyok")
            self._pending_ready -= 1
            return msg
        if isinstance(msg, m.BestMove):
            if state is not SessionState.SEARCHING:
                raise ProtocolError(
                    f"bestmove {msg.move!r} while not searching (a second bestmove?)",
                    command="bestmove",
                )
            self.state = SessionState.IDLE
            return msg
        if isinstance(msg, m.Response):
            if not self._pending_queries:
                raise ProtocolError("response without query", command="response")
            self._pending_queries.popleft()
            return msg
        raise ProtocolError(f"unexpected {msg!r}")  # pragma: no cover

    def _receive_handshake(self, msg: EngineMessage) -> EngineMessage:
        if not self.ugi_sent:
            raise ProtocolError(f"{_command(msg)} before ugi was sent", command=_command(msg))
        if isinstance(msg, m.IdName):
            self.name = msg.name
        elif isinstance(msg, m.IdAuthor):
            self.author = msg.author
        elif isinstance(msg, m.OptionDecl):
            if self.option(msg.name) is not None:
                raise ProtocolError(f"option {msg.name!r} declared twice", command="option")
            if len(self.options) >= MAX_OPTIONS:
                raise ProtocolError(f"more than {MAX_OPTIONS} options declared", command="option")
            if len(msg.vars) > MAX_COMBO_VARS:
                raise ProtocolError(
                    f"option {msg.name!r} has more than {MAX_COMBO_VARS} vars", command="option"
                )
            self.options[msg.name] = msg
        elif isinstance(msg, m.UgiOk):
            self.state = SessionState.IDLE
            decl = self.option(m.MOVESTOGO_OPTION)
            self._note_movestogo(None if decl is None else decl.default)
        else:
            raise ProtocolError(f"{_command(msg)} during the handshake (before ugiok)",
                                command=_command(msg))
        return msg


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

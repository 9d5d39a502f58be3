"""How to run one engine, and the deadlines of its conversation."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field

from arbiter.engine.errors import EngineStartError
from protocol import limits

__all__ = ["EngineConfig", "EngineTimeouts"]


@dataclass
class EngineConfig:
    """How to run one engine (cutechess-cli's per-engine settings).

    ``cmd`` is a command line, split like a shell would (``"python3 -m
    sample_engines.mcts"``); ``args`` are appended.  ``tc`` is a time-control
    string (see :mod:`arbiter.clock`), None to use the match's.  ``name``
    None means: the engine's own ``id name`` once it has said it.
    """

    cmd: str
    name: str | None = None
    args: list[str] = field(default_factory=list)
    dir: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    options: dict[str, str | None] = field(default_factory=dict)
    tc: str | None = None
    timemargin_ms: int = 0

    def argv(self) -> list[str]:
        try:
            words = shlex.split(self.cmd)
        except ValueError as exc:
            raise EngineStartError(self.label, f"bad command {self.cmd!r}: {exc}") from None
        if not words:
            raise EngineStartError(self.label, "empty command")
        return words + list(self.args)

    @property
    def label(self) -> str:
        """A name for messages before the engine has introduced itself."""
        if self.name:
            return self.name
        try:
            words = shlex.split(self.cmd)
        except ValueError:
            words = self.cmd.split()
        if not words:
            return "engine"
        if len(words) >= 3 and words[1] == "-m":
            return words[2]
        return os.path.basename(words[-1] if os.path.basename(words[0]).startswith("python") else words[0])

    def to_dict(self) -> dict:
        return {"cmd": self.cmd, "name": self.name, "args": list(self.args), "dir": self.dir,
                "env": dict(self.env), "options": dict(self.options), "tc": self.tc,
                "timemargin_ms": self.timemargin_ms}


@dataclass(frozen=True)
class EngineTimeouts:
    """Deadlines (seconds) for the conversation outside searches.  Defaults are
    the ones ``specs/protocol.md`` promises engine authors (:mod:`protocol.limits`).
    ``term_grace`` is the arbiter's own: how long SIGTERM gets before SIGKILL."""

    handshake: float = limits.HANDSHAKE_TIMEOUT_MS / 1000
    ready: float = limits.READY_TIMEOUT_MS / 1000
    stop: float = limits.STOP_TIMEOUT_MS / 1000
    quit_grace: float = limits.QUIT_GRACE_MS / 1000
    term_grace: float = 0.5

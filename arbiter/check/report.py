"""The report model of a conformance run: what was asked, what each check found.

:class:`CheckSettings` are the deadlines and sizes of a run, :class:`Status`
the verdict of one check, :class:`CheckResult` one check's verdict with its
evidence, :class:`CheckReport` the whole run.  Every class serialises to the
``--json`` report of ``specs/check.md`` §Verdicts with ``to_dict``.  Nothing
here talks to an engine.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from protocol import limits

__all__ = ["Status", "CheckSettings", "CheckResult", "CheckReport"]


class Status(enum.StrEnum):
    PASS = "PASS"
    WARN = "WARN"  # a problem the arbiter can live with (or a non-mandatory check failed)
    FAIL = "FAIL"  # a mandatory check failed
    SKIP = "SKIP"  # not run: an earlier failure makes it meaningless


@dataclass(frozen=True)
class CheckSettings:
    """Deadlines and sizes of a run (seconds unless the name says ms).

    The defaults are the deadlines the arbiter itself uses in matches
    (``protocol/limits.py``).  ``margin_ms`` is how far past a timed budget
    (``movetime``, the mover's clock) a ``bestmove`` may arrive."""

    quick: bool = False
    handshake_timeout: float = limits.HANDSHAKE_TIMEOUT_MS / 1000
    ready_timeout: float = limits.READY_TIMEOUT_MS / 1000
    stop_timeout: float = limits.STOP_TIMEOUT_MS / 1000
    quit_grace: float = limits.QUIT_GRACE_MS / 1000
    stall_timeout: float = 10.0
    margin_ms: int = 100
    movetime_ms: int = 100
    quiet_wait: float = 0.3
    infinite_wait: float = 0.5

    @property
    def selfplay_plies(self) -> int:
        return 40 if self.quick else 150

    @property
    def repeat_plies(self) -> int:
        return 16 if self.quick else 60

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass
class CheckResult:
    """The verdict of one check.  ``transcript`` lines read
    ``[p2   1.234] > go movetime 100``: process number, seconds since it
    started, ``>`` to the engine, ``<`` from it, ``#`` what the checker saw."""

    name: str
    title: str
    mandatory: bool
    status: Status
    expected: str
    happened: str
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    transcript: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"name": self.name, "title": self.title, "mandatory": self.mandatory,
                "status": self.status.value, "expected": self.expected,
                "happened": self.happened, "seconds": round(self.seconds, 3),
                "problems": list(self.problems), "transcript": list(self.transcript)}


@dataclass
class CheckReport:
    game: str
    engine: str
    command: str
    settings: CheckSettings
    id_name: str | None = None
    id_author: str | None = None
    options: list[str] = field(default_factory=list)
    results: list[CheckResult] = field(default_factory=list)
    seconds: float = 0.0
    processes: int = 0
    pids: list[int] = field(default_factory=list)  # of the engine processes started

    @property
    def passed(self) -> bool:
        """Every mandatory check passed (WARNs allowed)."""
        return all(r.status is not Status.FAIL and not (r.mandatory and r.status is Status.SKIP)
                   for r in self.results)

    def counts(self) -> dict[str, int]:
        return {s.value: sum(1 for r in self.results if r.status is s) for s in Status}

    def result(self, name: str) -> CheckResult:
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(name)

    def to_dict(self) -> dict:
        return {"game": self.game, "engine": self.engine, "command": self.command,
                "id_name": self.id_name, "id_author": self.id_author, "options": self.options,
                "passed": self.passed, "counts": self.counts(), "seconds": round(self.seconds, 3),
                "processes": self.processes, "pids": list(self.pids),
                "settings": self.settings.to_dict(),
                "checks": [r.to_dict() for r in self.results]}

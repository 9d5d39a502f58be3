"""A check's declaration and the verdict it builds (``specs/check.md`` §The
checks, §Verdicts).

:func:`check` declares a check (its name, title and expected behaviour as
``specs/check.md`` words them, what it needs to be worth running, and the
async function that runs it) as a :class:`CheckSpec`; each run of one gets a
:class:`Context`, which collects its problems (FAIL, or WARN for an advice
check), warnings and notes and keeps the transcript lines that show them
(:meth:`Context.transcript`: each problem's lines with a little context, at
most :data:`SHOWN_LINES`).  A check ends early by raising the :class:`Failed`
that :meth:`Context.fail` returns, or :class:`NotApplicable` when it tests an
extension the engine does not declare.

The engine under examination and the conversation steps the checks share
are :class:`arbiter.check.checker.Checker`'s; that module re-exports these
names.  Pure: no I/O, no engine.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from arbiter.check.probe import Line, Probe

if TYPE_CHECKING:
    from arbiter.check.checker import Checker

__all__ = ["Failed", "NotApplicable", "Context", "CheckSpec", "check", "ms", "Needs", "Run", "SHOWN_LINES"]

#: Transcript lines shown per problem in a report.
SHOWN_LINES = 40

#: What a check needs to be worth running: ``none`` (always runs), ``start`` (a
#: handshake succeeded), ``game`` (the engine plays the game), ``search`` (the
#: engine still answers ``go``).
Needs = Literal["none", "start", "game", "search"]


class Failed(Exception):
    """Ends a check early (its problem is already recorded)."""


class NotApplicable(Exception):
    """The check tests an extension the engine does not declare: nothing to
    test, so it PASSes with this reason (``specs/check.md`` §Verdicts)."""


@dataclass
class Context:
    """The verdict one check is building: problems (FAIL, or WARN for an advice
    check), warnings, notes for a PASS, and the transcript lines to show."""

    spec: CheckSpec
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    focus: list[Line] = field(default_factory=list)
    slices: list[tuple[Probe, int]] = field(default_factory=list)  # (probe, first line index)
    stalled: bool = False  # some go got no bestmove at all
    answered: bool = False  # some go got a bestmove
    good: int = 0  # searches answered with a legal move in time

    def problem(self, text: str, *lines: Line | None) -> None:
        self.problems.append(text)
        self.focus.extend(line for line in lines if line is not None)

    def fail(self, text: str, *lines: Line | None) -> Failed:
        self.problem(text, *lines)
        return Failed(text)

    def warn(self, text: str, *lines: Line | None) -> None:
        self.warnings.append(text)
        self.focus.extend(line for line in lines if line is not None)

    def watch(self, probe: Probe) -> None:
        if not any(p is probe for p, _ in self.slices):
            self.slices.append((probe, len(probe.lines)))

    def transcript(self) -> list[str]:
        """The lines worth showing: each problem's lines with a little context,
        or, without any, the start and end of what the check exchanged."""
        lines: list[Line] = []
        for probe, start in self.slices:
            lines.extend(probe.lines[start:])
        if not lines:
            return [line.render() for line in self.focus[:SHOWN_LINES]]
        index_of = {id(line): i for i, line in enumerate(lines)}
        shown = _excerpt(lines, self._kept(lines, index_of))
        extra = [line.render() for line in self.focus if id(line) not in index_of][:5]
        return extra + shown

    def _kept(self, lines: list[Line], index_of: dict[int, int]) -> list[int]:
        """Indexes of ``lines`` to show: two lines around each focus line, or
        the first 8 and the last 16; at most :data:`SHOWN_LINES`."""
        keep: set[int] = set()
        for line in self.focus:
            i = index_of.get(id(line))
            if i is not None:
                keep.update(range(max(0, i - 2), min(len(lines), i + 3)))
        if not keep:
            keep.update(range(min(8, len(lines))))
            keep.update(range(max(0, len(lines) - 16), len(lines)))
        chosen = sorted(keep)
        if len(chosen) > SHOWN_LINES:
            chosen = chosen[:SHOWN_LINES // 2] + chosen[-SHOWN_LINES // 2:]
        return chosen


def _excerpt(lines: list[Line], chosen: list[int]) -> list[str]:
    """The chosen lines rendered, each gap shown as ``... N lines ...``."""
    shown: list[str] = []
    previous = -1
    for i in chosen:
        if previous >= 0 and i > previous + 1:
            shown.append(f"... {i - previous - 1} lines ...")
        shown.append(lines[i].render())
        previous = i
    return shown


Run = Callable[["Checker", Context], Awaitable[None]]


@dataclass(frozen=True)
class CheckSpec:
    """A named check (``specs/check.md`` §The checks).  ``expected`` is the
    text of the spec's table, with ``{placeholders}`` for the run's numbers
    (:meth:`Checker.format_values`); ``searches`` is the rough number of waits,
    for the safety deadline."""

    name: str
    title: str
    expected: str
    mandatory: bool
    needs: Needs
    run: Run
    searches: int = 2

    def expected_text(self, checker: Checker) -> str:
        return self.expected.format(**checker.format_values())


def check(name: str, title: str, expected: str, *, mandatory: bool = True, needs: Needs = "game",
          searches: int = 2) -> Callable[[Run], CheckSpec]:
    """Declare a check: the decorated function becomes its :class:`CheckSpec`."""
    def declare(run: Run) -> CheckSpec:
        return CheckSpec(name, title, expected, mandatory, needs, run, searches)
    return declare


def ms(seconds: float) -> str:
    ms = seconds * 1000
    return f"{ms:.1f} ms" if ms < 10 else f"{ms:.0f} ms"

"""The conformance checker (``arbiter check``, ``specs/check.md``): one engine
against the protocol and the referee.

The package's homes, from the bottom up:

* :mod:`~arbiter.check.report`: the report model (:class:`Status`,
  :class:`CheckSettings`, :class:`CheckResult`, :class:`CheckReport`);
* :mod:`~arbiter.check.features` and :mod:`~arbiter.check.positions` (with
  ``positions.json``): the reference positions from real games, verified by
  the referee when loaded;
* :mod:`~arbiter.check.probe`: the engine process under examination;
* :mod:`~arbiter.check.checker`: what every check works with (the
  :class:`~arbiter.check.checker.Checker` and a check's context);
* ``checks_handshake``, ``checks_search``, ``checks_rules``,
  ``checks_robustness``: the checks, by area;
* :mod:`~arbiter.check.runner`: :func:`run_checks`, the order and the
  scheduling of the checks.

The runner's names are imported on first use, so that running a submodule
(``python3 -m arbiter.check.positions``) does not first import it through
the checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arbiter.check.report import CheckReport, CheckResult, CheckSettings, Status

if TYPE_CHECKING:
    from arbiter.check.runner import CHECKS, check_engine, run_checks

__all__ = ["Status", "CheckSettings", "CheckResult", "CheckReport", "CHECKS", "run_checks",
           "check_engine"]

_RUNNER_NAMES = frozenset({"CHECKS", "check_engine", "run_checks"})


def __getattr__(name: str) -> object:
    if name in _RUNNER_NAMES:
        from arbiter.check import runner
        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

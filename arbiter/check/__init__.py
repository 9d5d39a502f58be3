"""The conformance checker (``arbiter check``, specs/check.md) as a package."""

from arbiter.check.runner import (
    CHECKS,
    CheckReport,
    CheckResult,
    CheckSettings,
    Status,
    check_engine,
    run_checks,
)

__all__ = ["Status", "CheckSettings", "CheckResult", "CheckReport", "CHECKS", "run_checks",
           "check_engine"]

"""What every test process shares: compiled modules kept between processes.

Where the environment sets ``PYTHONDONTWRITEBYTECODE`` (this machine's does),
no process keeps what it compiles: each xdist worker recompiled and
assert-rewrote every test module (about 6 s of CPU per worker), and each
``arbiter`` or engine process a test starts recompiled the ``arbiter`` and
``sample_engines`` modules it imports.  Here the tests keep their bytecode
outside the work tree (:data:`PYCACHE`, so no ``__pycache__`` appears in it,
which is what the variable protects), for this process and, through the
environment, for every process it starts.  Python checks a cached file
against its source's modification time and size before using it, so an edit
is always seen; nothing a test asserts depends on it.  A
``PYTHONPYCACHEPREFIX`` already set is kept.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

#: where the tests' processes keep compiled modules: one directory per user
#: (a shared temporary directory may hold another user's)
PYCACHE = Path(tempfile.gettempdir()) / f"arbiter-tests-pycache-{os.getuid()}"


def _keep_bytecode() -> None:
    prefix = os.environ.get("PYTHONPYCACHEPREFIX") or str(PYCACHE)
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


_keep_bytecode()


#: the test modules that take longest, longest single test first (measured
#: under ``-n 2``: bench/README.md §The test suite's time): started first, so
#: that the run does not end with one worker busy on a long test while the
#: other waits.  (``worksteal`` queues the first half of the order on the
#: first worker and the rest on the second, which then takes from the end of
#: the first one's queue: the slow modules, their module fixtures with them,
#: stay with the first worker and run from the start.)
SLOW_MODULES = (
    "test_browser", "test_pgn_readers", "test_server", "test_cluster", "test_remote", "test_wheel", "test_check",
    "test_readme", "test_protocol_codec", "test_web", "test_ratings_list", "test_tournament", "test_match",
    "test_wire", "test_games_properties", "test_client", "test_hardening_db", "test_records",
    "test_sample_engines", "test_fuzz_inputs", "test_atoll", "test_standings_display",
)

#: the xdist modes that let an idle worker take tests queued for the other
#: (under the default ``load``, the first quarter of the tests is handed out
#: in two fixed blocks at the start: the slow modules first would all land
#: on the first worker)
REBALANCING_MODES = ("worksteal",)


#: how the controller tells its xdist workers its mode (a worker's own option
#: reads ``no``): through the environment they inherit
DIST_VARIABLE = "ARBITER_TESTS_XDIST_MODE"


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller, or a run without workers
        os.environ[DIST_VARIABLE] = str(getattr(config.option, "dist", "no"))


def _slowness(item: pytest.Item) -> int:
    """The rank of ``item``'s module in :data:`SLOW_MODULES` (the others after)."""
    name = item.path.stem
    return SLOW_MODULES.index(name) if name in SLOW_MODULES else len(SLOW_MODULES)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under a rebalancing xdist mode, the slow modules first (a stable sort:
    each module's tests keep their order); otherwise the order is left alone."""
    if os.environ.get(DIST_VARIABLE) in REBALANCING_MODES:
        items.sort(key=_slowness)

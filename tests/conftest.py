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

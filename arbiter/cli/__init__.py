"""The ``arbiter`` command line (typer).

One module per area registers its commands on :data:`app`; nothing imports
this package.  Errors a user can cause (bad move, bad spec, bad file) are
reported as one clear line on stderr with a non-zero exit, never a traceback.
"""

from . import (
    check,  # noqa: F401,E402
    play,  # noqa: F401,E402
    records,  # noqa: F401,E402
    rules,  # noqa: F401,E402  (registers commands)
    tournament,  # noqa: F401,E402
)
from .app import app  # noqa: F401

__all__ = ["app"]

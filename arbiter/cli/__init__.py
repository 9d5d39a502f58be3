"""The ``arbiter`` command line (typer).

One module per area registers its commands on :data:`app`; nothing imports
this package.  Errors a user can cause (bad move, bad spec, bad file) are
reported as one clear line on stderr with a non-zero exit, never a traceback.
"""

from . import check, play, records, rules, tournament  # noqa: F401  (each registers its commands)
from .app import app

__all__ = ["app"]

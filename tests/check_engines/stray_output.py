"""Writes before ``ugi``: ``readyok`` (a protocol message nobody asked for), or
with argument ``banner`` a banner line the arbiter ignores; then plays well."""
import sys

import _path  # noqa: F401
from _base import run, say

say("Stray 1.0 by nobody" if sys.argv[1:] == ["banner"] else "readyok")
run()

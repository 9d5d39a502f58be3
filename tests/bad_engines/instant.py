"""Well behaved and instant: the first legal move at once."""
from _base import run

run()

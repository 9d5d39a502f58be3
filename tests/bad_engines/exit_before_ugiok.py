"""Says its name, then exits before ``ugiok``."""
import sys

from _base import run, say


def on_ugi(state):
    say("id name quitter")
    sys.exit(1)


run(on_ugi=on_ugi)

"""Declares a spin option whose default lies outside its own range; otherwise
plays well."""
import _path  # noqa: F401
from _base import handshake, run, say


def on_ugi(state):
    say("option name Hash type spin default 5000 min 1 max 1024")
    handshake(state)


run(on_ugi=on_ugi)

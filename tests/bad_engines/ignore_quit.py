"""Plays well, but ignores ``quit``, the end of its input and SIGTERM: only
SIGKILL ends it."""
import signal
import time

from _base import run

signal.signal(signal.SIGTERM, signal.SIG_IGN)


def on_quit(state):
    time.sleep(3600)


run(on_quit=on_quit)

"""Answers ``go`` with 3 MiB of text and no newline, then waits."""
import time

from _base import run, say


def on_go(state):
    say(b"info string " + b"z" * (3 << 20))
    time.sleep(3600)


run(on_go=on_go)

"""Says on stderr why it cannot go on, then fails: ``complain.py MODE``.

* ``exit``: at once, 30 numbered lines, a 1000-character line and blank
  lines on stderr, then exit status 3 (before reading ``ugi``);
* ``hang``: a traceback on stderr, then it reads everything and answers
  nothing (alive, silent on stdout);
* ``ready``: a proper handshake; at ``isready`` one line on stderr, then
  exit status 4.
"""
import sys

from _base import say

MODE = sys.argv[1]


def complain(*lines: str) -> None:
    sys.stderr.write("".join(line + "\n" for line in lines))
    sys.stderr.flush()


if MODE == "exit":
    complain(*(f"complaint {i}" for i in range(1, 31)), "x" * 1000, "", "   ")
    sys.exit(3)
if MODE == "hang":
    complain("Traceback (most recent call last):", '  File "engine.py", line 7, in <module>',
             "ValueError: the search thread died")
    for _ in sys.stdin:
        pass


def on_isready() -> None:
    complain("cannot load the net: weights.bin is missing")
    sys.exit(4)


if MODE == "ready":
    for raw in sys.stdin:
        if raw.split()[:1] == ["isready"]:
            on_isready()
        elif raw.split()[:1] == ["ugi"]:
            say("id name complain")
            say("ugiok")

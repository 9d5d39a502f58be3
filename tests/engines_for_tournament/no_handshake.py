"""Reads ``ugi`` and exits without answering: fails every handshake
(specs/tournament.md §Engine faults: the game is not played, the run aborts)."""

import sys

sys.stdin.readline()
sys.exit(0)

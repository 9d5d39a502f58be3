"""Instant and minimal: plays the moves given as arguments, in order.

It answers ``go`` with the move at index *n* of its arguments, where *n* is
how many moves the last ``position`` command listed, so both players of a
game can be this engine with the same arguments.  No referee, no parsing
beyond counting: the cheapest engine there is (the overhead benchmark uses
it).  It declares no game option, so it plays whatever game it is given."""
import sys

SEQUENCE = sys.argv[1:]
out = sys.stdout
index = 0
for line in sys.stdin:
    command = line.split(maxsplit=1)[0] if line.strip() else ""
    if command == "position":
        words = line.split()
        index = len(words) - words.index("moves") - 1 if "moves" in words else 0
    elif command == "go":
        move = SEQUENCE[index] if index < len(SEQUENCE) else "(end-of-replay)"
        out.write(f"bestmove {move}\n")
        out.flush()
    elif command == "isready":
        out.write("readyok\n")
        out.flush()
    elif command == "ugi":
        out.write("id name replay\nid author the arbiter tests\nugiok\n")
        out.flush()
    elif command == "quit":
        break

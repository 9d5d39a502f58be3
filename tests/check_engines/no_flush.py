"""Never flushes stdout: its answers sit in a block buffer until the process
ends (when its input closes), like a C engine that forgot ``fflush``.  It
would play the first legal move."""
import _path  # noqa: F401
from _base import State

out = open(1, "w", buffering=65536, closefd=False)  # block-buffered whatever PYTHONUNBUFFERED says
state = State()
for raw in open(0):
    words = raw.split()
    command = words[0] if words else ""
    if command == "ugi":
        out.write("id name noflush\nid author the arbiter tests\nugiok\n")
    elif command == "isready":
        out.write("readyok\n")
    elif command == "position":
        at = words.index("moves") if "moves" in words else len(words)
        state.fen = " ".join(words[2:at]) if words[1] == "fen" else None
        state.moves = words[at + 1:]
    elif command == "go":
        out.write(f"bestmove {state.first_legal()}\n")
    elif command == "quit":
        break
out.flush()  # at exit, as the C library would

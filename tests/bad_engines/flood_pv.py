"""Before every move, writes COUNT ``info`` lines (the first argument, default
16) each just under the protocol's 1 MiB line limit, nearly all of it a pv;
then plays the first legal move.  Everything it writes is within the
protocol's limits, so it is no fault: the arbiter must keep the cost of its
output bounded, and its opponent's clock must not pay for any of it.  The
newest line's fields are depth COUNT, score cp 7, nodes 1000, time 5."""
import sys

from _base import run, say

from protocol.limits import MAX_LINE_BYTES

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 16


def flood_line(index: int, move: str) -> bytes:
    head = b"info depth %d score cp %d nodes %d time %d pv " % (index + 1, 7, 1000, 5)
    token = move.encode() + b" "
    body = token * ((MAX_LINE_BYTES - len(head) - len(token)) // len(token))
    return head + body.rstrip() + b"\n"


def on_go(state):
    move = state.first_legal()
    say(b"".join(flood_line(index, move) for index in range(COUNT)))
    say(f"bestmove {move}")


run(on_go=on_go)

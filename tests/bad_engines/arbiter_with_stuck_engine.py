"""Not an engine: a stand-in for an arbiter that is killed with SIGKILL.
It opens ``ignore_quit.py`` (which ignores end-of-input, ``quit`` and
SIGTERM) with ``env.TAG=<its argument>``, prints the engine's pid, then
sleeps until it is killed."""
import os
import sys

import trio

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bad_engines.harness import FAST, config  # noqa: E402

from arbiter.engine import open_engine  # noqa: E402


async def main(tag: str) -> None:
    async with open_engine(config("ignore_quit.py", env={"TAG": tag}), timeouts=FAST) as engine:
        print(engine.pid, flush=True)
        await trio.sleep_forever()


trio.run(main, sys.argv[1])

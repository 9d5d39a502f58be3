"""Starts a child that leaves the engine's process group and session
(``os.setsid()``) and would outlive everything (it ignores SIGTERM and
SIGHUP); once it has left, writes the child's pid to the file named by its
argument, then plays well and exits on ``quit`` without waiting for it."""
import subprocess
import sys

from _base import run

child = subprocess.Popen([sys.executable, "-c",
                          "import os, signal, sys, time\n"
                          "os.setsid()\n"
                          "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                          "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
                          "print('left', flush=True)\n"
                          "sys.stdout.close()\n"
                          "time.sleep(3600)\n"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
assert child.stdout is not None
child.stdout.readline()  # it has left the session
with open(sys.argv[1], "w") as f:
    f.write(str(child.pid))

run()

"""Starts a child process that would outlive it (it ignores SIGTERM and
SIGHUP), writes the child's pid to the file named by its argument, then
plays well and exits on ``quit`` without waiting for the child."""
import subprocess
import sys

from _base import run

child = subprocess.Popen([sys.executable, "-c",
                          "import signal, time\n"
                          "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                          "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
                          "time.sleep(3600)\n"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
with open(sys.argv[1], "w") as f:
    f.write(str(child.pid))

run()

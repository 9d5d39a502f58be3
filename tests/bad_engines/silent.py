"""Never answers ``ugi`` (reads everything, says nothing, never exits on its own)."""
import sys
import time

for _ in sys.stdin:
    pass
time.sleep(3600)

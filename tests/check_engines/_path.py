"""Makes ``tests/bad_engines/_base.py`` importable: the engines here are its
loop with one hook replaced, like the match tests' misbehaving engines."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bad_engines"))

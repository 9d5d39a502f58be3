"""Sample engines built on the engine SDK (:mod:`arbiter.sdk`), each playing
all four games: ``python -m sample_engines.random|greedy|mcts [--game G]``.

``geometry`` rebuilds the boards from the cell names, ``evaluation`` holds the
per-game static evaluations that ``greedy`` and ``mcts`` share.
"""

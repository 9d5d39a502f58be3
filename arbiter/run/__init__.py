"""Running a tournament: a coordinator and a player (``specs/tournament.md``
§Coordinator and players).

* :mod:`.coordinator`: :class:`Coordinator`, the run (schedule, take, store,
  standings, SPRT, stop, observers);
* :mod:`.player`: the seam (:class:`Player`, :class:`Reporter`, :class:`BatchEnd`);
* :mod:`.gameloop`: the one game loop every player runs (engines kept between
  games, a batch of pairs on one slot), with the :class:`EngineSource` seam;
* :mod:`.inprocess`, :mod:`.processes` (with :mod:`.worker` and :mod:`.frames`):
  the players of this process and of local worker processes (the Dask one is
  :class:`arbiter.cluster.ClusterPlayer`);
* :mod:`.pending`: how the pending games are taken;
* :mod:`.workers`: how many worker processes a run gets (``--workers``).
"""

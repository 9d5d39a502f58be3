"""A tournament's games on a Dask cluster, every game stored exactly once
(``specs/cluster.md``; ``arbiter tournament --cluster``, ``arbiter worker``).

* :mod:`~arbiter.cluster.address`: ``--cluster ADDRESS`` checked, and the
  rules of TLS (pure, no Dask: the command line reads it first);
* :mod:`~arbiter.cluster.task`: the request and result of a game pair, the
  versions a worker must share (pure);
* :mod:`~arbiter.cluster.coordinator`: :class:`ClusterPlayer`, the
  tournament's :class:`~arbiter.tournament.PairPlayer` on a cluster;
* :mod:`~arbiter.cluster.worker`: the worker plugin and the task that hands a
  batch of pairs to
* :mod:`~arbiter.cluster.loop`: the worker's long-lived trio loop, playing the
  normal trio match and keeping engines from pair to pair.

Dask is imported only by the coordinator and the worker, so the rest of the
arbiter runs without it.
"""

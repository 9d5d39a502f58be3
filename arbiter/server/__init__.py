"""The match server (``specs/wire.md``): remote engines dial in over the wire.

:mod:`.listener` accepts connections and authenticates them into
:class:`~arbiter.engine.Engine` objects kept in a :class:`~.listener.Registry`;
:mod:`.arena` pairs the idle ones and plays stored games; :mod:`.client` is
the other end, ``arbiter connect``.  Only ``arbiter/cli`` imports this package.
"""

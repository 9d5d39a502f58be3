"""``arbiter worker``: a Dask worker that plays the games of
``arbiter tournament --cluster`` with the engines of its own engines file
(specs/cluster.md §Workers)."""

from __future__ import annotations

import sys

import typer

from arbiter.cluster.address import ClusterAddressError, parse_target
from arbiter.config import engines_file_for
from arbiter.enginespec import EngineSpecError, load_engines_file

from .app import app, fail

#: Most games one worker plays at once (``--slots``): each runs two engine
#: processes, so more is a typo (the same bound as ``--concurrency``).
MAX_SLOTS = 1024


@app.command()
def worker(
    address: str = typer.Argument(..., metavar="ADDRESS", help="the scheduler: tls://host:port"),
    engines_file: str | None = typer.Option(None, "--engines", help="this worker's engines (TOML "
                                            "file of \\[engines.NAME] tables; default ./engines.toml)"),
    slots: int = typer.Option(1, "--slots", help="games at once on this worker"),
    name: str | None = typer.Option(None, "--name", help="this worker's name on the cluster"),
    tls_ca: str | None = typer.Option(None, "--tls-ca", help="the CA certificate (PEM)"),
    tls_cert: str | None = typer.Option(None, "--tls-cert", help="this worker's certificate (PEM)"),
    tls_key: str | None = typer.Option(None, "--tls-key", help="this worker's key (PEM)"),
    insecure: bool = typer.Option(False, "--insecure", help="allow tcp:// to a scheduler off this machine"),
) -> None:
    """Join a Dask cluster and play tournament games with this machine's engines."""
    try:
        target = parse_target(address, tls_ca=tls_ca, tls_cert=tls_cert, tls_key=tls_key,
                              insecure=insecure, allow_local=False)
    except ClusterAddressError as exc:
        fail(str(exc))
    if not 1 <= slots <= MAX_SLOTS:
        fail(f"--slots must be from 1 to {MAX_SLOTS}, not {slots}")
    path = engines_file_for(engines_file)
    if path is None:
        fail("a worker plays only the engines of its own engines file: give --engines FILE "
             "(or put an engines.toml here)")
    try:
        tables = load_engines_file(path)
    except EngineSpecError as exc:
        fail(str(exc))
    from arbiter.cluster.worker import ArbiterPlugin, serve_worker  # Dask: only when it runs

    assert target.address is not None
    try:
        serve_worker(target.address, target.tls, ArbiterPlugin(tables, path), slots, name,
                     announce=lambda text: print(f"arbiter: {text}", file=sys.stderr, flush=True))
    except (OSError, TimeoutError) as exc:
        fail(f"cannot join the scheduler at {address}: {exc}", 1)

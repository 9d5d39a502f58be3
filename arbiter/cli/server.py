"""Server commands: ``token`` (``specs/wire.md`` §Authentication), ``serve``
(the match server) and ``connect`` (an engine run here, played there).

``arbiter token add NAME`` prints a new token once; ``arbiter token list``
shows the tokens' names and times, never a secret; ``arbiter token revoke
NAME`` ends one.  One command with an action word, so that the command line
stays a flat list of commands (``tests/test_cli_rules.py``).
"""

from __future__ import annotations

import enum
import json
import ssl
import sys
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

import typer

from arbiter.store import DEFAULT_DB
from arbiter.tokens import TokenError, TokenStore

from .app import Interrupted, app, checked_log_dir, exit_interrupted, fail, run_interruptible


class TokenAction(enum.Enum):
    ADD = "add"
    LIST = "list"
    REVOKE = "revoke"


@app.command()
def token(
    action: TokenAction = typer.Argument(..., help="add NAME, list, or revoke NAME"),
    name: str | None = typer.Argument(None, help="the token's name (add, revoke)"),
    db: str = typer.Option(DEFAULT_DB, "--db", help="the results database"),
    as_json: bool = typer.Option(False, "--json", help="list: machine-readable output"),
) -> None:
    """Make, list or revoke the tokens remote engines connect with."""
    if (name is None) != (action is TokenAction.LIST):
        fail(f"token {action.value} takes a NAME" if name is None
             else "token list takes no NAME")
    try:
        with TokenStore(db) as tokens:
            if action is TokenAction.ADD:
                assert name is not None
                secret = tokens.add(name)
                typer.echo(secret)
                print(f"token {name!r} added; it is shown only this once", file=sys.stderr)
            elif action is TokenAction.REVOKE:
                assert name is not None
                tokens.revoke(name)
                typer.echo(f"token {name!r} revoked")
            else:
                _print_list(tokens.list(), as_json)
    except TokenError as exc:
        fail(str(exc))


def _print_list(rows: list[dict[str, str | None]], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        state = "active" if row["revoked"] is None else f"revoked {row['revoked']}"
        typer.echo(f"{row['name']}  created {row['created']}  {state}")


# --------------------------------------------------------------------------
# serve and connect (specs/wire.md)
# --------------------------------------------------------------------------

#: the exit status of ``connect`` when the server refused it or could not be reached
EXIT_REFUSED = 1


def _address(text: str, option: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6), or a clear error."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        fail(f"{option} {text!r}: give HOST:PORT")
    return host, int(port)


def _server_tls(cert: str | None, key: str | None) -> ssl.SSLContext | None:
    """``--tls-cert``/``--tls-key`` (both or neither) as a TLS context, or a
    clear error naming the file."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        fail("--tls-cert and --tls-key go together")
    from arbiter.server.serve import server_tls

    try:
        return server_tls(cert, key)
    except (OSError, ssl.SSLError) as exc:
        fail(f"--tls-cert {cert} / --tls-key {key}: {getattr(exc, 'strerror', None) or exc}")


def _client_tls(ca_file: str | None, tls: bool) -> ssl.SSLContext | None:
    """``--tls`` / ``--tls-ca FILE`` as a TLS context, or a clear error."""
    if ca_file is None and not tls:
        return None
    from arbiter.server.client import client_tls

    try:
        return client_tls(ca_file)
    except (OSError, ssl.SSLError) as exc:
        fail(f"--tls-ca {ca_file}: {getattr(exc, 'strerror', None) or exc}")


@app.command()
def serve(
    db: str = typer.Option(DEFAULT_DB, "--db", help="the results database (tokens, games)"),
    listen: str = typer.Option("127.0.0.1:7171", "--listen", help="HOST:PORT to listen on"),
    arena: list[str] = typer.Option([], "--arena",
                                    help='an arena: "game=troll tc=10+0.1 [maxplies=N] [name=...]"'),
    insecure: bool = typer.Option(False, "--insecure",
                                  help="listen off loopback without TLS (tokens in clear)"),
    http: str | None = typer.Option(None, "--http", help="also serve the web view on HOST:PORT"),
    tls_cert: str | None = typer.Option(None, "--tls-cert",
                                        help="TLS: the server's certificate chain (PEM)"),
    tls_key: str | None = typer.Option(None, "--tls-key", help="TLS: its private key (PEM)"),
) -> None:
    """Serve remote engines (arbiter connect) and play them in arenas; Ctrl-C stops."""
    from arbiter.server.arena import ArenaSpec, ArenaSpecError
    from arbiter.server.listener import listen_problem

    host, port = _address(listen, "--listen")
    tls = _server_tls(tls_cert, tls_key)
    problem = listen_problem(host, tls=tls is not None, insecure=insecure)
    if problem is not None:
        fail(f"--listen {listen}: {problem}")
    if insecure:
        print("arbiter serve: warning: --insecure: tokens travel in clear", file=sys.stderr)
    try:
        specs = [ArenaSpec.parse(text) for text in arena]
    except ArenaSpecError as exc:
        fail(str(exc))
    from arbiter.server.serve import serve_forever
    from arbiter.store import StoreError, TournamentBusyError

    def main():
        return serve_forever(db, host, port, specs, tls=tls)
    if http is not None:  # the web view in the same trio run (arbiter/cli/web.py)
        from arbiter.cli.web import with_web_view
        main = with_web_view(main, db, http)
    try:
        run_interruptible(main)
    except (StoreError, TokenError, TournamentBusyError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"--listen {listen}: {exc.strerror or exc}")
    except Interrupted as exc:
        exit_interrupted(exc, "games in progress abandoned, connections closed")


@app.command()
def connect(
    address: str = typer.Argument(..., help="the server's HOST:PORT"),
    token_text: str = typer.Option(..., "--token", help="the token (arbiter token add)"),
    engine: str = typer.Option(..., "-e", "--engine", help="the engine SPEC to run here"),
    log_dir: str | None = typer.Option(None, "--log", help="write the engine's I/O log here"),
    tls: bool = typer.Option(False, "--tls", help="TLS, the server checked against the "
                                                  "system's authorities"),
    tls_ca: str | None = typer.Option(None, "--tls-ca",
                                      help="TLS, the server checked against this CA (PEM)"),
) -> None:
    """Run an engine here and play it on a server (arbiter serve) until Ctrl-C."""
    from arbiter.engine import EngineError
    from arbiter.enginespec import EngineSpecError, parse_engine_spec
    from arbiter.server.client import ConnectError
    from arbiter.server.client import connect as connect_engine

    host, port = _address(address, "HOST:PORT")
    context = _client_tls(tls_ca, tls)
    try:
        config = parse_engine_spec(engine)
    except EngineSpecError as exc:
        fail(str(exc))
    from .play import fail_if_remote

    fail_if_remote(config, "connect")
    log_dir = checked_log_dir(log_dir)
    try:
        reason = run_interruptible(lambda: connect_engine(host, port, token_text, config,
                                                          log_dir=log_dir, tls=context))
    except (ConnectError, EngineError) as exc:
        fail(str(exc), EXIT_REFUSED)
    except Interrupted as exc:
        exit_interrupted(exc, "engine stopped, connection closed")
    print(f"arbiter connect: {reason}", file=sys.stderr)


# --------------------------------------------------------------------------
# remote participants of a tournament or a match (specs/wire.md)
# --------------------------------------------------------------------------


class Listening(NamedTuple):
    """A run's options for its ``remote:NAME`` engines: ``--listen``,
    ``--wait-engines``, ``--tls-cert``/``--tls-key`` and ``--insecure`` (the
    meaning they have on ``arbiter serve``)."""

    listen: str | None = None
    wait: float | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    insecure: bool = False


def remote_runner(play: Callable[[Any], Awaitable[Any]] | None, config: Any, db: str,
                  options: Listening) -> Callable[[], Awaitable[Any]] | None:
    """The run with its ``remote:NAME`` engines (a listener on ``--listen``,
    TLS with ``--tls-cert``/``--tls-key``, the engines waited for
    ``--wait-engines`` seconds): ``play(source)`` once they are connected,
    ``source`` the run's :class:`~arbiter.run.gameloop.EngineSource` (the
    connected engines and local processes); None when it has none (and no
    --listen was given).  Exits 2 on bad options; with ``play`` None it only
    checks them (nothing printed)."""
    from arbiter.server.remote_run import DEFAULT_WAIT_ENGINES, remote_name, run_with_remotes

    listen, wait = options.listen, options.wait

    names = [n for n in (remote_name(engine) for engine in config.engines) if n is not None]
    if not names:
        if listen is not None:
            fail("--listen is for remote engines: give -e remote:NAME")
        return None
    if listen is None:
        fail(f"remote:{names[0]} needs --listen HOST:PORT (where it connects)")
    host, port = _address(listen, "--listen")
    from arbiter.server.listener import listen_problem

    tls = _server_tls(options.tls_cert, options.tls_key)
    problem = listen_problem(host, tls=tls is not None, insecure=options.insecure)
    if problem is not None:
        fail(f"--listen {listen}: {problem}")
    if play is None:
        return None

    def log(text: str) -> None:
        print(f"arbiter: {text}", file=sys.stderr, flush=True)

    if options.insecure and tls is None:
        log("warning: --insecure: tokens travel in clear")
    if tls is not None:
        log("TLS: every connection is encrypted")

    return lambda: run_with_remotes(play, db=db, host=host, port=port, names=names,
                                    wait=DEFAULT_WAIT_ENGINES if wait is None else wait, log=log,
                                    tls=tls)

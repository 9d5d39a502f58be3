"""Server commands: ``token`` (``specs/wire.md`` §Authentication), ``serve``
(the match server) and ``connect`` (an engine run here, played there).

``arbiter token add NAME`` prints a new token once (``--out FILE``: writes it
to a new file only its owner can read instead); ``arbiter token list`` shows
the tokens' names and times, never a secret; ``arbiter token revoke NAME``
ends one.  One command with an action word, so that the command line stays a
flat list of commands (``tests/test_cli_rules.py``).

A token is never taken from a command line, which every local user can read
(``ps``, ``/proc/PID/cmdline``): ``arbiter connect`` reads it from
``--token-file FILE`` or the environment variable ``ARBITER_TOKEN`` (the
environment of a process is its owner's alone); ``--token`` still works, with
a warning (``specs/wire.md`` §The server and the client).
"""

from __future__ import annotations

import enum
import json
import os
import ssl
import stat
import sys
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

import typer

from arbiter.enginespec import DEFAULT_ENGINES_FILE
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
    out: str | None = typer.Option(None, "--out", help="add: write the token to this new file "
                                   "(readable by you only) instead of printing it"),
) -> None:
    """Make, list or revoke the tokens remote engines connect with."""
    if (name is None) != (action is TokenAction.LIST):
        fail(f"token {action.value} takes a NAME" if name is None
             else "token list takes no NAME")
    if out is not None and action is not TokenAction.ADD:
        fail(f"--out is for token add, not token {action.value}")
    try:
        with TokenStore(db) as tokens:
            if action is TokenAction.ADD:
                assert name is not None
                if out is None:
                    typer.echo(tokens.add(name))
                    print(f"token {name!r} added; it is shown only this once", file=sys.stderr)
                else:
                    _add_to_file(tokens, name, out)
            elif action is TokenAction.REVOKE:
                assert name is not None
                tokens.revoke(name)
                typer.echo(f"token {name!r} revoked")
            else:
                _print_list(tokens.list(), as_json)
    except TokenError as exc:
        fail(str(exc))


def _add_to_file(tokens: TokenStore, name: str, out: str) -> None:
    """``token add NAME --out FILE``: the file is made first (new, mode 0600:
    a token is its holder's alone), so that a token is never added that
    could not be written; it is removed again if the token cannot be added."""
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        fail(f"--out {out}: the file exists (a token file is never overwritten)")
    except OSError as exc:
        fail(f"--out {out}: {exc.strerror or exc}")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(tokens.add(name) + "\n")
    except BaseException:
        os.unlink(out)
        raise
    print(f"token {name!r} added and written to {out} (readable by you only); "
          "it is shown nowhere else", file=sys.stderr)


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
    from arbiter.server.serve import Server
    from arbiter.store import StoreError, TournamentBusyError

    server = Server(db, host, port, specs, tls=tls)
    main: Callable[[], Awaitable[None]] = server.run
    if http is not None:  # the web view in the same trio run (arbiter/cli/web.py)
        from arbiter.cli.web import with_web_view
        main = with_web_view(main, db, http)
    try:
        run_interruptible(main, drain=server.drain)
        print("arbiter serve: stopped (arbiter stop): the games in progress ended and are stored",
              file=sys.stderr)
    except (StoreError, TokenError, TournamentBusyError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"--listen {listen}: {exc.strerror or exc}")
    except Interrupted as exc:
        exit_interrupted(exc, "games in progress abandoned, connections closed")


#: the environment variable ``arbiter connect`` reads its token from when
#: neither ``--token-file`` nor ``--token`` is given (a process's environment
#: is readable by its owner only, its command line by every local user)
TOKEN_ENV = "ARBITER_TOKEN"

#: what ``connect`` says when no token was given
NO_TOKEN = (f"give the token: --token-file FILE or the environment variable {TOKEN_ENV} "
            "(arbiter token add NAME --out FILE writes one)")


def _token(token_file: str | None, token_text: str | None) -> str:
    """The token of ``--token-file``, else of ``--token`` (with a warning),
    else of :data:`TOKEN_ENV`; a clear error (exit 2) without one, or with a
    file that does not hold one.  No message shows a token.  :data:`TOKEN_ENV`
    is taken out of this process's environment whatever is used: the engine
    started here inherits that environment, and the token is not its."""
    from_env = os.environ.pop(TOKEN_ENV, "").strip()
    if token_file is not None and token_text is not None:
        fail("--token-file and --token: give one of them")
    if token_file is not None:
        return _read_token_file(token_file)
    if token_text is not None:
        print("arbiter connect: warning: --token puts the token on the command line, where "
              "other local users can read it (ps, /proc/PID/cmdline): use --token-file FILE "
              f"or {TOKEN_ENV}", file=sys.stderr)
        return token_text
    if not from_env:
        fail(NO_TOKEN)
    return from_env


def _read_token_file(path: str) -> str:
    """The token held by the file at ``path`` (one line, ``NAME.SECRET``),
    read up to :data:`~protocol.wire.MAX_TOKEN_CHARS` and a line end; a
    warning when other users may read the file."""
    from arbiter.enginespec import read_bounded_text
    from protocol.wire import MAX_TOKEN_CHARS

    try:
        text = read_bounded_text(path, MAX_TOKEN_CHARS + 2, ValueError, cannot_read="cannot read it",
                                 too_big=f"over {MAX_TOKEN_CHARS} characters: not a token file "
                                         "(arbiter token add NAME --out FILE writes one)")
    except ValueError as exc:
        fail(f"--token-file {exc}")
    token_text = text.strip()
    if not token_text or len(token_text.split()) != 1:
        fail(f"--token-file {path}: not a token file (one line, the token arbiter token add "
             "printed; arbiter token add NAME --out FILE writes one)")
    try:
        mode = os.stat(path).st_mode
    except OSError:  # gone since it was read: it was read
        mode = 0
    if stat.S_ISREG(mode) and mode & 0o044:
        print(f"arbiter connect: warning: --token-file {path}: other users may read it (mode "
              f"{stat.S_IMODE(mode):04o}): chmod 600 {path}", file=sys.stderr)
    return token_text


def _connect_name_problem(config: Any, spec: str) -> str | None:
    """Why the server would refuse the engine's name (``hello``'s ``name``:
    the server's own rule, :func:`arbiter.tokens.valid_name`), with a
    ``name=`` that it takes; None when it takes it."""
    from arbiter.tokens import NAME_RULE, valid_name
    from protocol.wire import MAX_NAME_CHARS

    name = config.name or ""
    if valid_name(name):
        return None
    fitting = "".join(c if valid_name(c) else "_" for c in name)[:MAX_NAME_CHARS] or "engine"
    return (f"-e {spec}: the engine's name {name[:80]!r} is one the server refuses (an engine "
            f"name is {NAME_RULE}): give it one with name=..., e.g. name={fitting}")


@app.command()
def connect(
    address: str = typer.Argument(..., help="the server's HOST:PORT"),
    engine: str = typer.Option(..., "-e", "--engine", help="the engine SPEC to run here"),
    token_file: str | None = typer.Option(None, "--token-file", metavar="FILE",
                                          help="a file holding the token (arbiter token add "
                                               f"--out); default: ${TOKEN_ENV}"),
    token_text: str | None = typer.Option(None, "--token", metavar="TOKEN",
                                          help="the token itself (other local users can read "
                                               "a command line: prefer --token-file)"),
    engines_file: str | None = typer.Option(
        None, "--engines",
        help=f"TOML file of [engines.NAME] tables (default: ./{DEFAULT_ENGINES_FILE} if present)"),
    log_dir: str | None = typer.Option(None, "--log", help="write the engine's I/O log here"),
    tls: bool = typer.Option(False, "--tls", help="TLS, the server checked against the "
                                                  "system's authorities"),
    tls_ca: str | None = typer.Option(None, "--tls-ca",
                                      help="TLS, the server checked against this CA (PEM)"),
) -> None:
    """Run an engine here and play it on a server (arbiter serve) until Ctrl-C."""
    from arbiter.engine import EngineError
    from arbiter.server.client import ConnectError
    from arbiter.server.client import connect as connect_engine

    from .play import load_engine_configs

    host, port = _address(address, "HOST:PORT")
    context = _client_tls(tls_ca, tls)
    (config,) = load_engine_configs([engine], engines_file, command="connect")
    problem = _connect_name_problem(config, engine)
    if problem is not None:
        fail(problem)
    secret = _token(token_file, token_text)
    log_dir = checked_log_dir(log_dir)
    try:
        reason = run_interruptible(lambda: connect_engine(host, port, secret, config,
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

"""The start-up checks: a quiet start, the handshake, options, the game, ``isready`` when idle.

They run first, in one process when the engine allows it; a start that
fails sets :attr:`Checker.start_failed` (every check that needs a started
engine is then skipped), an engine that does not play the game sets
:attr:`Checker.game_failed`.  ``specs/check.md`` §The checks: ``startup.*``,
``isready.idle``, ``isready.newgame``.
"""

from __future__ import annotations

import trio

from arbiter.check.checker import Checker, CheckSpec, Context, Failed, check, ms
from arbiter.check.probe import Gone, describe_fault
from protocol.messages import GAME_OPTION, ArbiterMessage, SetOption

__all__ = ["CHECKS"]


@check("startup.quiet", "no stray output before ugi",
       "nothing on stdout before `ugi` but `info` lines (watched for the first "
       "moments after start)", needs="none")
async def startup_quiet(checker: Checker, ctx: Context) -> None:
    try:
        probe = await checker.spawn()
    except Gone as exc:
        checker.start_failed = f"the engine could not be started: {exc.detail}"
        raise ctx.fail(f"cannot start the engine: {exc.detail}") from None
    ctx.watch(probe)
    with trio.move_on_after(checker.settings.quiet_wait):
        while probe.fault is None:
            await probe.arrival.wait()
    for received in probe.before_ugi:
        if received.message is not None or received.error is not None:
            ctx.problem(f"wrote {received.line.text!r} before ugi: protocol output before ugi is "
                        "not allowed (specs/protocol.md §Engine to arbiter)", received.line)
        elif received.command is not None:
            ctx.warn(f"wrote {received.line.text!r} before ugi (a banner?): the arbiter ignores "
                     "it, but the protocol asks for silence until ugi", received.line)
    if probe.fault is not None:
        checker.start_failed = f"the engine ended before ugi: {describe_fault(probe)}"
        raise ctx.fail(f"{describe_fault(probe)} before ugi was sent{await probe.stderr_clause()}")
    probe.skip_pending()
    if not ctx.problems and not ctx.warnings:
        ctx.notes.append(f"silent for {checker.settings.quiet_wait:g} s")


@check("startup.handshake", "ugi answered with ugiok",
       "`ugi` answered with `ugiok` within {handshake} s, with `id name` and `id author` before "
       "it (WARN if missing: ugi.md requires only `ugiok`); between them only `id`, `option` "
       "and `info` lines", needs="none")
async def startup_handshake(checker: Checker, ctx: Context) -> None:
    if checker.start_failed is not None:
        raise ctx.fail(checker.start_failed)
    probe = checker.probe
    assert probe is not None
    ctx.watch(probe)
    try:
        sent = trio.current_time()
        await checker.handshake(probe, ctx, judge=True)
    except (Failed, Gone) as exc:
        detail = exc.detail if isinstance(exc, Gone) else str(exc)
        if isinstance(exc, Gone):
            ctx.problem(f"{detail} during the handshake", probe.lines[-1] if probe.lines else None)
        clause = await probe.stderr_clause()
        if clause:  # why it failed, often (a traceback)
            ctx.problem(clause.removeprefix("; "))
        checker.start_failed = f"the handshake failed ({detail})"
        raise Failed(detail) from None
    seen = checker.handshake_lines
    ugiok = seen[-1]
    checker.report.id_name = probe.id_name
    checker.report.id_author = probe.author
    if probe.id_name is None:
        ctx.warn("no `id name` before ugiok: records name the engine by its spec", ugiok.line)
    if probe.author is None:
        ctx.warn("no `id author` before ugiok: records show no author", ugiok.line)
    for received in seen:
        if received.command in ("option", "id") and received.error is None:
            continue
        if received.command == "id" and received.error is not None:
            ctx.problem(f"malformed id line: {received.error}", received.line)
        elif received.message is not None and received.violation is not None:
            ctx.problem(f"{received.line.text!r} during the handshake: {received.violation}",
                        received.line)
        elif received.error is not None and received.command != "option":
            ctx.problem(f"malformed line during the handshake: {received.error}", received.line)
    ctx.notes.append(f"ugiok after {ms(ugiok.line.at - sent)}: {probe.id_name!r} by {probe.author!r}")


@check("startup.options", "options well-formed and settable",
       "every `option` line well-formed (a known type; a spin's default within min..max; a "
       "combo's default among its vars); `setoption` of each option's default, then `isready`, "
       "answered with `readyok` within {ready} s", needs="start")
async def startup_options(checker: Checker, ctx: Context) -> None:
    probe = checker.probe
    if probe is None or not probe.usable:
        probe = await checker.fresh(ctx, new_game=False)
    ctx.watch(probe)
    for received in checker.handshake_lines:
        if received.command == "option" and received.error is not None:
            ctx.problem(f"malformed option: {received.error}", received.line)
        elif received.command == "option" and received.violation is not None:
            ctx.problem(f"bad option: {received.violation}", received.line)
    checker.report.options = [decl.to_line() for decl in probe.options.values()]
    messages: list[ArbiterMessage] = []
    for decl in probe.options.values():
        if decl.type == "button" or decl.default is None:
            continue
        if decl.name.lower() in (name.lower() for name in checker.config.options):
            continue  # the user's value stays
        messages.append(SetOption(decl.name, decl.default))
    if messages:
        await probe.send(*messages)
    took = await checker.ready(probe, ctx, f"after setting {len(messages)} options to their defaults")
    ctx.notes.append(f"{len(probe.options)} options; readyok {ms(took)} after {len(messages)} "
                     "setoption lines")


@check("startup.game", "plays the game",
       "the `UGI_Game` combo lists {game}, or there is no `UGI_Game` option (the engine is then "
       "trusted to be configured for {game}; the searches below test it)", needs="start")
async def startup_game(checker: Checker, ctx: Context) -> None:
    probe = checker.probe or await checker.fresh(ctx, new_game=False)
    decl = probe.session.option(GAME_OPTION)
    name = checker.game.name
    if decl is None:
        ctx.notes.append(f"no {GAME_OPTION} option: plays what it was configured for")
        return
    if decl.type != "combo":
        ctx.warn(f"{GAME_OPTION} is a {decl.type} option, not a combo: the arbiter ignores it and "
                 "sends no game selection")
        return
    if not probe.session.plays(name):
        checker.game_failed = f"the engine does not play {name}"
        raise ctx.fail(f"its {GAME_OPTION} combo does not list {name} (it lists: {', '.join(decl.vars)})")
    ctx.notes.append(f"{GAME_OPTION} lists {', '.join(decl.vars)}")


# --- isready ----------------------------------------------------------------------------------------


@check("isready.idle", "isready before a search",
       "`readyok` within {ready} s of `isready`, before any search", needs="start")
async def isready_idle(checker: Checker, ctx: Context) -> None:
    probe = await checker.fresh(ctx, new_game=False)
    took = await checker.ready(probe, ctx, "before any search")
    ctx.notes.append(f"readyok after {ms(took)}")


@check("isready.newgame", "isready after uginewgame",
       "`readyok` within {ready} s of `isready` sent after `setoption name UGI_Game value {game}` "
       "(when declared) and `uginewgame`")
async def isready_newgame(checker: Checker, ctx: Context) -> None:
    probe = await checker.fresh(ctx, new_game=False)
    await checker.new_game(probe, ctx)


CHECKS: tuple[CheckSpec, ...] = (startup_quiet, startup_handshake, startup_options, startup_game,
                                 isready_idle, isready_newgame)

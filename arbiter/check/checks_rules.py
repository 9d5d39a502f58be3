"""The rules checks: legal moves in real positions, a whole game, ``query``, repetition.

They test what the referee judges: every ``bestmove`` legal in positions from
real games (special cases included), a whole game under clocks, ``query``
answers agreeing with the referee, and the same verdicts in a second round
in the same process.  ``specs/check.md`` §The checks:
``legality``, ``game.selfplay``, ``query``, ``repeat``.
"""

from __future__ import annotations

from arbiter.check.checker import Checker, CheckSpec, Context, check
from arbiter.check.positions import final_positions
from arbiter.check.probe import Probe, Received
from arbiter.games import play_moves
from protocol.messages import Query, Response, SetPosition
from protocol.query import query_answer

__all__ = ["CHECKS"]


# --- legality and a whole game -----------------------------------------------------------------------------


#: How a position is sent, in turn, in the position lists.
STYLES = ("startpos", "fen", "fen+moves")


@check("legality", "legal moves in positions from real games",
       "a legal `bestmove` (checked by the referee) within {movetime} ms (+{margin} ms) in each of "
       "{positions} positions from real games of {game}, special cases included "
       "(specs/check.md §Positions), sent alternately as startpos+moves, fen and fen+moves",
       needs="search", searches=30)
async def legality(checker: Checker, ctx: Context) -> None:
    entries = [(entry, STYLES[i % len(STYLES)]) for i, entry in enumerate(checker.positions)]
    probe = await checker.fresh(ctx)
    _, verdicts = await checker.search_entries(probe, ctx, entries, checker.movetime_go())
    if not ctx.problems:
        features = sorted({entry.feature for entry, _ in entries})
        ctx.notes.append(f"{len(verdicts)} positions ({', '.join(features)})")


@check("game.selfplay", "a whole game against itself",
       "a game against itself from the start position under clocks of {tc} (each ply sent as "
       "`position startpos moves ...` with both clocks, as in a match), up to {plies} plies: "
       "every move legal and within the mover's clock (+{margin} ms)", needs="search", searches=60)
async def selfplay(checker: Checker, ctx: Context) -> None:
    probe = await checker.fresh(ctx)
    await checker.play_game(probe, ctx, checker.settings.selfplay_plies, "self-play")


# --- query ------------------------------------------------------------------------------------------------


@check("query", "query answers agree with the referee",
       "`response` to `query gameover`, `query p1turn` and `query result` within {ready} s, "
       "agreeing with the referee, in positions with either side to move and at the end of "
       "finished games (WARN only: the arbiter never trusts them)", mandatory=False, searches=12)
async def query(checker: Checker, ctx: Context) -> None:
    probe = await checker.fresh(ctx)
    cases: list[tuple[str, tuple[str, ...]]] = [("the start position", ()),
                                                ("early, p2 to move", checker.entry("early-p2").moves),
                                                ("a middle game", checker.entry("midgame-p1").moves)]
    for final in final_positions(checker.game.name):
        cases.append((f"a finished game ({final.result})", final.moves))
    checked = 0
    for label, moves in cases:
        pos = play_moves(checker.game.start(), moves)
        await probe.send(SetPosition(None, moves))
        for what in ("gameover", "p1turn", "result"):
            received = await _ask(checker, ctx, probe, what, label)
            if received.error is not None:
                ctx.problem(f"`query {what}` in {label}: malformed response: {received.error}",
                            received.line)
                continue
            want = query_answer(pos, what)
            assert isinstance(received.message, Response)  # a well-formed response line
            got = received.message.value
            checked += 1
            if got != want:
                ctx.problem(f"`query {what}` in {label}: the engine says {got}, the referee {want}",
                            received.line)
    ctx.notes.append(f"{checked} answers in {len(cases)} positions")


async def _ask(checker: Checker, ctx: Context, probe: Probe, what: str, label: str) -> Received:
    """``query what`` and the ``response`` line (well-formed or not); Failed without one."""
    probe.skip_pending()
    asked = await probe.send(Query(what))
    deadline = asked + checker.settings.ready_timeout
    while True:
        received = await probe.next(deadline)
        if received is None:
            probe.dirty = True
            raise ctx.fail(f"no response to `query {what}` within {checker.settings.ready_timeout:g} s "
                           f"(in {label}); query is optional for this arbiter, but other UGI "
                           "managers rely on it", probe.lines[-1])
        if received.command == "response":
            return received


# --- repetition -----------------------------------------------------------------------------------------


@check("repeat", "same verdicts twice in one fresh process",
       "in one fresh process, the {game} positions and a game of up to {repeat_plies} plies "
       "played twice in a row (separated by `uginewgame`) get the same verdicts both times: "
       "no state kept wrongly between games", needs="search", searches=80)
async def repeat(checker: Checker, ctx: Context) -> None:
    await checker.close_probe()
    probe = await checker.fresh(ctx)
    entries = [(entry, STYLES[i % len(STYLES)]) for i, entry in enumerate(checker.positions)]
    labels = [f"position {i + 1} ({entry.label})" for i, (entry, _) in enumerate(entries)]
    labels.append(f"the game of up to {checker.settings.repeat_plies} plies")
    rounds: list[list[str]] = []
    for number in (1, 2):
        round_ctx = Context(ctx.spec)
        if number == 2:
            await checker.new_game(probe, ctx)
        probe, verdicts = await checker.search_entries(probe, round_ctx, entries,
                                                       checker.movetime_go(), restart=False)
        if len(verdicts) == len(entries) and probe.usable:
            verdicts.append(await checker.play_game(probe, round_ctx, checker.settings.repeat_plies,
                                                    f"round {number} game"))
        ctx.focus.extend(round_ctx.focus)
        ctx.answered = ctx.answered or round_ctx.answered
        ctx.good += round_ctx.good
        ctx.stalled = ctx.stalled or round_ctx.stalled
        if len(verdicts) < len(labels) or not probe.usable:
            first = round_ctx.problems[0] if round_ctx.problems else "the engine became unusable"
            raise ctx.fail(f"round {number} did not complete in one process ({first}): "
                           "nothing to compare")
        rounds.append(verdicts)
        ctx.notes.extend(round_ctx.notes)
    differences = [f"{label}: round 1 {_verdict(a)}, round 2 {_verdict(b)}"
                   for label, a, b in zip(labels, rounds[0], rounds[1], strict=False) if a != b]
    if differences:
        ctx.problem(f"the rounds differ in {len(differences)} place(s), so the engine's behaviour "
                    f"depends on what it did before; {differences[0]}")
        ctx.problems.extend(differences[1:4])
    else:
        bad = sum(1 for verdict in rounds[0] if verdict != "ok")
        same = f" (the same {bad} problem(s) twice: see legality)" if bad else ""
        ctx.notes.insert(0, f"{len(labels)} verdicts, the same in both rounds{same}")


def _verdict(verdict: str) -> str:
    return {"ok": "legal and in time", "late": "over the time budget"}.get(verdict, verdict)


CHECKS: tuple[CheckSpec, ...] = (legality, selfplay, query, repeat)

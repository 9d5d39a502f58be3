"""Seeing a run: a rich live display on a terminal, one line per game otherwise.

Both are :class:`arbiter.run.observer.Observer` s, told by the run what
happens (a game starts, a game is stored, an engine was restarted, a tick
each second).  They only print; nothing they do can slow a game down beyond
the time to format a few lines.  The standings table and summary are shared
with ``arbiter standings``.
"""

from __future__ import annotations

import math
import os
import sys
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

import trio
from rich import box
from rich.console import Console, Group
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from arbiter.record import GameRecord
from arbiter.run.coordinator import Coordinator
from arbiter.run.observer import Observer, RunResult
from arbiter.schedule import ScheduledGame
from arbiter.standings import Standings, difference_lines, fmt_elo, fmt_pair_elo

#: Results in the live view's "recent results" table.
RECENT = 8

#: Width of the live view's progress bar at most; it shrinks to what the
#: terminal leaves beside the counts, but not below MIN_BAR.
BAR = 40
MIN_BAR = 10


def format_duration(seconds: float) -> str:
    """``1:02:03`` / ``2:03``."""
    if not math.isfinite(seconds) or seconds < 0:
        return "-"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _games_left(run: Coordinator) -> float | None:
    """Games the run still expects to play: what the schedule has left, or,
    in an SPRT, the test's expected length when shorter (``None`` until the
    test can estimate it: ``specs/ratings.md`` §Expected length)."""
    left = float(max(0, run.total - run.done))
    if run.sprt is None:
        return left
    status = run.standings.sprt_status
    if status is None or status.games_left is None:
        return None
    return min(left, status.games_left)


def _eta(run: Coordinator) -> float:
    """Seconds left, from this run's pace and :func:`_games_left` (NaN when
    either is unknown)."""
    left = _games_left(run)
    if run.played == 0 or left is None:
        return math.nan
    elapsed = trio.current_time() - run.started_at
    return elapsed / run.played * left


def _count(run: Coordinator) -> str:
    """``54/100``; in an SPRT ``54/~380`` (the expected total) or ``54``
    while the test cannot estimate its length: never the 10000-game cap."""
    if run.sprt is None:
        return f"{run.done}/{run.total}"
    left = _games_left(run)
    return str(run.done) if left is None else f"{run.done}/~{run.done + round(left)}"


def _sprt_line(standings: Standings) -> str | None:
    st = standings.sprt_status
    if st is None or standings.sprt is None:
        return None
    verdict = f"{st.decision} accepted" if st.decision else "continue"
    return (f"SPRT {standings.sprt}: LLR {st.llr:.2f} [{st.lower:.2f}, {st.upper:.2f}] "
            f"({st.samples}) -> {verdict}")


def silence_stdout() -> None:
    """After a broken pipe on stdout (``arbiter ... | head``): send the rest of
    the output nowhere, so that nothing, not even Python's last flush at exit,
    complains about the reader that went away."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """The reader went away: print nothing more and let the caller end as
        it would have (a run's own exit status and its message on stderr),
        where rich would exit with status 1."""
        self.quiet = True
        silence_stdout()


def make_console() -> Console:
    """A console for stdout: the terminal's width, or 120 columns in a pipe."""
    console = _Console()
    return console if console.is_terminal else _Console(width=120)


@dataclass
class Column:
    """A column of a table that must fit the terminal (:func:`fit_table`).

    ``drop`` is its place in the drop order: columns of rank 1 go first,
    then 2, and so on (columns sharing a rank go together); 0 never goes.
    A ``fold`` column (a name) wraps at spaces, or within a word too long for
    its line, once nothing more can be dropped.
    """

    header: str
    cells: list[str]
    justify: str = "right"
    drop: int = 0
    fold: bool = False


def _natural_width(columns: Sequence[Column]) -> int:
    """A table's width with every cell on one line: each column its widest
    cell plus a space each side, a separator between columns and an edge at
    each end (``box.SIMPLE_HEAD``)."""
    return sum(max([len(c.header), *map(len, c.cells)]) + 2 for c in columns) + len(columns) + 1


def fit_table(columns: Sequence[Column], width: int, title: str | None = None) -> Table:
    """A rich table of ``columns`` at most ``width`` wide: whole columns are
    dropped in their drop order until it fits, and the ``fold`` columns wrap
    if it still does not; no cell is ever cut to an ellipsis."""
    kept = list(columns)
    for rank in sorted({c.drop for c in columns if c.drop}):
        if _natural_width(kept) <= width:
            break
        kept = [c for c in kept if c.drop != rank]
    table = Table(title=title, title_justify="left", header_style="bold", box=box.SIMPLE_HEAD)
    fits = _natural_width(kept) <= width
    for c in kept:
        fold = c.fold and not fits
        table.add_column(c.header, justify=c.justify, no_wrap=not fold,  # type: ignore[arg-type]
                         overflow="fold" if fold else "ellipsis")
    for row in zip(*(c.cells for c in kept), strict=True):
        table.add_row(*row)
    return table


def standings_table(standings: Standings, title: str | None = None, width: int = 120) -> Table:
    """The standings as a rich table at most ``width`` wide: one line per
    engine in the order of the standings.  A two-engine match has no Elo
    column: its headline difference (:func:`difference_lines`) says it, where
    each engine's rating would be half of it.  Drop order at a narrow
    terminal (``specs/tournament.md`` §Live display): score, #, W/D/L, games,
    points; the engine and its Elo stay."""
    lines = standings.engines
    columns = [
        Column("#", [str(i) for i in range(1, len(lines) + 1)], drop=2),
        Column("engine", [e.name for e in lines], justify="left", fold=True),
        Column("games", [str(e.games) for e in lines], drop=4),
        Column("points", [f"{e.points:g}" for e in lines], drop=5),
        Column("score", [f"{100 * e.points / e.games:.1f}%" if e.games else "-" for e in lines], drop=1),
    ]
    if standings.difference is None:
        columns.append(Column("Elo", [fmt_elo(e.elo, e.error) for e in lines]))
    columns += [Column(h, [str(getattr(e, attr)) for e in lines], drop=3)
                for h, attr in (("W", "wins"), ("D", "draws"), ("L", "losses"))]
    return fit_table(columns, width, title)


def pairs_table(standings: Standings, width: int = 120) -> Table:
    """Per pair: W/D/L, Elo (trinomial and pentanomial), nElo, LOS, draws, at
    most ``width`` wide.  Drop order: draws, nElo, the pentanomial counts, the
    weaker Elo (the trinomial one when every pair has the pentanomial one,
    else the pentanomial), LOS, W-D-L; the pair and one Elo stay."""
    pairs = [line.stats for line in standings.pairs]
    penta_everywhere = all(s.penta_elo is not None for s in pairs)
    return fit_table([
        Column("pair", [f"{line.first} - {line.second}" for line in standings.pairs], justify="left",
               fold=True),
        Column("W-D-L", [f"{s.wins}-{s.draws}-{s.losses}" for s in pairs], drop=6),
        Column("Elo", [fmt_pair_elo(s) for s in pairs], drop=4 if penta_everywhere else 0),
        Column("pentanomial", ["-" if s.pentanomial is None else ",".join(map(str, s.pentanomial))
                               for s in pairs], drop=3),
        Column("penta Elo", [fmt_pair_elo(s, penta=True) for s in pairs],
               drop=0 if penta_everywhere else 4),
        Column("nElo", [fmt_elo(s.nelo) for s in pairs], drop=2),
        Column("LOS", ["-" if s.los is None else f"{100 * s.los:.1f}%" for s in pairs], drop=5),
        Column("draws", ["-" if s.draw_ratio is None else f"{100 * s.draw_ratio:.0f}%" for s in pairs],
               drop=1),
    ], width)


def games_text(done: int, total: int, standings: Standings, verb: str = "") -> str:
    """``54/100 games [verb]``; with an SPRT ``54 games [verb] (SPRT, at most
    10000)``: the schedule's cap is not the length of the test."""
    games = f"games {verb}".rstrip()
    if standings.sprt is None:
        return f"{done}/{total} {games}"
    return f"{done} {games} (SPRT, at most {total})"


def print_standings(console: Console, standings: Standings,
                    tournament: Mapping[str, Any] | None = None) -> None:
    """Standings, pair statistics, SPRT and terminations (``arbiter standings``),
    at the console's width; a two-engine match's Elo difference first."""
    if tournament is not None:
        total = tournament.get("total_games") or 0
        console.print(f"tournament {tournament['id']}: {tournament['name']} "
                      f"({tournament['game']}, {tournament.get('format')}) - "
                      f"{games_text(standings.games, total, standings)}, {tournament['status']}"
                      + (f" - {tournament['note']}" if tournament.get("note") else ""),
                      highlight=False)
    if standings.difference is not None:
        for line in difference_lines(standings.difference):
            console.print(line, highlight=False)
    console.print(standings_table(standings, width=console.width))
    if standings.pairs:
        console.print(pairs_table(standings, width=console.width))
    sprt = _sprt_line(standings)
    if sprt:
        console.print(sprt, highlight=False)
    if standings.terminations:
        console.print("terminations: " + ", ".join(
            f"{name} {count}" for name, count in sorted(standings.terminations.items(),
                                                        key=lambda kv: (-kv[1], kv[0]))),
            highlight=False)


def _result_text(record: GameRecord) -> str:
    return f"{record.result} {record.termination}"


class LineDisplay(Observer):
    """One line per event, for logs and pipes (stdout not a terminal)."""

    def __init__(self, out: IO[str] | None = None):
        self.out = out or sys.stdout
        self.run: Coordinator | None = None
        #: the reader of our output went away (``arbiter tournament ... | head``)
        self.closed = False

    def _print(self, text: str) -> None:
        if self.closed:
            return
        try:
            print(text, file=self.out, flush=True)
        except BrokenPipeError:
            # Nobody reads the run any more: stop it as Ctrl-C would (the
            # games so far are stored; a resume plays the rest), rather than
            # die mid-write and leave the status at `running`.
            self.closed = True
            if self.out is sys.stdout:
                silence_stdout()
            if self.run is not None:
                self.run.stop("its output was closed")

    def started(self, run: Coordinator) -> None:
        self.run = run
        config = run.config
        self._print(f"tournament {run.tournament_id}: {config.name} - {config.game}, "
                    f"{', '.join(config.engine_names)}; {games_text(run.done, run.total, run.standings, 'done')}, "
                    f"concurrency {config.concurrency}, tc {config.tc}")

    def game_finished(self, game: ScheduledGame, record: GameRecord, standings: Standings) -> None:
        run = self.run
        assert run is not None
        eta = _eta(run)
        leader = standings.engines[0] if standings.engines else None
        parts = [f"[{_count(run)}] {game.key} {record.white} - {record.black}: "
                 f"{record.result} ({record.termination}) {record.plies} plies"]
        if not math.isnan(eta):
            parts.append(f"ETA {format_duration(eta)}")
        diff = standings.difference
        if diff is not None:  # a match: the difference, not each side's half of it
            parts.append(f"Elo {diff.first} - {diff.second} "
                         f"{fmt_elo(diff.elo, diff.elo_error, undefined=diff.stats.games > 0)}")
        elif leader is not None:
            parts.append(f"leader {leader.name} {fmt_elo(leader.elo, leader.error)}")
        sprt = _sprt_line(standings)
        if sprt:
            parts.append(sprt)
        self._print(" | ".join(parts))

    def message(self, text: str) -> None:
        self._print(f"note: {text}")

    def stopped(self, result: RunResult) -> None:
        self._print(f"{result.status}: {games_text(result.done, result.total, result.standings)}"
                    + (f" - {result.note}" if result.note else "")
                    + (f"; abandoned (replayed on resume): {', '.join(result.abandoned)}"
                       if result.abandoned else ""))


class RichDisplay(Observer):
    """Progress bar with ETA, standings with Elo +/-, recent results, live."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console()
        self.run: Coordinator | None = None
        self.recent: deque[tuple[str, str, str, str, str, int]] = deque(maxlen=RECENT)
        self.notes: deque[str] = deque(maxlen=3)
        self.live: Live | None = None

    def started(self, run: Coordinator) -> None:
        self.run = run
        self.live = Live(self.render(), console=self.console, auto_refresh=False,
                         transient=True)
        self.live.start()

    def render(self) -> Group:
        """The live view as one renderable, at the console's width."""
        run = self.run
        assert run is not None
        config = run.config
        elapsed = trio.current_time() - run.started_at
        eta = _eta(run)
        width = self.console.width
        head = Text(f"tournament {run.tournament_id}: {config.name} ({config.game}, "
                    f"{len(config.engines)} engines, concurrency {config.concurrency}, "
                    f"tc {config.tc})", style="bold")
        left = _games_left(run)
        counts = Text(f"{games_text(run.done, run.total, run.standings)}  "
                      f"elapsed {format_duration(elapsed)}  "
                      f"ETA {'-' if math.isnan(eta) else format_duration(eta)}")
        bar = Table.grid(padding=(0, 1))
        # An SPRT's bar runs to its expected length (pulsing until known).
        total = None if left is None else max(run.done + left, 1)
        bar.add_row(ProgressBar(total=total, completed=run.done,
                                width=max(MIN_BAR, min(BAR, width - len(counts) - 1))), counts)
        parts: list[Any] = [head, bar]
        if run.standings.difference is not None:
            parts += [Text(line) for line in difference_lines(run.standings.difference)]
        parts.append(standings_table(run.standings, width=width))
        sprt = _sprt_line(run.standings)
        if sprt:
            parts.append(Text(sprt))
        if self.recent:
            parts.append(self._recent_table())
        if run.running:
            parts.append(Text("playing: " + ", ".join(
                f"{g.key} {g.white}-{g.black}" for g in run.running.values()), style="dim"))
        for note in self.notes:
            parts.append(Text(note, style="yellow"))
        return Group(*parts)

    def _recent_table(self) -> Table:
        """The last results, newest first; drop order at a narrow terminal:
        plies, game, termination (the players and the result stay)."""
        rows = list(reversed(self.recent))
        headers = (("game", 2), ("white", 0), ("black", 0), ("result", 0), ("termination", 3),
                   ("plies", 1))
        return fit_table([Column(h, [str(row[i]) for row in rows], justify="left", drop=drop,
                                 fold=h in ("white", "black"))
                          for i, (h, drop) in enumerate(headers)],
                         self.console.width, title="recent results")

    def _refresh(self) -> None:
        if self.live is not None:
            self.live.update(self.render(), refresh=True)

    def game_started(self, game: ScheduledGame) -> None:
        self._refresh()

    def game_finished(self, game: ScheduledGame, record: GameRecord, standings: Standings) -> None:
        self.recent.append((game.key, record.white, record.black, record.result,
                            record.termination, record.plies))
        self._refresh()

    def message(self, text: str) -> None:
        self.notes.append(text)
        self._refresh()

    def tick(self) -> None:
        self._refresh()

    def stopped(self, result: RunResult) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
        for note in self.notes:
            self.console.print(note, style="yellow", highlight=False)

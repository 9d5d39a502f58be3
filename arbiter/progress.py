"""Seeing a run: a rich live display on a terminal, one line per game otherwise.

Both are :class:`arbiter.tournament.Observer` s, told by the run what
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
from collections.abc import Mapping
from typing import IO, Any

import trio
from rich import box
from rich.console import Console, Group
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from arbiter.record import GameRecord
from arbiter.schedule import ScheduledGame
from arbiter.standings import Standings, fmt_elo
from arbiter.tournament import Observer, RunResult, Tournament, format_duration

RECENT = 8


def _eta(run: Tournament) -> float:
    """Seconds left, from this run's pace (NaN until a game is done)."""
    if run.played == 0:
        return math.nan
    elapsed = trio.current_time() - run.started_at
    return elapsed / run.played * max(0, run.total - run.done)


def _sprt_line(standings: Standings) -> str | None:
    st = standings.sprt_status
    if st is None or standings.sprt is None:
        return None
    verdict = f"{st.decision} accepted" if st.decision else "continue"
    return (f"SPRT {standings.sprt}: LLR {st.llr:.2f} [{st.lower:.2f}, {st.upper:.2f}] "
            f"({st.model}) -> {verdict}")


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


def standings_table(standings: Standings, title: str | None = None) -> Table:
    """The standings as a rich table: one line per engine, best first."""
    table = Table(title=title, title_justify="left", header_style="bold", box=box.SIMPLE_HEAD)
    for header, justify in (("#", "right"), ("engine", "left"), ("games", "right"),
                            ("points", "right"), ("score", "right"), ("Elo", "right"),
                            ("W", "right"), ("D", "right"), ("L", "right")):
        table.add_column(header, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for rank, line in enumerate(standings.engines, start=1):
        score = f"{100 * line.points / line.games:.1f}%" if line.games else "-"
        table.add_row(str(rank), line.name, str(line.games), f"{line.points:g}", score,
                      fmt_elo(line.elo, line.error), str(line.wins), str(line.draws),
                      str(line.losses))
    return table


def pairs_table(standings: Standings) -> Table:
    """Per pair: W/D/L, Elo (trinomial and pentanomial), nElo, LOS, draws."""
    table = Table(header_style="bold", box=box.SIMPLE_HEAD)
    for header in ("pair", "W-D-L", "Elo", "pentanomial", "penta Elo", "nElo", "LOS",
                   "draws"):
        table.add_column(header, justify="left" if header == "pair" else "right", no_wrap=True)
    for line in standings.pairs:
        s = line.stats
        penta = "-" if s.pentanomial is None else ",".join(str(c) for c in s.pentanomial)
        table.add_row(f"{line.first} - {line.second}",
                      f"{s.wins}-{s.draws}-{s.losses}", fmt_elo(s.elo, s.elo_error), penta,
                      fmt_elo(s.penta_elo, s.penta_elo_error), fmt_elo(s.nelo),
                      "-" if s.los is None else f"{100 * s.los:.1f}%",
                      "-" if s.draw_ratio is None else f"{100 * s.draw_ratio:.0f}%")
    return table


def print_standings(console: Console, standings: Standings,
                    tournament: Mapping[str, Any] | None = None) -> None:
    """Standings, pair statistics, SPRT and terminations (``arbiter standings``)."""
    if tournament is not None:
        total = tournament.get("total_games") or 0
        console.print(f"tournament {tournament['id']}: {tournament['name']} "
                      f"({tournament['game']}, {tournament.get('format')}) - "
                      f"{standings.games}/{total} games, {tournament['status']}"
                      + (f" - {tournament['note']}" if tournament.get("note") else ""),
                      highlight=False)
    console.print(standings_table(standings))
    if standings.pairs:
        console.print(pairs_table(standings))
    line = _sprt_line(standings)
    if line:
        console.print(line, highlight=False)
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
        self.run: Tournament | None = None
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

    def started(self, run: Tournament) -> None:
        self.run = run
        config = run.config
        self._print(f"tournament {run.tournament_id}: {config.name} - {config.game}, "
                    f"{', '.join(config.engine_names)}; {run.done}/{run.total} games done, "
                    f"concurrency {config.concurrency}, tc {config.tc}")

    def game_finished(self, game: ScheduledGame, record: GameRecord, standings: Standings) -> None:
        run = self.run
        assert run is not None
        eta = _eta(run)
        leader = standings.engines[0] if standings.engines else None
        parts = [f"[{run.done}/{run.total}] {game.key} {record.white} - {record.black}: "
                 f"{record.result} ({record.termination}) {record.plies} plies"]
        if not math.isnan(eta):
            parts.append(f"ETA {format_duration(eta)}")
        if leader is not None:
            parts.append(f"leader {leader.name} {fmt_elo(leader.elo, leader.error)}")
        sprt = _sprt_line(standings)
        if sprt:
            parts.append(sprt)
        self._print(" | ".join(parts))

    def message(self, text: str) -> None:
        self._print(f"note: {text}")

    def stopped(self, result: RunResult) -> None:
        self._print(f"{result.status}: {result.done}/{result.total} games"
                    + (f" - {result.note}" if result.note else "")
                    + (f"; abandoned (replayed on resume): {', '.join(result.abandoned)}"
                       if result.abandoned else ""))


class RichDisplay(Observer):
    """Progress bar with ETA, standings with Elo +/-, recent results, live."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console()
        self.run: Tournament | None = None
        self.recent: deque[tuple[str, str, str, str, str, int]] = deque(maxlen=RECENT)
        self.notes: deque[str] = deque(maxlen=3)
        self.live: Live | None = None

    def started(self, run: Tournament) -> None:
        self.run = run
        self.live = Live(self._render(), console=self.console, auto_refresh=False,
                         transient=True)
        self.live.start()

    def _render(self):
        run = self.run
        assert run is not None
        config = run.config
        elapsed = trio.current_time() - run.started_at
        eta = _eta(run)
        head = Text(f"tournament {run.tournament_id}: {config.name} ({config.game}, "
                    f"{len(config.engines)} engines, concurrency {config.concurrency}, "
                    f"tc {config.tc})", style="bold")
        bar = Table.grid(padding=(0, 1))
        bar.add_row(ProgressBar(total=max(run.total, 1), completed=run.done, width=40),
                    Text(f"{run.done}/{run.total} games  elapsed {format_duration(elapsed)}  "
                         f"ETA {'-' if math.isnan(eta) else format_duration(eta)}"))
        parts: list[Any] = [head, bar, standings_table(run.standings)]
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
        table = Table(title="recent results", title_justify="left", box=None, header_style="bold")
        for header in ("game", "white", "black", "result", "termination", "plies"):
            table.add_column(header)
        for key, white, black, result, termination, plies in reversed(self.recent):
            table.add_row(key, white, black, result, termination, str(plies))
        return table

    def _refresh(self) -> None:
        if self.live is not None:
            self.live.update(self._render(), refresh=True)

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

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

from arbiter.figures import fmt_elo, fmt_interval, fmt_percent, fmt_signed
from arbiter.record import GameRecord
from arbiter.run.coordinator import Coordinator
from arbiter.run.observer import Observer, RunResult
from arbiter.schedule import ScheduledGame
from arbiter.standings import ANOMALIES, Difference, Standings

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


def _games_left(run: Coordinator, done: int | None = None) -> float | None:
    """Games the run still expects to play after ``done`` (default: the
    games stored): what the schedule has left, or, in an SPRT, the test's
    expected length when shorter (``None`` until the test can estimate it:
    ``specs/ratings.md`` §Expected length)."""
    left = float(max(0, run.total - (run.done if done is None else done)))
    if run.sprt is None:
        return left
    status = run.standings.sprt_status
    if status is None or status.games_left is None:
        return None
    return min(left, status.games_left)


def _eta(run: Coordinator, done: int | None = None) -> float:
    """Seconds left, from this run's pace and :func:`_games_left` (NaN when
    either is unknown)."""
    left = _games_left(run, done)
    if run.played == 0 or left is None:
        return math.nan
    elapsed = trio.current_time() - run.started_at
    return elapsed / run.played * left


def _count(run: Coordinator, done: int) -> str:
    """``54/100``; in an SPRT ``54/~380`` (the expected total) or ``54``
    while the test cannot estimate its length: never the 10000-game cap."""
    if run.sprt is None:
        return f"{done}/{run.total}"
    left = _games_left(run, done)
    return str(done) if left is None else f"{done}/~{done + round(left)}"


def _sprt_line(standings: Standings) -> str | None:
    """``SPRT elo0=... : LLR 1.20 [-2.94, 2.94] (pentanomial) -> verdict``
    (:meth:`Standings.sprt_verdict`)."""
    st = standings.sprt_status
    if st is None or standings.sprt is None:
        return None
    return (f"SPRT {standings.sprt}: LLR {st.llr:.2f} [{st.lower:.2f}, {st.upper:.2f}] "
            f"({st.samples}) -> {standings.sprt_verdict()}")


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
        Column("score", [fmt_percent(e.points / e.games if e.games else None) for e in lines], drop=1),
    ]
    if standings.difference is None:
        columns.append(Column("Elo", [fmt_elo(e.elo, e.error) for e in lines]))
    columns += [Column(h, [str(getattr(e, attr)) for e in lines], drop=3)
                for h, attr in (("W", "wins"), ("D", "draws"), ("L", "losses"))]
    return fit_table(columns, width, title)


def split_tables(columns: Sequence[Column], width: int) -> list[Table]:
    """``columns`` as rich tables at most ``width`` wide, every column shown.

    One table when they fit.  Otherwise the rows are numbered: the first
    table holds the number, the first column (the key, wrapped when it alone
    leaves no room: :func:`fit_table`) and as many columns as fit beside
    them, each next table the number and as many of the rest, in order."""
    if _natural_width(columns) <= width:
        return [fit_table(columns, width)]
    rows = len(columns[0].cells)
    number = Column("#", [str(i) for i in range(1, rows + 1)])
    parts: list[list[Column]] = [[number, columns[0]]]
    for column in columns[1:]:
        if len(parts[-1]) > 1 and _natural_width([*parts[-1], column]) > width:
            parts.append([number])
        parts[-1].append(column)
    return [fit_table(part, width) for part in parts]


def pairs_table(standings: Standings, width: int = 120) -> Group:
    """Per pair: W-D-L, its shown Elo, nElo and LOS (:meth:`PairStats.shown`:
    from game pairs when it has complete ones, else from games), the
    pentanomial counts, draws, the first mover's score, and (when some pair's
    colours are unequal) the games each engine moved first; at most ``width``
    wide, every column shown (a second table holds what the first leaves
    out), with a note saying what the figures come from."""
    lines = standings.pairs
    pairs = [line.stats for line in lines]
    columns = [
        Column("pair", [f"{line.first} - {line.second}" for line in lines], justify="left", fold=True),
        Column("W-D-L", [f"{s.wins}-{s.draws}-{s.losses}" for s in pairs]),
        Column("Elo", [fmt_elo(s.shown("elo"), s.shown("elo_error"), undefined=s.games > 0)
                       for s in pairs]),
        Column("nElo", [fmt_signed(s.shown("nelo")) for s in pairs]),
        Column("LOS", [fmt_percent(s.shown("los")) for s in pairs]),
        Column("pentanomial", ["-" if s.pentanomial is None else ",".join(map(str, s.pentanomial))
                               for s in pairs]),
        Column("draws", [fmt_percent(s.draw_ratio) for s in pairs]),
        Column("1st", [fmt_percent(line.first_mover_score) for line in lines]),
    ]
    unequal = [line for line in lines if not line.balanced]
    if unequal:
        columns.append(Column("moved first", [f"{a}:{b}" for a, b in (x.moved_first for x in lines)]))
    return Group(*split_tables(columns, width), *(Text(note, style="dim") for note in pair_notes(standings)))


def pair_notes(standings: Standings) -> list[str]:
    """What a pair's figures come from (``specs/tournament.md`` §Which figure
    where), and which pairs' scores hold part of the first-move advantage."""
    lines = standings.pairs
    trinomial = [f"{x.first} - {x.second}" for x in lines if x.stats.samples == "trinomial"]
    if not trinomial:
        source = "Elo, nElo and LOS from game pairs (pentanomial)"
    elif len(trinomial) == len(lines):
        source = "Elo, nElo and LOS from games (trinomial: no complete game pair)"
    else:
        source = ("Elo, nElo and LOS from game pairs (pentanomial); from games (trinomial) for "
                  + ", ".join(trinomial))
    notes = [source + "; 1st: the score of the side with the first move"]
    if any(not x.balanced for x in lines):
        notes.append("moved first: the games each engine of the pair had the first move; where "
                     "they differ, the pair's score holds part of the first-move advantage")
    return notes


def difference_lines(diff: Difference) -> list[str]:
    """The headline of a two-engine match, before its tables: the Elo
    difference with its "+/-" and 95% interval, what it was computed from,
    then nElo, LOS and draws; a reason when a figure is infinite or undefined
    (``specs/tournament.md`` §Standings)."""
    s = diff.stats
    head = f"Elo difference {diff.first} - {diff.second}: "
    if s.games == 0:
        return [head + "- (no games yet)"]
    estimate = fmt_elo(diff.elo, diff.elo_error, undefined=True)
    if diff.elo_interval is not None and diff.elo is not None and math.isfinite(diff.elo):
        estimate += f", 95% {fmt_interval(diff.elo_interval)}"
    lines = [head + estimate]
    why = diff.reason("elo") or diff.reason("elo_interval")
    if why:
        lines.append(f"  ({why})")
    source = f"{s.pairs} game pairs" if diff.samples == "pentanomial" else f"{s.games} games"
    lines.append(f"  {diff.samples} ({source}), nElo {fmt_signed(diff.nelo)}, "
                 f"LOS {fmt_percent(diff.los)}, draws {fmt_percent(s.draw_ratio)}")
    return lines


def games_text(done: int, total: int, standings: Standings, verb: str = "") -> str:
    """``54/100 games [verb]``; with an SPRT ``54 games [verb] (SPRT, at most
    10000)``: the schedule's cap is not the length of the test."""
    games = f"games {verb}".rstrip()
    if standings.sprt is None:
        return f"{done}/{total} {games}"
    return f"{done} {games} (SPRT, at most {total})"


def print_standings(console: Console, standings: Standings,
                    tournament: Mapping[str, Any] | None = None) -> None:
    """Standings, the first-move advantage, pair statistics, SPRT,
    terminations and anomalies (``arbiter standings``; its warnings are the
    caller's to say), at the console's width; a two-engine match's Elo
    difference first."""
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
    if standings.first_move is not None and standings.first_move.games:
        console.print(standings.first_move.describe(), highlight=False)
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
    for name, count in sorted(standings.anomalies.items()):
        console.print(f"anomaly: {name} {count} ({ANOMALIES[name]})", highlight=False)


def _result_text(record: GameRecord) -> str:
    return f"{record.result} {record.termination}"


class LineDisplay(Observer):
    """One line per event, for logs and pipes (stdout not a terminal)."""

    def __init__(self, out: IO[str] | None = None):
        self.out = out or sys.stdout
        self.run: Coordinator | None = None
        #: the games this display has counted: the run's stored games at its
        #: start, one more per game told.  A batch of a cluster run is stored
        #: at once and then told game by game, so the run's own count is
        #: already the batch's last for its first game (specs/tournament.md
        #: §Live display: no number twice)
        self.told = 0
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
        self.told = run.done
        config = run.config
        self._print(f"tournament {run.tournament_id}: {config.name} - {config.game}, "
                    f"{', '.join(config.engine_names)}; {games_text(run.done, run.total, run.standings, 'done')}, "
                    f"concurrency {config.concurrency}, tc {config.tc}")

    def game_finished(self, game: ScheduledGame, record: GameRecord, standings: Standings) -> None:
        run = self.run
        assert run is not None
        self.told += 1
        eta = _eta(run, self.told)
        leader = standings.engines[0] if standings.engines else None
        parts = [f"[{_count(run, self.told)}] {game.key} {record.white} - {record.black}: "
                 f"{record.result} ({record.termination}) {record.plies} plies"]
        if not math.isnan(eta):
            parts.append(f"ETA {format_duration(eta)}")
        diff = standings.difference
        if diff is not None:  # a match: the difference, not each side's half of it
            parts.append(f"Elo {diff.first} - {diff.second} "
                         f"{fmt_elo(diff.elo, diff.elo_error, undefined=diff.stats.games > 0)}")
        elif leader is not None:  # the standings' first: the most points (§Standings)
            parts.append(f"leader {leader.name} {leader.points:g}/{leader.games}")
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

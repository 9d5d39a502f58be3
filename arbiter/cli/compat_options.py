"""The table of cutechess-cli's and fastchess's options, and how each one's
values read as arbiter's arguments (``specs/tournament.md`` §cutechess-cli
and fastchess options).

Data in one place: :data:`OPTIONS` (every command-line option of those
tools, by name without its dash: :class:`Foreign`, what follows it
(:class:`Takes`), our option it becomes or why it is refused, and a reader
when more than a rename is needed) and :data:`ENGINE_KEYS` (the words of
``-engine`` and ``-each``, joined into our engine SPEC by
:func:`engine_words`).  A reader refuses what we cannot honour with a
:class:`CompatError` naming our option, or saying that we have none.
:func:`markdown_table` prints the table for the spec, which holds the same
table (``tests/test_compat_cli.py`` checks that they agree).

Rewriting a command line with it is :mod:`arbiter.cli.compat`, which
re-exports these names.  Pure: no I/O; typer is not imported.
"""

from __future__ import annotations

import enum
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["CompatError", "Takes", "Foreign", "Reading", "EngineKey", "OPTIONS", "ENGINE_KEYS",
           "engine_words", "markdown_table", "CUTECHESS", "FASTCHESS", "BOTH"]

CUTECHESS = "cutechess-cli"
FASTCHESS = "fastchess"
BOTH = (CUTECHESS, FASTCHESS)


class CompatError(ValueError):
    """An option of cutechess-cli or fastchess that arbiter cannot honour;
    the message names the option and ours (or says there is none)."""


class Takes(enum.Enum):
    """What follows a foreign option on the command line."""

    NOTHING = "nothing"
    ONE = "one value"
    MAYBE_ONE = "an optional value"
    WORDS = "words up to the next option"


#: what reading an option gives: our arguments and the note that says so
Reading = tuple[list[str], str]


@dataclass(frozen=True)
class Foreign:
    """One option of cutechess-cli or fastchess (``name`` without its dash).

    ``ours`` is our option it becomes (``""``: nothing to set, our behaviour
    is already what it asks; ``None``: refused), ``note`` says what it means
    here or why it is refused.  ``read`` turns its values into our
    arguments when more than a rename is needed (it may refuse, raising
    :class:`CompatError`); ``optional`` is the pattern an optional value
    must match to be taken as one."""

    name: str
    takes: Takes
    ours: str | None
    note: str = ""
    tools: tuple[str, ...] = BOTH
    read: Callable[[list[str]], Reading] | None = None
    optional: str = ""

    def reading(self, values: list[str]) -> Reading:
        """Our arguments for the option given ``values``, and the note."""
        if self.ours is None:
            raise _refuse(self.name, self.note)
        if self.read is not None:
            return self.read(values)
        if self.takes is Takes.WORDS:
            args = [self.ours, " ".join(values)] if self.ours else []
        else:
            args = ([self.ours] if self.ours else []) + (values if self.ours else [])
        return args, self.note


def _refuse(name: str, why: str) -> CompatError:
    return CompatError(f"-{name}: {why}; nothing was started")


def _one(name: str, values: list[str]) -> str:
    (value,) = values
    return value


def _tournament(values: list[str]) -> Reading:
    value = _one("tournament", values)
    formats = {"round-robin": "round-robin", "roundrobin": "round-robin", "gauntlet": "gauntlet",
               "knockout": "knockout"}
    if value.lower() not in formats:
        raise _refuse("tournament", f"arbiter has no {value!r} format (--format round-robin, "
                      "gauntlet or knockout)")
    return ["--format", formats[value.lower()]], ""


def _variant(values: list[str]) -> Reading:
    from arbiter.games import GAME_NAMES  # the referee's list, only when asked

    value = _one("variant", values)
    if value.lower() not in GAME_NAMES:
        raise _refuse("variant", f"arbiter plays {', '.join(GAME_NAMES)}, not {value!r} "
                      "(--game GAME, or -variant GAME)")
    return ["--game", value.lower()], ""


def _whole(name: str, value: str) -> int:
    if not re.fullmatch(r"[0-9]+", value):
        raise _refuse(name, f"expected a whole number, not {value!r}")
    return int(value)


def _maxmoves(values: list[str]) -> Reading:
    moves = _whole("maxmoves", _one("maxmoves", values))
    if moves == 0:  # cutechess: 0 is no limit, as ours without --maxplies
        return [], "0 is no limit, as without --maxplies"
    return ["--maxplies", str(2 * moves)], ("a move is two plies; at the limit the scores decide "
                                            "where the game has them, else a draw")


def _repeat(values: list[str]) -> Reading:
    if values and values[0] != "2":
        raise _refuse("repeat", f"arbiter plays each opening twice, colours swapped (game pairs: "
                      f"specs/tournament.md §Colours and game pairs), not {values[0]} times")
    return [], "each opening is always played twice, colours swapped: a game pair"


def _wait(values: list[str]) -> Reading:
    if _whole("wait", _one("wait", values)) != 0:
        raise _refuse("wait", "arbiter has no pause between games")
    return [], "no pause between games, as arbiter always does"


def _seeds(values: list[str]) -> Reading:
    if _whole("seeds", _one("seeds", values)) != 1:
        raise _refuse("seeds", "arbiter's gauntlet has one seed: its first engine plays the others "
                      "(--format gauntlet)")
    return [], "the gauntlet's first engine plays the others, as arbiter's --format gauntlet does"


def _key_values(name: str, words: Sequence[str], known: Sequence[str]) -> dict[str, str]:
    """``key=value`` words (fastchess's and cutechess's option lists)."""
    found: dict[str, str] = {}
    for word in words:
        key, eq, value = word.partition("=")
        if not eq or key not in known:
            raise _refuse(name, f"{word!r} is not one of {', '.join(k + '=' for k in known)}")
        found[key] = value
    return found


def _openings(words: list[str]) -> Reading:
    given = _key_values("openings", words, ("file", "format", "order", "plies", "start", "policy"))
    if "file" not in given:
        raise _refuse("openings", "give file=FILE (--openings FILE)")
    if given.get("start", "1") != "1":
        raise _refuse("openings", "arbiter starts at the file's first opening (no start=); cut the "
                      "file instead")
    if given.get("policy", "default") != "default":
        raise _refuse("openings", "arbiter gives each game pair the next opening, the same for "
                      "every pairing (specs/tournament.md §Openings): no policy=")
    if given.get("format", "pgn").lower() not in ("pgn", "epd"):
        raise _refuse("openings", f"format={given['format']}: a PGN file or one opening a line")
    args = ["--openings", given["file"]]
    if "order" in given:
        args += ["--order", given["order"]]
    if "plies" in given:
        args += ["--opening-plies", given["plies"]]
    return args, ("a PGN file of games or one opening a line, as its name and first line say "
                  "(format= is not needed)")


#: fastchess's -pgnout keys that change what the file holds beyond its moves:
#: arbiter writes its one form (specs/records.md), and keeps the rest in the JSONL export
_PGN_EXTRAS = ("notation", "nodes", "seldepth", "nps", "hashfull", "tbhits", "pv", "timeleft",
               "latency", "min")


def _pgnout(words: list[str]) -> Reading:
    """cutechess: ``FILE [min] [fi]``; fastchess: ``file=FILE [key=value ...]``."""
    path: str | None = None
    ignored: list[str] = []
    for word in words:
        key, eq, value = word.partition("=")
        if not eq and path is None and word not in ("min", "fi"):
            path = word
        elif key == "file" and eq:
            path = value
        elif word in ("min", "fi") or (eq and key in _PGN_EXTRAS):
            ignored.append(word)
        elif key == "append" and eq:
            if value.lower() not in ("true", "1"):
                raise _refuse("pgnout", "--pgn always appends each game as it ends; remove the file "
                              "first for a fresh one")
        else:
            raise _refuse("pgnout", f"{word!r} has no counterpart (--pgn FILE)")
    if path is None:
        raise _refuse("pgnout", "give the file (--pgn FILE)")
    note = "finished games, appended as they end, in arbiter's record form (specs/records.md)"
    if ignored:
        note += (f"; {' '.join(ignored)} ignored: the moves are in each game's notation and "
                 "`arbiter export --format jsonl` holds nodes, pv and clocks")
    return ["--pgn", path], note


def _sprt(words: list[str]) -> Reading:
    text = " ".join(words)
    note = "" if "model=" in text else (
        "model=normalized, fastchess's default; cutechess-cli's bounds are model=bayesian")
    return ["--sprt", text], note


# --------------------------------------------------------------------------
# -engine and -each
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineKey:
    """A word of ``-engine``/``-each`` (``key=value`` or a bare flag):
    ``ours`` its key in our SPEC (``specs/match.md`` §Engine specs), ``""``
    when it has none to set, None when refused; ``note`` why."""

    key: str
    ours: str | None
    note: str = ""


#: the limit words that join into our one ``tc=`` (``tc=10+0.1,depth=12``)
_LIMITS = {"tc": "", "st": "st=", "depth": "depth=", "plies": "depth=", "nodes": "nodes="}

ENGINE_KEYS: dict[str, EngineKey] = {key.key: key for key in (
    EngineKey("cmd", "cmd"), EngineKey("name", "name"), EngineKey("dir", "dir"),
    EngineKey("arg", "arg"), EngineKey("args", "arg", "fastchess's args=\"A B\": one arg= each"),
    EngineKey("option.NAME", "option.NAME"), EngineKey("conf", "conf",
                                                       "an engine of the engines file (--engines FILE)"),
    EngineKey("timemargin", "timemargin"),
    EngineKey("tc", "tc"), EngineKey("st", "tc", "tc=st=N"), EngineKey("depth", "tc", "tc=depth=N"),
    EngineKey("plies", "tc", "tc=depth=N"), EngineKey("nodes", "tc", "tc=nodes=N"),
    EngineKey("restart", "--restart", "on: --restart, for every engine; off, auto: arbiter's default"),
    EngineKey("proto", "", "uci: engines speak UGI (specs/protocol.md); xboard is refused"),
    EngineKey("trust", "", "the referee judges every ending: engines claim nothing"),
    EngineKey("ponder", None, "arbiter has no pondering"),
    EngineKey("whitepov", None, "scores are read from the mover's view (specs/protocol.md)"),
    EngineKey("initstr", None, "arbiter sends engines nothing but the protocol"),
    EngineKey("stderr", None, "--log DIR keeps each engine's stderr"),
    EngineKey("tscale", None, "arbiter's engine timeouts are fixed (specs/match.md)"),
    EngineKey("book", None, "no Polyglot books: --openings FILE"),
    EngineKey("bookdepth", None, "no Polyglot books: --openings FILE, --opening-plies N"),
    EngineKey("debug", None, "--log DIR writes each engine's I/O"),
)}


def _engine_key(word: str) -> tuple[str, str | None]:
    key, eq, value = word.partition("=")
    return key, value if eq else None


def engine_words(option: str, words: Sequence[str]) -> tuple[list[str], list[str]]:
    """``-engine``/``-each`` words as our SPEC words, and the command-line
    arguments some imply (``restart=on``: ``--restart``)."""
    spec: list[str] = []
    extra: list[str] = []
    limits: list[str] = []
    for word in words:
        key, value = _engine_key(word)
        entry = ENGINE_KEYS.get("option.NAME" if key.startswith("option.") else key)
        if entry is None or key.startswith("env."):
            spec.append(shlex.quote(word))  # ours (env.NAME) or unknown: our SPEC's parser judges
            continue
        if entry.ours is None:
            raise _refuse(option, f"{key}: {entry.note}")
        if key in _LIMITS and value is not None:
            limits.append(_LIMITS[key] + value)
        elif key == "args" and value is not None:
            spec += [f"arg={shlex.quote(arg)}" for arg in shlex.split(value)]
        elif key == "restart":
            if (value or "").lower() == "on" and "--restart" not in extra:
                extra.append("--restart")
        elif key == "proto":
            if (value or "").lower() != "uci":
                raise _refuse(option, f"proto={value}: engines speak UGI, a UCI-like protocol "
                              "(specs/protocol.md)")
        elif entry.ours:
            spec.append(key if value is None else f"{key}={shlex.quote(value)}")
    if limits:
        spec.append(f"tc={shlex.quote(','.join(limits))}")
    return spec, extra


def _engine(words: list[str]) -> Reading:
    spec, extra = engine_words("engine", words)
    return ["-e", " ".join(spec)] + extra, ""


def _each(words: list[str]) -> Reading:
    spec, extra = engine_words("each", words)
    return ["--each", " ".join(spec)] + extra, ""


# --------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------

_LIVE = "the standings are live on a terminal and printed at the end"
_COLOURS = "no counterpart: colours alternate within every game pair (specs/tournament.md §Colours and game pairs)"
_NO_TABLEBASES = "no counterpart: these games have no tablebases"
_TIMEOUTS = ("no counterpart: arbiter's engine timeouts are fixed (specs/match.md); --stall for a "
             "search without a clock")

#: every option of cutechess-cli (its help.txt) and fastchess (its man page),
#: by name without the dash
OPTIONS: dict[str, Foreign] = {option.name: option for option in (
    Foreign("engine", Takes.WORDS, "-e", "an engine SPEC (specs/match.md §Engine specs)", read=_engine),
    Foreign("each", Takes.WORDS, "--each", "settings for every engine", read=_each),
    Foreign("concurrency", Takes.ONE, "--concurrency", "games at once"),
    Foreign("games", Takes.ONE, "--games", "games per pairing per round"),
    Foreign("rounds", Takes.ONE, "--rounds", "each round plays --games per pairing"),
    Foreign("tournament", Takes.ONE, "--format", "round-robin, gauntlet or knockout",
            read=_tournament),
    Foreign("variant", Takes.ONE, "--game", "troll, atoll, morris or talisman", read=_variant),
    Foreign("event", Takes.ONE, "--name", "the tournament's name, the Event tag"),
    Foreign("srand", Takes.ONE, "--seed", "seeds --order random and --random-plies"),
    Foreign("openings", Takes.WORDS, "--openings",
            "file= --openings, order= --order, plies= --opening-plies", read=_openings),
    Foreign("pgnout", Takes.WORDS, "--pgn", "cutechess-cli's FILE [min] [fi], fastchess's file=FILE "
            "...: the record file, each game appended as it ends", read=_pgnout),
    Foreign("sprt", Takes.WORDS, "--sprt", "the same words", read=_sprt),
    Foreign("draw", Takes.WORDS, "--draw", "the same words (specs/match.md §Adjudication)"),
    Foreign("resign", Takes.WORDS, "--resign", "the same words (specs/match.md §Adjudication)"),
    Foreign("maxmoves", Takes.ONE, "--maxplies", "twice the moves", read=_maxmoves),
    Foreign("repeat", Takes.MAYBE_ONE, "", "game pairs: each opening twice, colours swapped",
            read=_repeat, optional=r"[0-9]+"),
    Foreign("recover", Takes.NOTHING, "",
            "always: a crashed engine is restarted for its next game and the run goes on"),
    Foreign("wait", Takes.ONE, "", "0 only: arbiter has no pause between games", read=_wait),
    Foreign("seeds", Takes.ONE, "", "1 only: the gauntlet's first engine", read=_seeds),
    Foreign("ratinginterval", Takes.ONE, "", _LIVE),
    Foreign("outcomeinterval", Takes.ONE, "", _LIVE, tools=(CUTECHESS,)),
    Foreign("scoreinterval", Takes.ONE, "", _LIVE, tools=(FASTCHESS,)),
    Foreign("resultformat", Takes.ONE, "", "the standings have their own columns; --json gives "
            "every figure", tools=(CUTECHESS,)),
    Foreign("output", Takes.WORDS, "", "arbiter's own display; --plain for a line per game",
            tools=(FASTCHESS,)),
    Foreign("report", Takes.WORDS, "", "pentanomial statistics are always shown",
            tools=(FASTCHESS,)),
    Foreign("autosaveinterval", Takes.ONE, "", "every game is stored as it ends; running the "
            "same command again resumes", tools=(FASTCHESS,)),
    Foreign("force-concurrency", Takes.NOTHING, "", "--concurrency is not capped by the cores",
            tools=(FASTCHESS,)),
    Foreign("help", Takes.NOTHING, "--help", "the command's help"),
    Foreign("version", Takes.NOTHING, "--version", "`arbiter --version`"),
    Foreign("debug", Takes.MAYBE_ONE, None, "no counterpart: --log DIR writes each engine's I/O to "
            "a file of its own", optional=r"all"),
    Foreign("log", Takes.WORDS, None, "no counterpart: --log DIR writes each engine's I/O; "
            "arbiter keeps no log of its own", tools=(FASTCHESS,)),
    Foreign("noswap", Takes.NOTHING, None, _COLOURS),
    Foreign("reverse", Takes.NOTHING, None, _COLOURS),
    Foreign("site", Takes.ONE, None, "no counterpart: the Site tag is `?`"),
    Foreign("epdout", Takes.WORDS, None, "no counterpart: `arbiter export --format jsonl` holds each "
            "game's final position (final_fen)"),
    Foreign("tb", Takes.ONE, None, _NO_TABLEBASES),
    Foreign("tbpieces", Takes.ONE, None, _NO_TABLEBASES),
    Foreign("tbignore50", Takes.NOTHING, None, _NO_TABLEBASES),
    Foreign("tbadjudicate", Takes.ONE, None, _NO_TABLEBASES, tools=(FASTCHESS,)),
    Foreign("bookmode", Takes.ONE, None, "no counterpart: no Polyglot books (--openings FILE)",
            tools=(CUTECHESS,)),
    Foreign("engines", Takes.NOTHING, None, "no counterpart: engines by name come from an engines "
            "file (--engines FILE; `arbiter engine info -e NAME`)", tools=(CUTECHESS,)),
    Foreign("quick", Takes.WORDS, None, "no counterpart: `arbiter match GAME A B --openings FILE`",
            tools=(FASTCHESS,)),
    Foreign("config", Takes.WORDS, None, "no counterpart: a tournament file is `arbiter tournament "
            "FILE.toml`; a stopped run resumes when run again", tools=(FASTCHESS,)),
    Foreign("crc32", Takes.WORDS, None, "no counterpart: the export is the same bytes every time",
            tools=(FASTCHESS,)),
    Foreign("show-latency", Takes.NOTHING, None, "no counterpart: each ply's measured time and the "
            "engine's own are in `arbiter export --format jsonl`", tools=(FASTCHESS,)),
    Foreign("check-mate-pvs", Takes.NOTHING, None, "no counterpart", tools=(FASTCHESS,)),
    Foreign("strict", Takes.NOTHING, "--strict", "arbiter's strict mode", tools=(FASTCHESS,)),
    Foreign("testEnv", Takes.NOTHING, None, "no counterpart", tools=(FASTCHESS,)),
    Foreign("use-affinity", Takes.MAYBE_ONE, None, "no counterpart: arbiter sets no CPU affinity",
            tools=(FASTCHESS,), optional=r"[0-9][0-9,-]*"),
    Foreign("startup-ms", Takes.ONE, None, _TIMEOUTS, tools=(FASTCHESS,)),
    Foreign("ucinewgame-ms", Takes.ONE, None, _TIMEOUTS, tools=(FASTCHESS,)),
    Foreign("ping-ms", Takes.ONE, None, _TIMEOUTS, tools=(FASTCHESS,)),
)}


def markdown_table() -> str:
    """The mapping as the spec shows it: one row per option, by tool."""
    rows = ["| option | of | arbiter | note |", "|---|---|---|---|"]
    for foreign in OPTIONS.values():
        value = {Takes.NOTHING: "", Takes.ONE: " V", Takes.MAYBE_ONE: " [V]",
                 Takes.WORDS: " K=V ..."}[foreign.takes]
        ours = ("refused" if foreign.ours is None else "(nothing to set)" if foreign.ours == ""
                else f"`{foreign.ours}`")
        tools = ", ".join(foreign.tools)
        rows.append(f"| `-{foreign.name}{value}` | {tools} | {ours} | {foreign.note} |")
    rows += ["", "| `-engine`/`-each` word | arbiter SPEC | note |", "|---|---|---|"]
    for key in ENGINE_KEYS.values():
        ours = ("refused" if key.ours is None else "(nothing to set)" if key.ours == ""
                else f"`{key.ours}`")
        rows.append(f"| `{key.key}` | {ours} | {key.note} |")
    return "\n".join(rows) + "\n"

"""Board pictures (arbiter/svg, specs/svg.md): stored pictures of known
positions of each game, well-formed XML, escaping of peers' text, and
``arbiter show --svg``.

The stored pictures under tests/data/svg/ were looked at once, rendered to
PNG; after a deliberate change of the drawing, regenerate them with
``ARBITER_REGEN_SVG=1 python3 -m pytest tests/test_svg.py`` and look again.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli import invoke

from arbiter.games import GAME_NAMES, get_game
from arbiter.games.talisman import TalismanPosition
from arbiter.svg import render_svg

DATA = Path(__file__).parent / "data" / "svg"
RECORDS = Path(__file__).parent / "data" / "records" / "handwritten.pgn"
REGENERATE = os.environ.get("ARBITER_REGEN_SVG") == "1"
SVG = "{http://www.w3.org/2000/svg}"

#: (game, picture, position string or None for the start, the move that made it)
#: from deterministic games played through the referee: a mid-game position and
#: one that the rules ended, for each game
POSITIONS = [
    ("troll", "start", None, None),
    ("troll", "mid", "8/8/1BW2WB1/1BB2BB1/3BB1B1/B1WB2WB/1W2BW2/4W3 w 20", "g6"),
    ("troll", "final", "1W1B4/1BBWBBB1/BBB2BB1/1BBW1BB1/W1BBBBB1/BWBB2BB/1BB1BW1B/2BWW3 w 38", "c1"),
    ("atoll", "start", None, None),
    ("atoll", "mid", "BBBBWWWW/W3B1W1B1B/WW1B1W1B1W1B/WB1W1B1W1BB/W1W1B1W1B1WB/W1B1W1B1W1B/B1W1B1W1B1/"
                     "BW1B1W4W/B10W/B9W/B10W/B9W/WWWWBBBB b 30", "h6"),
    ("atoll", "final", "BBBBWWWW/W1W1BWWBBWB/WWBBWWWBBWBB/WBWWWBWWWBB/WWWBBWWBBWWB/WBBBWBBWW1B/BWWBBWWBB1/"
                       "BWBBWWBBBWW/BBBWWWBWWBBW/BWWBBWWBBWW/BWWBBWBBBWBW/BBWWBBWWBBW/WWWWBBBB b 100", "f8"),
    ("morris", "start", None, None),
    ("morris", "mid", "W1B/WBB/BB1/1WBWWW/2W/B2/WB1 w 0 0 6 24", "d2-b2"),
    ("morris", "final", "2W/3/3/1B3W/1B1/3/2W b 0 0 0 107", "c4-g1xa7"),
    ("talisman", "start", None, None),
    ("talisman", "mid", ".bb/w..b/.b.bw/.ww./bww ...../......./......./..www w 0/0 1 20", "J-K"),
    ("talisman", "final", "bbw/.bbw/b.bb./.bb./..b .bbbb/..bbbb./...bbb./..www w 4/8 0 74", "P-N"),
]

HOSTILE_NAME = "<script>alert(1)</script>"
HOSTILE_DETAIL = '"><img src=x onerror=alert(1)>'


def _picture(game: str, fen: str | None, move: str | None) -> str:
    position = get_game(game).position(fen)
    return render_svg(position, last_move=move, title=f"{game}: {position.ply} plies")


def _parse(text: str) -> ET.Element:
    root = ET.fromstring(text)
    assert root.tag == f"{SVG}svg"
    return root


def _texts(root: ET.Element) -> list[str]:
    return ["".join(node.itertext()) for node in root.iter(f"{SVG}text")]


@pytest.mark.parametrize(("game", "name", "fen", "move"), POSITIONS,
                         ids=[f"{g}-{n}" for g, n, _, _ in POSITIONS])
def test_picture_matches_the_stored_one(game: str, name: str, fen: str | None, move: str | None):
    text = _picture(game, fen, move)
    stored = DATA / f"{game}-{name}.svg"
    if REGENERATE:
        stored.write_text(text, encoding="utf-8")
    assert stored.exists(), f"{stored} missing: run with ARBITER_REGEN_SVG=1 to make it"
    assert text == stored.read_text(encoding="utf-8"), (
        f"{stored.name} differs; if the change is meant, regenerate with ARBITER_REGEN_SVG=1 and look")


@pytest.mark.parametrize(("game", "name", "fen", "move"), POSITIONS,
                         ids=[f"{g}-{n}" for g, n, _, _ in POSITIONS])
def test_picture_is_svg_showing_the_state(game: str, name: str, fen: str | None, move: str | None):
    position = get_game(game).position(fen)
    root = _parse(_picture(game, fen, move))
    texts = _texts(root)
    outcome = position.outcome()
    if outcome is None:
        assert any(t.startswith(f"{position.to_move.value} to move, ply {position.ply}") for t in texts)
    else:
        assert any(t.startswith(f"game over: {outcome.result}") for t in texts)
    assert (f"last move: {move}" in texts) == (move is not None)
    assert not list(root.iter(f"{SVG}script"))


def test_every_game_has_a_renderer():
    for game in GAME_NAMES:
        _parse(render_svg(get_game(game).start()))


def test_the_pieces_on_the_board_are_drawn():
    """A stone per piece (plus the caption's side-to-move stone)."""
    for game, _, fen, _ in POSITIONS:
        position = get_game(game).position(fen)
        root = _parse(render_svg(position))
        circles = [c for c in root.iter(f"{SVG}circle") if c.get("fill") in ("#f7f5ef", "#1e1e1e")]
        expected = len(position.pieces()) + (position.outcome() is None)
        if game == "atoll":  # island cells are hexagons, not stones
            from arbiter.games.atoll import ISLAND_OF
            expected -= sum(1 for cell in position.pieces() if cell in ISLAND_OF)
        assert len(circles) == expected, (game, fen)


def test_talisman_shows_the_scores_and_shades_owned_triangles():
    position = get_game("talisman").from_fen(POSITIONS[-1][2] or "")
    assert isinstance(position, TalismanPosition)
    root = _parse(render_svg(position))
    white, black = position.scores()
    assert f"score: white {white}, black {black}" in _texts(root)
    from arbiter.svg.talisman import OWNED_FILL
    shaded = [p for p in root.iter(f"{SVG}polygon") if p.get("fill") in OWNED_FILL.values()]
    assert len(shaded) == len(position.triangle_owners())


@pytest.mark.parametrize("game", GAME_NAMES)
def test_hostile_text_is_escaped(game: str):
    text = render_svg(get_game(game).start(), last_move=HOSTILE_DETAIL, title=HOSTILE_NAME)
    assert "<script" not in text and "<img" not in text
    root = _parse(text)
    assert not list(root.iter(f"{SVG}script")) and not list(root.iter(f"{SVG}img"))
    texts = _texts(root)
    assert HOSTILE_NAME in texts
    assert f"last move: {HOSTILE_DETAIL}" in texts
    assert root.find(f"{SVG}g/{SVG}title") is not None


def test_a_long_title_is_cut_to_the_picture():
    root = _parse(render_svg(get_game("morris").start(), title="x" * 1000))
    title = _texts(root)[0]
    assert title.startswith("xxx") and title.endswith("\u2026") and len(title) < 100


def test_a_move_that_is_not_of_the_game_marks_nothing():
    from arbiter.svg.frame import HIGHLIGHT
    for game in GAME_NAMES:
        root = _parse(render_svg(get_game(game).start(), last_move="zz99-q0xk"))
        assert not [n for n in root.iter() if n.get("stroke") == HIGHLIGHT], game


def test_show_writes_the_svg_of_the_position_shown(tmp_path: Path):
    out = tmp_path / "talisman.svg"
    plain = invoke("show", RECORDS, "--game", 3, "--ply", 10)
    run = invoke("show", RECORDS, "--game", 3, "--ply", 10, "--svg", out)
    assert run.returncode == 0, run.stderr
    assert run.stdout == plain.stdout  # the text board is unchanged
    root = _parse(out.read_text(encoding="utf-8"))
    texts = _texts(root)
    # the tags are a peer's text: Black is ``random "the" \ mover`` in that file
    assert 'greedy - random "the" \\ mover, ply 10 of 29' in texts
    assert any(t.startswith("last move: ") for t in texts)
    assert "white to move, ply 10" in texts


def test_show_svg_at_the_start_marks_no_move(tmp_path: Path):
    out = tmp_path / "start.svg"
    run = invoke("show", RECORDS, "--game", 1, "--ply", 0, "--svg", out)
    assert run.returncode == 0, run.stderr
    texts = _texts(_parse(out.read_text(encoding="utf-8")))
    assert not any(t.startswith("last move") for t in texts)


def test_show_svg_to_an_unwritable_path_is_a_clear_error(tmp_path: Path):
    for target in (tmp_path / "missing" / "x.svg", tmp_path):
        run = invoke("show", RECORDS, "--game", 1, "--svg", target)
        assert run.returncode == 2
        assert f"{target}: cannot write the SVG" in run.stderr
        assert run.stdout == ""

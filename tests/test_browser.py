"""The web view in a real browser (``specs/web.md`` §Live updates, §Stepping,
§Design): headless Chromium opens a tournament's page while a real tournament
runs, sees the standings change, a game's board advance and the side to
move's clock tick between two updates without a reload, follows a game in
progress to its stored page, steps through a game's plies with the keys,
the buttons, the slider, a chart and the move list, and shows no JavaScript
error.  Then every kind of page (tournaments, engines, an engine, a
tournament finished, filtered, stopped by its SPRT, running, an arena, a
game in progress, a stored game) at a desk's and a phone's size in both
colour schemes: no console error, no horizontal scrollbar on the phone, no
element out of its container, WCAG AA contrast, the pieces of accessibility.
A screenshot of each page is kept under the test's temporary directory."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cli import PROCESS_TIMEOUT, start

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"

pytestmark = pytest.mark.skipif(
    not (Path(CHROMIUM).exists() or shutil.which("chromium")) or not (
        Path(CHROMEDRIVER).exists() or shutil.which("chromedriver")),
    reason="Debian's chromium and chromedriver are not installed (.ci/run installs them)")

PYTHON = __import__("sys").executable
PACED = Path(__file__).parent / "engines_for_tournament" / "paced.py"
#: two engines that spend their share of the clock (TC) on each move, asleep
#: (a searcher such as mcts does the same, burning a core that the other tests
#: want): a game lasts seconds, there is time to watch it
ENGINES = (f"cmd={PYTHON} arg={PACED} name=paced-a", f"cmd={PYTHON} arg={PACED} name=paced-b")
TC = "8+0.1"
#: each game ends here (a draw by the ply limit, or sooner by the rules): about
#: 0.3 s a move at TC, seconds a game, longer than a clock tick and a page load
MAXPLIES = 24
#: Games in progress tried for a live game page (each may end before its page loads).
LIVE_PAGE_TRIES = 5
#: the first game is watched to its end, a second one followed to its stored
#: page; the third keeps a game in progress should the second end before its
#: page loads
GAMES = 3
#: seconds a page may take to show what it waits for: a guard against a
#: hang on a loaded machine, never a measure of speed
WAIT = 120


@pytest.fixture
def driver(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage", "--window-size=1280,1600",
                 f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=CHROMEDRIVER if Path(CHROMEDRIVER).exists()
                      else shutil.which("chromedriver"))
    browser = webdriver.Chrome(options=options, service=service)
    try:
        yield browser
    finally:
        browser.quit()


def until(browser, condition, what: str):
    """``condition(browser)`` once it is true (an element replaced by an
    update meanwhile is looked at again)."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, WAIT, poll_frequency=0.05,
                         ignored_exceptions=(NoSuchElementException, StaleElementReferenceException))
    return wait.until(condition, message=what)


#: what the live sections show, read in one script (the page may change between two reads)
LIVE_STATE = """return {
  games: [...document.querySelectorAll("figure.live-game")].map(f => [f.dataset.key, f.dataset.plies]),
  boards: document.querySelectorAll("figure.live-game svg").length,
  done: Number(document.querySelector("#summary .done").textContent),
  standings: [...document.querySelectorAll("table.standings td.games")].map(e => e.textContent),
}"""


#: the side to move's clock of a game in progress, watched across ticks: true
#: once the SAME element (no update replaced its section meanwhile) shows a
#: smaller figure than when first seen (specs/web.md §Clocks)
CLOCK_TICKED = """
const seen = window.seenClock;
if (!seen || !seen.element.isConnected) {
  const element = document.querySelector(".clock[data-left-ms]");
  window.seenClock = element && {element, text: element.textContent};
  return false;
}
const now = parseFloat(seen.element.textContent), then = parseFloat(seen.text);
return now < then ? [then, now, Number(seen.element.dataset.leftMs)] : false;
"""


def no_console_errors(browser) -> None:
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == [], errors


@pytest.fixture
def running(tmp_path):
    """A real tournament writing its database, and ``arbiter web`` reading
    it: (the tournament's process, the view's URL)."""
    db = tmp_path / "browser.db"
    run = start("match", "troll", *ENGINES, "--games", GAMES, "-c", 1, "--tc", TC,
                "--maxplies", MAXPLIES, "--db", db, "--plain")
    web = None
    try:
        deadline = time.monotonic() + PROCESS_TIMEOUT
        while not Path(f"{db}-run-1.lock").exists():  # the run holds its tournament
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.05)
        web = start("web", "--db", db, "--http", "127.0.0.1:0")
        assert web.stdout is not None
        line = web.stdout.readline()
        match = re.search(r"at (http://127\.0\.0\.1:\d+/)$", line.strip())
        assert match, line
        yield run, match[1]
    finally:
        for proc in (run, web):
            if proc is not None:
                if proc.poll() is None:
                    proc.kill()
                proc.communicate()


def test_a_running_tournament_then_its_games(driver, running, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    run, url = running
    driver.get(url + "tournament/1")
    driver.execute_script("window.notReloaded = true")

    # a game in progress whose board advances: the same game seen at two plies
    seen: dict[str, set[str]] = {}

    def advanced(browser) -> bool:
        state = browser.execute_script(LIVE_STATE)
        for key, plies in state["games"]:
            seen.setdefault(key, set()).add(plies)
        return state["boards"] > 0 and any(len(plies) >= 2 for plies in seen.values())
    until(driver, advanced, "a game in progress whose board advances")
    driver.save_screenshot(str(tmp_path / "tournament-live.png"))
    then, now, figure = until(driver, lambda b: b.execute_script(CLOCK_TICKED),
                              "the side to move's clock ticking between two updates")
    assert 0 <= now < then <= figure / 1000 + 0.005  # counted down from the server's figure
    no_console_errors(driver)

    before = driver.execute_script(LIVE_STATE)
    until(driver, lambda b: b.execute_script(LIVE_STATE)["done"] > before["done"], "a game stored")
    until(driver, lambda b: b.execute_script(LIVE_STATE)["standings"] != before["standings"],
          "the standings changed")
    assert driver.execute_script("return window.notReloaded") is True  # updated in place
    driver.save_screenshot(str(tmp_path / "tournament-standings.png"))
    no_console_errors(driver)

    # a game in progress, followed to its stored page when it ends
    for _ in range(LIVE_PAGE_TRIES):  # a game may end between its link's reading and its page's loading
        href = until(driver, lambda b: b.execute_script(
            'const a = document.querySelector("figure.live-game a"); return a && a.href'), "a game in progress")
        driver.get(href)
        if "in progress" in driver.find_element(By.TAG_NAME, "h1").text:
            break
        assert re.search(r"/game/\d+$", driver.current_url)  # ended first: its stored page instead
        driver.get(url + "tournament/1")
    else:
        pytest.fail(f"each of {LIVE_PAGE_TRIES} games in progress ended before its page loaded")
    driver.save_screenshot(str(tmp_path / "game-live.png"))
    driver.execute_script("window.seenClock = null")
    until(driver, lambda b: b.execute_script(CLOCK_TICKED) or re.search(r"/game/\d+$", b.current_url),
          "the game page's clock ticking (or the game over first)")
    until(driver, lambda b: re.search(r"/game/\d+$", b.current_url), "the finished game's page")
    no_console_errors(driver)

    assert run.wait(timeout=PROCESS_TIMEOUT) == 0
    driver.get(url + "tournament/1")
    assert int(driver.find_element(By.CSS_SELECTOR, "#summary .done").text) == GAMES
    assert driver.find_elements(By.CSS_SELECTOR, "figure.live-game") == []
    driver.save_screenshot(str(tmp_path / "tournament-finished.png"))

    # a stored game: step through its plies without a reload
    driver.get(url + "game/1")
    driver.execute_script("window.notReloaded = true")
    total = int(driver.find_element(By.CSS_SELECTOR, "nav.steps").get_attribute("data-plies"))
    assert total > 2

    def ply_is(n: int):
        return lambda b: (b.find_element(By.ID, "ply").text == str(n)
                          and f"ply {n} of {total}" in b.find_element(By.ID, "board").get_attribute("innerHTML"))
    until(driver, ply_is(total), "the last ply first")
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.HOME)
    until(driver, ply_is(0), "Home: ply 0")
    body.send_keys(Keys.ARROW_RIGHT)
    until(driver, ply_is(1), "right: ply 1")
    body.send_keys(Keys.ARROW_RIGHT)
    until(driver, ply_is(2), "right: ply 2")
    body.send_keys(Keys.ARROW_LEFT)
    until(driver, ply_is(1), "left: ply 1")
    driver.find_element(By.CSS_SELECTOR, 'a[data-step="next"]').click()
    until(driver, ply_is(2), "next: ply 2")
    assert driver.find_element(By.CSS_SELECTOR, "tr.now").get_attribute("data-ply") == "2"
    driver.find_element(By.CSS_SELECTOR, 'a[data-step="last"]').click()
    until(driver, ply_is(total), "last")
    body.send_keys(Keys.HOME)
    until(driver, ply_is(0), "Home again")
    assert driver.current_url.endswith("/game/1?ply=0")
    # a chart's column and a move of the list go to their ply, the ply's figures with them
    driver.find_element(By.CSS_SELECTOR, 'svg.chart a[data-ply="3"] rect').click()
    until(driver, ply_is(3), "a chart's column: ply 3")
    assert driver.find_element(By.ID, "info-title").text.startswith("Ply 3: ")
    driver.find_element(By.CSS_SELECTOR, 'table.moves tr[data-ply="4"] a').click()
    until(driver, ply_is(4), "a move of the list: ply 4")
    assert driver.find_element(By.ID, "info-title").text.startswith("Ply 4: ")
    assert driver.find_element(By.CSS_SELECTOR, "tr.now").get_attribute("data-ply") == "4"
    assert driver.execute_script("return window.notReloaded") is True
    assert driver.find_element(By.CSS_SELECTOR, ".charts svg.chart")
    driver.save_screenshot(str(tmp_path / "game.png"))
    no_console_errors(driver)
    for name in ("tournament-live", "tournament-standings", "game-live", "tournament-finished", "game"):
        assert (tmp_path / f"{name}.png").stat().st_size > 0


# -- every page type, at a desk and on a phone, in both schemes (specs/web.md §Design) ----------

#: the sizes every page is looked at: a desk's window and a phone's screen
SIZES = ((1280, 900), (390, 844))
SCHEMES = ("light", "dark")
#: WCAG AA: text's contrast with its background at least this (large text: 3)
CONTRAST, LARGE_CONTRAST = 4.5, 3.0

#: what the page does wrong, read in one script: a horizontal scrollbar, an
#: element out of its container (one inside a box that scrolls is that box's
#: business: the box itself is checked), text whose contrast with its
#: background is under WCAG AA (a board's own text is the board picture's,
#: specs/svg.md), and the pieces of accessibility a page must have
PAGE_PROBLEMS = """
const problems = {hscroll: null, overflow: [], contrast: [], a11y: []};
const doc = document.documentElement;
if (doc.scrollWidth > doc.clientWidth) problems.hscroll = [doc.scrollWidth, doc.clientWidth];
const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
  (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\\s+/).join(".") : "") +
  " '" + (el.textContent || "").trim().slice(0, 40) + "'";
const clipped = (el) => {  // inside a box that scrolls or clips its content
  for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
    if (["auto", "scroll", "hidden", "clip"].includes(getComputedStyle(p).overflowX)) return true;
  }
  return false;
};
const shown = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
for (const el of document.body.querySelectorAll("*")) {
  if (el.closest("svg") || !shown(el)) continue;
  const style = getComputedStyle(el);
  if (["absolute", "fixed"].includes(style.position) || clipped(el)) continue;
  const r = el.getBoundingClientRect(), p = el.parentElement.getBoundingClientRect();
  if (r.right > p.right + 1 || r.left < p.left - 1 || r.right > doc.clientWidth + 1) problems.overflow.push(name(el));
  else if (style.overflowX === "visible" && !["svg", "input", "progress", "img"].includes(el.tagName.toLowerCase())
           && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0 && style.display !== "inline") {
    problems.overflow.push(name(el) + " (its content)");
  }
}
const rgba = (text) => { const m = text.match(/[\\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
const luminance = ([r, g, b]) => {
  const c = [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
};
const background = (el) => {
  for (let e = el; e; e = e.parentElement) {
    if (e instanceof SVGElement && e.classList.contains("chart-bg")) return rgba(getComputedStyle(e).fill);
    const c = rgba(getComputedStyle(e).backgroundColor);
    if (c[3] > 0.5) return c;
  }
  return [255, 255, 255, 1];
};
const texts = [...document.body.querySelectorAll("*")].filter((el) =>
  [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()) && shown(el)
  && (!el.closest("svg") || el.closest("svg.chart")) && !el.closest(".skip") && !el.closest("[hidden]"));
for (const el of texts) {
  const style = getComputedStyle(el);
  const inSvg = el instanceof SVGElement;
  const fg = rgba(inSvg ? style.fill : style.color);
  const bg = background(inSvg ? el.closest("svg").querySelector(".chart-bg") || el : el);
  const [hi, lo] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
  const ratio = (hi + 0.05) / (lo + 0.05);
  const size = parseFloat(style.fontSize) * (inSvg ? el.closest("svg").getBoundingClientRect().width / el.closest("svg").viewBox.baseVal.width : 1);
  const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
  if (ratio < (large ? LARGE_CONTRAST : CONTRAST)) problems.contrast.push(name(el) + " " + ratio.toFixed(2));
}
if (doc.lang !== "en") problems.a11y.push("no lang");
if (!document.title.trim()) problems.a11y.push("no title");
for (const input of document.querySelectorAll("input, select, textarea")) {
  if (!input.getAttribute("aria-label") && !input.labels.length) problems.a11y.push("unlabelled " + name(input));
}
for (const img of document.querySelectorAll("img")) if (!img.hasAttribute("alt")) problems.a11y.push("no alt " + name(img));
for (const a of document.querySelectorAll("a")) {
  if (!a.textContent.trim() && !a.getAttribute("aria-label")) problems.a11y.push("a link without a name " + a.href);
}
for (const board of document.querySelectorAll(".board, .mini")) {  // a board's text alternative: its position
  const labelled = board.getAttribute("aria-label") ? board : board.querySelector("[aria-label]");
  if (!labelled || !/position/.test(labelled.getAttribute("aria-label"))) problems.a11y.push("a board without its position");
}
return problems;
""".replace("LARGE_CONTRAST", str(LARGE_CONTRAST)).replace("CONTRAST", str(CONTRAST))


def look(browser, size: tuple[int, int], scheme: str) -> None:
    """The browser as a screen of ``size`` (CSS pixels; a phone's is a
    mobile one) that prefers ``scheme``."""
    width, height = size
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-color-scheme", "value": scheme}]})


def page_problems(browser) -> dict:
    """:data:`PAGE_PROBLEMS` of the page shown, and its console's errors."""
    problems = browser.execute_script(PAGE_PROBLEMS)
    problems["console"] = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    return problems


NO_PROBLEMS = {"hscroll": None, "overflow": [], "contrast": [], "a11y": [], "console": []}

PAGED = Path(__file__).parent / "engines_for_tournament" / "paced.py"
#: the arena's clock: paced engines spend it asleep, a game of Atoll takes
#: seconds, so games are stored while others are in progress
ARENA_TC = "2+0.05"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A database with every kind of page, and ``arbiter web`` reading it:
    a finished round-robin (an engine named like a script among them), an
    SPRT match stopped early by illegal moves, a running match held at ply
    6 by a gated engine (a game in progress), a running arena of paced
    engines with games stored; yields (the view's URL, the ids)."""
    from server_peers import Server, add_token

    tmp = tmp_path_factory.mktemp("site")
    db = tmp / "site.db"
    xss = f"cmd={PYTHON} arg=-m arg=sample_engines.random name=<script>alert(1)</script>"
    greedy = f"cmd={PYTHON} arg=-m arg=sample_engines.greedy name=greedy"
    illegal = f"cmd={PYTHON} arg={Path(__file__).parent / 'bad_engines' / 'illegal.py'} name=illegal"
    for args in (("tournament", "-g", "talisman", "-e", greedy, "-e", xss, "-e", "random", "--games", 2,
                  "--maxplies", 60, "--tc", "10+0.1"),
                 ("match", "troll", illegal, greedy, "--sprt", "elo0=0 elo1=200 alpha=0.2 beta=0.2",
                  "--tc", "10+0.1")):
        run = start(*args, "--db", db, "--plain")
        _, err = run.communicate(timeout=PROCESS_TIMEOUT)
        assert run.returncode == 0, err
    gate = tmp / "gate"
    gated = f"cmd='{PYTHON} {Path(__file__).parent / 'engines_for_tournament' / 'gate.py'}' name=gated " \
            f"env.GATE={gate} env.GATE_AFTER=3"
    procs = [start("match", "morris", gated, xss, "--games", 2, "-c", 1, "--tc", "1000+0", "--db", db,
                   "--plain")]
    server = None
    try:
        wait_live(db, 6, procs[0])
        server = Server(db, "browser-site", f"game=atoll tc={ARENA_TC} name='atoll arena'")
        procs.append(server.proc)
        for name in ("paced-north", "paced-south", "paced-east"):
            token = add_token(db, name)
            procs.append(start("connect", f"127.0.0.1:{server.port}", "--token", token, "-e",
                               f"cmd='{PYTHON} {PAGED}' name={name}"))
        deadline = time.monotonic() + PROCESS_TIMEOUT  # a guard against a hang only
        while not any(g["format"] == "arena" for g in server.games()):  # an arena game stored
            assert server.proc.poll() is None and time.monotonic() < deadline, "".join(server.lines)
            time.sleep(0.1)
        web = start("web", "--db", db, "--http", "127.0.0.1:0")
        procs.append(web)
        assert web.stdout is not None
        line = web.stdout.readline()
        match = re.search(r"at (http://127\.0\.0\.1:\d+/)$", line.strip())
        assert match, line
        yield match[1]
    finally:
        gate.touch()
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in reversed(procs):
            try:
                proc.communicate(timeout=PROCESS_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()


def wait_live(db: Path, plies: int, proc) -> None:
    """Until the run's game in progress is at ``plies`` (a guard: PROCESS_TIMEOUT)."""
    import sqlite3

    deadline = time.monotonic() + PROCESS_TIMEOUT
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            rows = sqlite3.connect(db).execute("select plies from live").fetchall()
        except sqlite3.OperationalError:
            rows = []
        if rows and rows[0][0] >= plies:
            return
        time.sleep(0.05)
    raise AssertionError(f"no game in progress at ply {plies}")


def site_pages(url: str) -> dict[str, str]:
    """One page of each kind, by name: found through the view's own JSON."""
    import urllib.request

    def get(path: str):
        with urllib.request.urlopen(url + path, timeout=PROCESS_TIMEOUT) as response:
            return json.load(response)

    listed = {t["name"]: t for t in get("api/tournaments")["tournaments"]}
    robin, sprt = listed["talisman round-robin"], listed["troll match"]
    running, arena = listed["morris match"], listed["atoll arena"]
    live = get(f"api/tournament/{running['id']}")["live"][0]["key"]
    game = get(f"api/tournament/{robin['id']}")["games"][0]["id"]
    return {"index": "", "engines": "engines", "engine": "engine/greedy",
            "tournament": f"tournament/{robin['id']}", "filtered": f"tournament/{robin['id']}?engine=greedy&result=1-0",
            "sprt": f"tournament/{sprt['id']}", "running": f"tournament/{running['id']}",
            "arena": f"tournament/{arena['id']}", "live-game": f"tournament/{running['id']}/live/{live}",
            "game": f"game/{game}"}


def test_every_page_at_a_desk_and_on_a_phone(driver, site, tmp_path):
    """specs/web.md §Design: each kind of page at 1280x900 and 390x844, light
    and dark: no console error, no horizontal scrollbar, no element out of
    its container, text contrast WCAG AA, a language, a title, labelled
    controls and boards with their position as text; a screenshot of each
    under the test's directory."""
    pages = site_pages(site)
    shots = tmp_path / "screens"
    shots.mkdir()
    found = {}
    for size in SIZES:
        for scheme in SCHEMES:
            look(driver, size, scheme)
            for name, path in pages.items():
                driver.get(site + path)
                problems = page_problems(driver)
                if problems != NO_PROBLEMS:
                    found[f"{name} {size[0]}x{size[1]} {scheme}"] = problems
                driver.save_screenshot(str(shots / f"{name}-{size[0]}-{scheme}.png"))
    assert found == {}, json.dumps(found, indent=1)
    assert len(list(shots.glob("*.png"))) == len(pages) * len(SIZES) * len(SCHEMES)


def test_the_page_checks_see_what_they_look_for(driver, site):
    """The checks above can fail: an element wider than its box, text too
    faint to read, a control without a label and a board without its
    position are each reported, and a phone's page made wider than the
    screen has a horizontal scrollbar."""
    look(driver, SIZES[1], "light")
    driver.get(site + site_pages(site)["game"])
    assert page_problems(driver) == NO_PROBLEMS
    driver.execute_script("""
      const card = document.querySelector(".card");
      const wide = document.createElement("div"); wide.id = "wide"; wide.style.width = "2000px"; wide.textContent = "wide";
      const faint = document.createElement("p"); faint.id = "faint"; faint.style.color = "#dddddd"; faint.textContent = "faint";
      card.append(wide, faint, document.createElement("input"));
      document.getElementById("board").removeAttribute("aria-label");
    """)
    problems = page_problems(driver)
    assert problems["hscroll"] and any("#wide" in p for p in problems["overflow"])
    assert any("#faint" in p for p in problems["contrast"])
    assert any(p.startswith("unlabelled input") for p in problems["a11y"])
    assert "a board without its position" in problems["a11y"]

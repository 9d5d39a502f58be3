"""The web view in a real browser (``specs/web.md`` §Live updates, §Stepping):
headless Chromium opens a tournament's page while a real tournament runs,
sees the standings change, a game's board advance and the side to move's
clock tick between two updates without a reload,
follows a game in progress to its stored page, steps through a game's plies
with the keys, the buttons and the slider, and shows no JavaScript error.
A screenshot of each page is kept under the test's temporary directory."""

from __future__ import annotations

import re
import shutil
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
  standings: [...document.querySelectorAll("table.standings td:nth-child(2)")].map(e => e.textContent),
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
    driver.find_element(By.LINK_TEXT, "next").click()
    until(driver, ply_is(2), "next: ply 2")
    assert driver.find_element(By.CSS_SELECTOR, "tr.now").get_attribute("data-ply") == "2"
    driver.find_element(By.LINK_TEXT, "last").click()
    until(driver, ply_is(total), "last")
    body.send_keys(Keys.HOME)
    until(driver, ply_is(0), "Home again")
    assert driver.current_url.endswith("/game/1?ply=0")
    assert driver.execute_script("return window.notReloaded") is True
    assert driver.find_element(By.CSS_SELECTOR, "section.chart svg")
    driver.save_screenshot(str(tmp_path / "game.png"))
    no_console_errors(driver)
    for name in ("tournament-live", "tournament-standings", "game-live", "tournament-finished", "game"):
        assert (tmp_path / f"{name}.png").stat().st_size > 0

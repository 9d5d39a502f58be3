// The web view's one script (specs/web.md §Live updates, §Stepping): plain
// JavaScript, no build step, no library.  Served from this origin only (the
// Content-Security-Policy allows no other script and no inline one).  Every
// page works without it: links and plain pages; it adds live updates,
// ticking clocks and stepping through a game without a reload.
"use strict";

// A page with data-live on <body> listens to its event stream: each
// "section" carries the HTML of one live part of the page (its id),
// rendered and escaped by the server's templates; "finished" names the
// stored game.
function listen(url) {
  const source = new EventSource(url);
  source.addEventListener("section", (event) => {
    const section = JSON.parse(event.data);
    const element = document.getElementById(section.id);
    if (!element) return;
    const box = element.querySelector(".moves-box");
    const following = !box || box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
    element.innerHTML = section.html;
    clocks.start(element);
    const fresh = element.querySelector(".moves-box");
    if (fresh && following) fresh.scrollTop = fresh.scrollHeight;  // a game followed ply by ply
  });
  source.addEventListener("finished", (event) => {
    source.close();
    clocks.stop();
    window.location.assign(JSON.parse(event.data).url);
  });
}

// The clock of the side to move ticks between two updates (specs/web.md
// §Clocks): its data-left-ms is the server's figure when the section was
// rendered; the page counts down from the moment the section arrived,
// never below zero.  A newer section brings a newer figure; a game that
// ends leaves the page (or its section), and its clock with it.
const TICK_MS = 100;
const clocks = {
  arrived: new WeakMap(),
  timer: null,
  start(root) {
    const now = performance.now();
    for (const clock of root.querySelectorAll(".clock[data-left-ms]")) this.arrived.set(clock, now);
    if (this.timer === null) this.timer = setInterval(() => this.tick(), TICK_MS);
  },
  tick() {
    const now = performance.now();
    for (const clock of document.querySelectorAll(".clock[data-left-ms]")) {
      const arrived = this.arrived.get(clock) ?? now;
      const left = Math.max(0, Number(clock.dataset.leftMs) - (now - arrived));
      clock.textContent = `${(left / 1000).toFixed(2)}s`;
    }
  },
  stop() {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  },
};

// The shown ply's panel, filled from its row of the move list (the row's
// cells and data-*: the server formatted every figure).
const NOT_REPORTED = "not reported";
function showInfo(row, ply) {
  const title = document.getElementById("info-title");
  if (!title) return;
  const figures = document.getElementById("info-figures");
  const pvLine = document.getElementById("info-pv-line");
  const played = row && !row.dataset.book;
  figures.hidden = pvLine.hidden = !played;
  if (!row) {
    title.textContent = "Before the first move";
    return;
  }
  const cells = row.querySelectorAll("td");
  const move = cells[1].lastChild.textContent.trim();
  title.textContent = played ? `Ply ${ply}: ${row.dataset.side} played ${move}` : `Ply ${ply}: book move ${move}`;
  if (!played) return;
  const text = (value) => value || NOT_REPORTED;
  document.getElementById("info-time").textContent = text(cells[2].textContent);
  document.getElementById("info-clock").textContent = text(cells[3].textContent);
  document.getElementById("info-score").textContent = text(cells[4].textContent);
  document.getElementById("info-depth").textContent = text(cells[5].textContent);
  document.getElementById("info-nodes").textContent = text(row.dataset.nodes);
  document.getElementById("info-nps").textContent = row.dataset.nps ? `${row.dataset.nps}/s` : NOT_REPORTED;
  document.getElementById("info-pv").textContent = row.dataset.pv || "none reported";
}

// A stored game's page steps through its plies without a reload: the
// buttons, the slider, the keys, a move of the list and a chart's column
// fetch the ply's JSON and show its board; only the latest request counts.
function stepper(nav) {
  const game = nav.dataset.game;
  const plies = Number(nav.dataset.plies);
  const links = [...nav.querySelectorAll("a[data-step]")];
  const slider = nav.querySelector("input");
  const board = document.getElementById("board");
  const box = document.querySelector(".moves-box");
  const rows = new Map([...document.querySelectorAll("table.moves tr[data-ply]")].map((r) => [Number(r.dataset.ply), r]));
  const charts = [...document.querySelectorAll("svg.chart[data-dx]")];
  let shown = Number(slider.value);
  let asked = 0;

  function mark(ply) {
    for (const row of rows.values()) row.classList.toggle("now", Number(row.dataset.ply) === ply);
    const row = rows.get(ply);
    if (row && box) {  // into view inside the list only: the page itself does not jump
      const top = row.offsetTop - box.querySelector("thead").offsetHeight;
      if (top < box.scrollTop) box.scrollTop = top;
      else if (row.offsetTop + row.offsetHeight > box.scrollTop + box.clientHeight) {
        box.scrollTop = row.offsetTop + row.offsetHeight - box.clientHeight;
      }
    }
    for (const chart of charts) {
      const x = Number(chart.dataset.x0) + Number(chart.dataset.dx) * ply;
      const marker = chart.querySelector(".chart-marker");
      if (marker) {
        marker.setAttribute("x1", String(x));
        marker.setAttribute("x2", String(x));
      }
    }
    showInfo(row, ply);
  }

  async function show(ply) {
    ply = Math.max(0, Math.min(plies, ply));
    const request = ++asked;
    shown = ply;
    slider.value = String(ply);
    const response = await fetch(`/api/game/${game}?ply=${ply}`);
    if (!response.ok || request !== asked) return;
    const data = await response.json();
    if (request !== asked) return;
    board.innerHTML = data.svg;
    board.setAttribute("aria-label", `${data.game.game} position after ply ${data.ply} of ${plies}: ${data.fen}`);
    document.getElementById("fen").textContent = data.fen;
    document.getElementById("ply").textContent = String(data.ply);
    const steps = [data.steps.first, data.steps.previous, data.steps.next, data.steps.last];
    links.forEach((link, i) => { link.href = `/game/${game}?ply=${steps[i]}`; });
    mark(data.ply);
    history.replaceState(null, "", `/game/${game}?ply=${data.ply}`);
  }

  const targets = {first: () => 0, previous: () => shown - 1, next: () => shown + 1, last: () => plies};
  links.forEach((link) => link.addEventListener("click", (event) => {
    event.preventDefault();
    show(targets[link.dataset.step]());
  }));
  slider.addEventListener("input", () => show(Number(slider.value)));
  document.addEventListener("keydown", (event) => {
    const keys = {Home: "first", ArrowLeft: "previous", ArrowRight: "next", End: "last"};
    if (event.target === slider || !(event.key in keys) || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    show(targets[keys[event.key]]());
  });
  // a move of the list, a column of a chart: links to /game/ID?ply=N
  const prefix = `/game/${game}?ply=`;
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const href = link.getAttribute("href") || "";
    if (!href.startsWith(prefix) || link.dataset.step) return;
    event.preventDefault();
    show(Number(href.slice(prefix.length)));
  });
  mark(shown);
}

document.addEventListener("DOMContentLoaded", () => {
  const url = document.body.dataset.live;
  if (url) {
    clocks.start(document);
    listen(url);
    const box = document.querySelector(".moves-box");
    if (box) box.scrollTop = box.scrollHeight;
  }
  const nav = document.querySelector("nav.steps[data-game]");
  if (nav) stepper(nav);
});

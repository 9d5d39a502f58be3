// The web view's one script (specs/web.md §Live updates, §Stepping): plain
// JavaScript, no build step, no library.  Served from this origin only (the
// Content-Security-Policy allows no other script and no inline one).
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
    element.innerHTML = section.html;
    clocks.start(element);
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

// A stored game's page steps through its plies without a reload: the
// links, the slider and the keys fetch the ply's JSON and show its board.
function stepper(nav) {
  const game = nav.dataset.game;
  const plies = Number(nav.dataset.plies);
  const links = nav.querySelectorAll("a");
  const slider = nav.querySelector("input");
  let shown = Number(slider.value);

  async function show(ply) {
    ply = Math.max(0, Math.min(plies, ply));
    const response = await fetch(`/api/game/${game}?ply=${ply}`);
    if (!response.ok) return;
    const data = await response.json();
    shown = data.ply;
    document.getElementById("board").innerHTML = data.svg;
    document.getElementById("ply").textContent = String(shown);
    slider.value = String(shown);
    const steps = [data.steps.first, data.steps.previous, data.steps.next, data.steps.last];
    links.forEach((link, i) => { link.href = `/game/${game}?ply=${steps[i]}`; });
    for (const row of document.querySelectorAll("table.moves tr[data-ply]")) {
      row.classList.toggle("now", Number(row.dataset.ply) === shown);
    }
    history.replaceState(null, "", `/game/${game}?ply=${shown}`);
  }

  const targets = [() => 0, () => shown - 1, () => shown + 1, () => plies];
  links.forEach((link, i) => link.addEventListener("click", (event) => {
    event.preventDefault();
    show(targets[i]());
  }));
  slider.addEventListener("input", () => show(Number(slider.value)));
  document.addEventListener("keydown", (event) => {
    const keys = {Home: 0, ArrowLeft: 1, ArrowRight: 2, End: 3};
    if (event.target === slider || !(event.key in keys)) return;
    event.preventDefault();
    show(targets[keys[event.key]]());
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const url = document.body.dataset.live;
  if (url) {
    clocks.start(document);
    listen(url);
  }
  const nav = document.querySelector("nav.steps[data-game]");
  if (nav) stepper(nav);
});

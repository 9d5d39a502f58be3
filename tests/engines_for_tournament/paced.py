"""A random mover that spends its time budget asleep: its games last as long
as a searcher's that uses its clock (the SDK's budget, ``arbiter.sdk.time_budget_ms``)
at no CPU cost, which is what a test that watches games in progress needs (the
browser test: ``tests/test_browser.py``).  It reports a score with each move,
for the game page's chart.  ``stop`` ends the wait at once."""

from arbiter.sdk import Engine, run


class Paced(Engine):
    name = "Paced"
    author = "the arbiter tests"

    def choose_move(self, position, limits):
        if limits.budget is not None:
            limits.stop_event.wait(max(0.0, limits.budget - limits.elapsed()))
        moves = position.legal_moves()
        move = self.rng.choice(moves)
        self.info(depth=1, nodes=len(moves), score_cp=self.rng.randint(-200, 200), pv=(move,))
        return move


run(Paced)

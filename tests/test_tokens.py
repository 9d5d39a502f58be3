"""Tokens (arbiter/tokens.py, `arbiter token`): on real SQLite files, the
commands in process (tests/cli.py)."""

from __future__ import annotations

import json
import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest
from cli import invoke

from arbiter.store import Store
from arbiter.tokens import TokenError, TokenStore


def test_a_token_is_printed_once_and_stored_only_as_a_salted_hash(tmp_path):
    db = tmp_path / "a.db"
    run = invoke("token", "add", "alice", "--db", db)
    assert run.returncode == 0, run.stderr
    token = run.stdout.strip()
    name, _, secret = token.partition(".")
    assert name == "alice" and len(secret) == 43
    with TokenStore(db) as tokens:
        assert tokens.verify(token) == "alice"
        assert tokens.verify(token + "x") is None
        assert tokens.verify("bob." + secret) is None
        assert tokens.verify("garbage") is None and tokens.verify("") is None
    rows = sqlite3.connect(db).execute("select * from tokens").fetchall()
    assert len(rows) == 1 and not any(secret in str(value) for value in rows[0])
    again = invoke("token", "add", "bob", "--db", db).stdout.strip()
    salts = sqlite3.connect(db).execute("select salt from tokens").fetchall()
    assert len(set(salts)) == 2 and again != token


def test_list_shows_names_and_times_never_a_secret(tmp_path):
    db = tmp_path / "a.db"
    secret = invoke("token", "add", "alice", "--db", db).stdout.strip().partition(".")[2]
    invoke("token", "add", "bob", "--db", db)
    run = invoke("token", "list", "--db", db)
    assert run.returncode == 0, run.stderr
    assert [line.split()[0] for line in run.stdout.splitlines()] == ["alice", "bob"]
    assert "active" in run.stdout and secret not in run.stdout
    rows = json.loads(invoke("token", "list", "--db", db, "--json").stdout)
    assert [row["name"] for row in rows] == ["alice", "bob"]
    assert rows[0]["revoked"] is None and rows[0]["created"].endswith("Z")


def test_a_revoked_token_no_longer_verifies_and_its_name_can_be_given_a_new_one(tmp_path):
    db = tmp_path / "a.db"
    old = invoke("token", "add", "alice", "--db", db).stdout.strip()
    run = invoke("token", "revoke", "alice", "--db", db)
    assert run.returncode == 0 and "revoked" in run.stdout
    with TokenStore(db) as tokens:
        assert tokens.verify(old) is None
    assert "revoked" in invoke("token", "list", "--db", db).stdout
    run = invoke("token", "revoke", "alice", "--db", db)
    assert run.returncode == 2 and "no active token 'alice'" in run.stderr
    new = invoke("token", "add", "alice", "--db", db).stdout.strip()
    with TokenStore(db) as tokens:
        assert tokens.verify(new) == "alice" and tokens.verify(old) is None


@pytest.mark.parametrize("args, words", [
    (("add", "alice"), "exists (revoke it first)"),
    (("add", "a.b"), "1 to 64 letters"),
    (("add", "x" * 65), "1 to 64 letters"),
    (("add",), "takes a NAME"),
    (("list", "alice"), "takes no NAME"),
    (("revoke", "nobody"), "no active token"),
])
def test_mistakes_are_one_clear_line(tmp_path, args, words):
    db = tmp_path / "a.db"
    invoke("token", "add", "alice", "--db", db)
    run = invoke("token", *args, "--db", db)
    assert run.returncode == 2 and words in run.stderr and run.stdout == ""


def test_the_tokens_table_lives_beside_the_results_without_touching_them(tmp_path):
    db = tmp_path / "results.db"
    with Store(db) as store:
        store.create_tournament(name="t", game="troll", format="round-robin", identity="i",
                                config={}, engines=[{"name": "a"}, {"name": "b"}], total_games=1)
    before = sqlite3.connect(db).execute("select * from tournaments").fetchall()
    token = invoke("token", "add", "alice", "--db", db).stdout.strip()
    with Store(db) as store:  # the store still opens it, and the token table stays
        assert len(store.tournaments()) == 1
    assert sqlite3.connect(db).execute("select * from tournaments").fetchall() == before
    with TokenStore(db) as tokens:
        assert tokens.verify(token) == "alice"


def test_a_file_that_is_no_database_is_one_clear_error(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(TokenError):
        TokenStore(bad)
    run = invoke("token", "list", "--db", bad)
    assert run.returncode == 2 and "not a usable SQLite database" in run.stderr


def test_tokens_are_checked_from_worker_threads_side_by_side(tmp_path):
    """specs/wire.md §Authentication: the server checks tokens in worker
    threads, off the loop that times the engines; one store serves checks
    from several threads at once."""
    with TokenStore(tmp_path / "a.db") as tokens:
        secrets = {name: tokens.add(name) for name in ("alice", "bob", "carol")}
        with ThreadPoolExecutor(max_workers=3) as pool:
            checked = list(pool.map(tokens.verify, [*secrets.values(), "alice.wrong"] * 4))
    assert checked == ["alice", "bob", "carol", None] * 4


def test_a_checked_secret_is_not_derived_again_and_revocation_still_counts(tmp_path):
    """specs/wire.md §Authentication: a secret that checked is remembered
    for its row, so a token holder's hellos cost no derivation each; the
    revocation is read at every check, and a new token for the name is
    another row."""
    with TokenStore(tmp_path / "a.db") as tokens:
        token = tokens.add("alice")
        assert tokens.verify(token) == "alice"
        with sqlite3.connect(tmp_path / "a.db") as db:  # a derivation would now fail loudly
            db.execute("update tokens set iterations = 0 where name = 'alice'")
        assert tokens.verify(token) == "alice"
        with pytest.raises(ValueError):  # (0 iterations: what deriving would raise)
            tokens.verify("alice.another")
        tokens.revoke("alice")
        assert tokens.verify(token) is None
        fresh = tokens.add("alice")
        assert tokens.verify(token) is None and tokens.verify(fresh) == "alice"

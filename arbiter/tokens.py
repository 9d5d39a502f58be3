"""Tokens of remote engines: made, listed, revoked and checked, in the
results database's ``tokens`` table (``specs/storage.md`` §Tokens,
``specs/wire.md`` §Authentication).

A token is ``NAME.SECRET``; the table keeps the name, a random salt and
PBKDF2-HMAC-SHA256 of the secret, never the secret.  The secret is 256
random bits, so the derivation's cost is not what protects it; a cheap one
(:data:`TOKEN_ITERATIONS`) keeps every unauthenticated ``hello`` from being a
CPU lever on the server.  :meth:`TokenStore.verify` compares in constant
time and spends the same derivation on an unknown name.  A secret that
checked is remembered in memory for its row (:data:`CHECKED_KEEP` of them,
as a digest bound to the row's salt and hash: a new token for the name is
another row), so that a token holder's hellos cost a fast hash, not a
derivation each; the ``revoked`` column is read at every check.  Nothing here logs
or prints a token; :meth:`TokenStore.add` returns it once.

The table is the only one this module touches (created when missing, next to
the store's tables, which it leaves alone), through the standard library's
``sqlite3``.  A :class:`TokenStore` may be used from several threads (the
server checks tokens off its event loop): its connection is shared under a
lock, and a check's derivation runs outside it.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import hmac
import re
import secrets
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path

from arbiter.store_schema import foreign_refusal

__all__ = ["NAME_RULE", "TOKEN_ITERATIONS", "TokenError", "TokenStore", "valid_name"]

#: PBKDF2 iterations: a few milliseconds per check (see the module's docstring).
TOKEN_ITERATIONS = 2000
#: Random bytes of a secret (43 characters of URL-safe base64).
SECRET_BYTES = 32
#: Bytes of a salt.
SALT_BYTES = 16
#: A token name: what the wire allows for a name, in characters that need no
#: quoting anywhere and without the ``.`` that separates it from the secret.
NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: :data:`NAME_RE` in words, for the messages that refuse a name
NAME_RULE = "1 to 64 letters, digits, '_' or '-'"
#: How long a command waits for another writer of the database (seconds).
BUSY_TIMEOUT = 30.0
#: Secrets that checked, remembered (digests, the least recent dropped first):
#: a server's tokens' engines at once, with room
CHECKED_KEEP = 1024

_SCHEMA = """
create table if not exists tokens (
    name text primary key,
    salt text not null,
    hash text not null,
    iterations integer not null,
    created text not null,
    revoked text
)"""

#: the salt an unknown name is checked against, so that a refusal takes the
#: same time whether the name exists or not
_DUMMY_SALT = bytes(SALT_BYTES)


class TokenError(Exception):
    """A token command that cannot be done (the name taken, unknown, invalid;
    the file not a database)."""


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _derive(secret: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), salt, iterations)


def valid_name(name: str) -> bool:
    return NAME_RE.fullmatch(name) is not None


class TokenStore:
    """The ``tokens`` table of the database at ``path`` (made if missing);
    safe to use from several threads."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()  # one statement at a time on the shared connection
        self._checked: OrderedDict[bytes, None] = OrderedDict()  # under the lock too
        try:
            self._db = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT,
                                       check_same_thread=False)
            refusal = foreign_refusal(self.path, self._db)  # someone else's file: left as it is
            if refusal is not None:
                self._db.close()
                raise TokenError(refusal)
            with self._db:
                self._db.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise TokenError(f"{self.path}: not a usable SQLite database ({exc})") from None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> TokenStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, name: str) -> str:
        """A new token for ``name`` (the one time it is seen); a revoked
        name's row is replaced, an active one is refused."""
        if not valid_name(name):
            raise TokenError(f"token name {name[:80]!r}: {NAME_RULE}")
        secret = secrets.token_urlsafe(SECRET_BYTES)
        salt = secrets.token_bytes(SALT_BYTES)
        row = (name, salt.hex(), _derive(secret, salt, TOKEN_ITERATIONS).hex(),
               TOKEN_ITERATIONS, _now())
        with self._lock, self._db:
            taken = self._db.execute("select revoked from tokens where name = ?",
                                     (name,)).fetchone()
            if taken is not None and taken[0] is None:
                raise TokenError(f"token {name!r} exists (revoke it first)")
            self._db.execute("insert or replace into tokens (name, salt, hash, iterations, "
                             "created, revoked) values (?, ?, ?, ?, ?, null)", row)
        return f"{name}.{secret}"

    def revoke(self, name: str) -> None:
        with self._lock, self._db:
            done = self._db.execute("update tokens set revoked = ? where name = ? and "
                                    "revoked is null", (_now(), name)).rowcount
        if not done:
            raise TokenError(f"no active token {name[:80]!r}")

    def list(self) -> list[dict[str, str | None]]:
        """Every token's name, creation and revocation time (None: active), by name."""
        with self._lock:
            rows = self._db.execute("select name, created, revoked from tokens "
                                    "order by name").fetchall()
        return [{"name": name, "created": created, "revoked": revoked}
                for name, created, revoked in rows]

    def verify(self, token: str) -> str | None:
        """The name of ``token`` if it is a valid, unrevoked token; else None.
        The derivation (the check's cost) runs outside the lock: checks in
        several threads run side by side."""
        name, _, secret = token.partition(".")
        row = None
        if valid_name(name):
            with self._lock:
                row = self._db.execute("select salt, hash, iterations, revoked from tokens "
                                       "where name = ?", (name,)).fetchone()
        if row is None:
            _derive(secret, _DUMMY_SALT, TOKEN_ITERATIONS)  # the same work as a known name
            return None
        salt, stored, iterations, revoked = row
        seen = hashlib.sha256(f"{salt}.{stored}.{secret}".encode()).digest()
        with self._lock:
            matches = seen in self._checked
            if matches:
                self._checked.move_to_end(seen)
        if not matches:
            matches = hmac.compare_digest(_derive(secret, bytes.fromhex(salt), iterations),
                                          bytes.fromhex(stored))
            if matches:
                with self._lock:
                    self._checked[seen] = None
                    if len(self._checked) > CHECKED_KEEP:
                        self._checked.popitem(last=False)
        return name if matches and revoked is None else None

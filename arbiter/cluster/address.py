"""Where a cluster is and how it is reached safely (``specs/cluster.md``
§Addresses, §Security): pure, no Dask.

``--cluster ADDRESS`` and ``arbiter worker ADDRESS`` take the same addresses:
``local:N`` (a local cluster of N worker processes, started and ended by the
coordinator), or a Dask scheduler address ``tls://host:port`` /
``tcp://host:port`` (``host:port`` alone is ``tcp://``).  A scheduler off the
loopback interface must be reached over TLS with certificates; plain TCP there
is refused unless ``--insecure`` says it is meant.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass

__all__ = ["ClusterAddressError", "TLSFiles", "ClusterTarget", "parse_target", "MAX_LOCAL_WORKERS"]

#: Most worker processes of a ``local:N`` cluster: each is a Python process of
#: its own on this machine, and one per core is already plenty.
MAX_LOCAL_WORKERS = 256

#: Schemes a scheduler address may have.
SCHEMES = ("tcp", "tls")


class ClusterAddressError(ValueError):
    """An address, or a security setting, that cannot be used; says why."""


@dataclass(frozen=True)
class TLSFiles:
    """The certificate authority, this side's certificate and its key (PEM files)."""

    ca: str
    cert: str
    key: str


@dataclass(frozen=True)
class ClusterTarget:
    """A checked ``ADDRESS``: ``local`` workers to start, or a scheduler
    ``address`` (with ``tls`` files when it is ``tls://``)."""

    text: str
    local: int = 0
    address: str | None = None
    tls: TLSFiles | None = None

    def __str__(self) -> str:
        return self.text


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: not known to be loopback without asking DNS
        return False


def _tls_files(ca: str | None, cert: str | None, key: str | None) -> TLSFiles | None:
    given = {"--tls-ca": ca, "--tls-cert": cert, "--tls-key": key}
    if not any(given.values()):
        return None
    missing = [flag for flag, path in given.items() if not path]
    if missing:
        raise ClusterAddressError(f"TLS needs --tls-ca, --tls-cert and --tls-key; {missing[0]} "
                                  "is missing (specs/cluster.md §Security)")
    for flag, path in given.items():
        assert path is not None
        if not os.path.isfile(path) or not os.access(path, os.R_OK):
            raise ClusterAddressError(f"{flag} {path}: no such readable file")
    assert ca is not None and cert is not None and key is not None
    return TLSFiles(ca, cert, key)


def parse_target(text: str, *, tls_ca: str | None = None, tls_cert: str | None = None,
                 tls_key: str | None = None, insecure: bool = False,
                 allow_local: bool = True) -> ClusterTarget:
    """``text`` checked (:class:`ClusterAddressError` says what is wrong):
    ``local:N`` (when ``allow_local``), or a scheduler address whose security
    follows the rules of ``specs/cluster.md`` §Security."""
    text = text.strip()
    if text.startswith("local:"):
        if not allow_local:
            raise ClusterAddressError(f"{text}: a worker joins a scheduler (tls://host:port); "
                                      "local:N is for `arbiter tournament --cluster`")
        number = text.removeprefix("local:")
        if not number.isdigit() or not 1 <= int(number) <= MAX_LOCAL_WORKERS:
            raise ClusterAddressError(f"--cluster {text}: local:N needs a number of worker "
                                      f"processes from 1 to {MAX_LOCAL_WORKERS}")
        return ClusterTarget(text, local=int(number))
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    if scheme not in SCHEMES:
        raise ClusterAddressError(f"{text}: unknown scheme {scheme!r}; give tls://host:port "
                                  "(or tcp:// on this machine, or local:N)")
    host, colon, port = rest.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ClusterAddressError(f"{text}: expected {scheme}://host:port")
    tls = _tls_files(tls_ca, tls_cert, tls_key)
    if scheme == "tls" and tls is None:
        raise ClusterAddressError(f"{text}: tls:// needs certificates: give --tls-ca, --tls-cert "
                                  "and --tls-key (specs/cluster.md §Security says how to make them)")
    if scheme == "tcp" and tls is not None:
        raise ClusterAddressError(f"{text}: certificates were given for a plain tcp:// address; "
                                  f"give tls://{rest}")
    if scheme == "tcp" and not _is_loopback(host) and not insecure:
        raise ClusterAddressError(f"{text}: a scheduler off this machine must be reached over "
                                  f"tls:// with certificates (tls://{rest}); add --insecure only "
                                  "on a network you trust")
    return ClusterTarget(text, address=f"{scheme}://{rest}", tls=tls)

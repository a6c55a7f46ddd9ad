"""Validate a user-supplied clone URL before git ever sees it.

git accepts far more than URLs: ``ext::<command>`` runs programs, ``--upload-pack=...``
is an option, scp-like ``host:path`` and bare paths read the server's disk, and any host
may resolve to the metadata service or a database on the private network. We accept only
``scheme://host[:port]/path`` with an operator-allowed scheme and a host whose every address
is public, and hand back the addresses so the fetch can be pinned to them (``GitAccess.resolve``).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from services.indexer.git.errors import (
    FORBIDDEN_HOST,
    FORBIDDEN_PORT,
    FORBIDDEN_SCHEME,
    UNRESOLVABLE_HOST,
    VALIDATION_FAILED,
    GitInputError,
)

Resolver = Callable[[str, int], list[str]]

ALLOWABLE_SCHEMES = frozenset({"https", "http", "ssh", "git"})
_DEFAULT_PORTS = {"https": 443, "http": 80, "ssh": 22, "git": 9418}
_MAX_URL = 2048
_HOST_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_SSH_USER = re.compile(r"^[A-Za-z0-9._][A-Za-z0-9._-]{0,63}$")
_TRANSPORT_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")
_SCHEME_PREFIX = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_PATH_CHARS = re.compile(r"^[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$")


@dataclass(frozen=True)
class CloneUrl:
    """A URL that passed validation; only this type is accepted by ``ensure_mirror``."""

    url: str
    scheme: str
    host: str
    port: int
    path: str
    addresses: tuple[str, ...]  # public addresses the host resolved to (empty when not checked)

    def curl_resolve_pins(self) -> tuple[str, ...]:
        """``http.curloptResolve`` entries so git connects to the addresses we vetted."""
        if self.scheme not in ("http", "https") or not self.addresses or self.addresses == (self.host,):
            return ()
        # curl wants IPv6 addresses bracketed in resolve pins.
        addresses = ",".join(f"[{a}]" if ":" in a else a for a in self.addresses)
        return (f"{self.host}:{self.port}:{addresses}",)

    def scope(self) -> str:
        """The URL prefix an auth header should be limited to."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port == _DEFAULT_PORTS[self.scheme] else f":{self.port}"
        return f"{self.scheme}://{host}{port}/"


def default_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({str(info[4][0]) for info in infos})


def _fail(code: str, message: str) -> GitInputError:
    return GitInputError(code, message)


def is_public_address(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        # ::ffff:10.0.0.1 and 6to4/Teredo embeddings reach IPv4 hosts; judge the embedded one.
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is not None and not is_public_address(str(embedded)):
            return False
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified)


def parse_origins(spec: str | Iterable[str]) -> frozenset[tuple[str, int | None]]:
    """``host[:port]`` entries (comma-separated) as (host, port); no port = the scheme's default."""
    items = spec.split(",") if isinstance(spec, str) else spec
    origins: set[tuple[str, int | None]] = set()
    for item in (i.strip().lower() for i in items):
        if not item:
            continue
        if item.startswith("["):  # [v6]:port
            host, _, rest = item[1:].partition("]")
            port = rest.removeprefix(":")
        elif item.count(":") == 1:
            host, _, port = item.partition(":")
        else:  # a name, or a bare IPv6 address
            host, port = item, ""
        if port and not port.isdigit():
            raise ValueError(f"allowed clone origin {item!r}: port must be a number")
        origins.add((host.rstrip("."), int(port) if port else None))
    return frozenset(origins)


def validate_clone_url(
    url: str,
    *,
    allowed_schemes: Iterable[str] = ("https",),
    allow_private_hosts: bool = False,
    allowed_origins: Iterable[tuple[str, int | None]] = (),
    any_port: bool = False,
    resolver: Resolver | None = None,
) -> CloneUrl:
    """Return the parsed URL or raise ``GitInputError``.

    ``allowed_schemes`` is operator configuration (a subset of https/http/ssh/git; never
    file). A URL must use its scheme's default port (443 for https) so the clone cannot probe
    other services; ``allowed_origins`` (operator configuration, ``parse_origins``) names the
    hosts that may use another port, or resolve to private addresses. ``allow_private_hosts``
    skips the address check for every host (tests and intranet installs); ``any_port`` lifts
    the port rule for URLs the operator's own configuration produced (a code host's clone URL).
    """
    schemes = {s.lower() for s in allowed_schemes}
    if not schemes <= ALLOWABLE_SCHEMES:
        raise ValueError(f"schemes not allowable for clone URLs: {sorted(schemes - ALLOWABLE_SCHEMES)}")
    if not isinstance(url, str) or not url:
        raise _fail(VALIDATION_FAILED, "clone URL is empty")
    if len(url) > _MAX_URL:
        raise _fail(VALIDATION_FAILED, "clone URL is too long")
    if url.startswith("-"):
        raise _fail(VALIDATION_FAILED, "clone URL must not start with '-'")
    if any(ord(c) < 0x21 or ord(c) == 0x7F or c == "\\" for c in url):
        raise _fail(VALIDATION_FAILED, "clone URL contains whitespace, control characters or backslashes")
    if _TRANSPORT_PREFIX.match(url):
        raise _fail(FORBIDDEN_SCHEME, "remote-helper URLs (<transport>::<address>) are not allowed")
    scheme_match = _SCHEME_PREFIX.match(url)
    if not scheme_match or not url[scheme_match.end() :].startswith("//"):
        # Bare paths and scp-like "host:path" are both local-or-ssh forms git guesses at.
        raise _fail(VALIDATION_FAILED, "clone URL must have the form scheme://host/path")
    scheme = scheme_match.group(1).lower()
    if scheme not in schemes:
        raise _fail(FORBIDDEN_SCHEME, f"scheme {scheme!r} is not allowed (allowed: {sorted(schemes)})")

    try:
        parts = urlsplit(url)
        port = parts.port or _DEFAULT_PORTS[scheme]
    except ValueError as exc:
        raise _fail(VALIDATION_FAILED, f"malformed clone URL: {exc}") from None
    if parts.query or parts.fragment or "#" in url or "?" in url:
        raise _fail(VALIDATION_FAILED, "clone URL must not have a query or fragment")
    if parts.password is not None or (parts.username is not None and scheme != "ssh"):
        raise _fail(VALIDATION_FAILED, "credentials in the clone URL are not allowed; pass a token")
    if parts.username is not None and not _SSH_USER.fullmatch(parts.username):
        raise _fail(VALIDATION_FAILED, "invalid ssh user name")
    host = _validate_host(parts.hostname or "")
    path = parts.path
    if not path.strip("/") or not _PATH_CHARS.fullmatch(path) or ".." in path.split("/"):
        raise _fail(VALIDATION_FAILED, "clone URL needs a repository path without '..' segments")

    origins = frozenset(allowed_origins)
    listed = (host, port) in origins or (port == _DEFAULT_PORTS[scheme] and (host, None) in origins)
    if not (listed or any_port or port == _DEFAULT_PORTS[scheme]):
        raise _fail(
            FORBIDDEN_PORT,
            f"port {port} is not allowed for {scheme} clone URLs (only {_DEFAULT_PORTS[scheme]}, "
            "unless the operator allows this host and port)",
        )
    addresses = _check_addresses(host, port, allow_private_hosts or listed, resolver or default_resolver)
    return CloneUrl(url=url, scheme=scheme, host=host, port=port, path=path, addresses=addresses)


def _validate_host(host: str) -> str:
    host = host.lower().rstrip(".")
    if not host:
        raise _fail(VALIDATION_FAILED, "clone URL has no host")
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    labels = host.split(".")
    if len(host) > 253 or not all(_HOST_LABEL.fullmatch(label) for label in labels):
        raise _fail(VALIDATION_FAILED, f"invalid host name {host!r}")
    if labels[-1].isdigit():
        # "127.1" or "0x7f.1" style shorthands that resolvers turn into loopback.
        raise _fail(VALIDATION_FAILED, f"ambiguous numeric host {host!r}")
    return host


def _check_addresses(host: str, port: int, allow_private: bool, resolver: Resolver) -> tuple[str, ...]:
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [str(literal)]
    else:
        try:
            addresses = resolver(host, port)
        except (OSError, UnicodeError) as exc:
            raise _fail(UNRESOLVABLE_HOST, f"cannot resolve {host!r}: {exc}") from None
        if not addresses:
            raise _fail(UNRESOLVABLE_HOST, f"{host!r} has no addresses")
    if not allow_private:
        for address in addresses:
            try:
                public = is_public_address(address)
            except ValueError:
                raise _fail(UNRESOLVABLE_HOST, f"{host!r} resolved to an invalid address") from None
            if not public:
                raise _fail(FORBIDDEN_HOST, f"{host!r} resolves to a non-public address ({address})")
    return tuple(addresses)

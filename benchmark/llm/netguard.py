"""The network wall for model endpoints a researcher supplied (SSRF guard).

A researcher-supplied base URL may only reach public internet addresses, plus the CIDR ranges an
admin opened. The check runs twice:

- when the endpoint is saved (`url_check`), so the form says what is wrong;
- at every TCP connect (`GuardedBackend`, used by benchmark.llm.transport): the host is resolved
  once, every address is checked, and the socket connects to the checked address itself. A DNS
  name that answers a public address to the form and 127.0.0.1 to the worker (DNS rebinding) is
  refused at the second answer; there is no window between check and connect.

Every spelling of an address ends up in `getaddrinfo`, which turns decimal (2130706433), hex
(0x7f000001), octal (0177.0.0.1) and short (127.1) IPv4 forms into the dotted address; IPv6
addresses that embed an IPv4 one (IPv4-mapped ::ffff:127.0.0.1, IPv4-compatible, 6to4, Teredo,
NAT64) are checked for the embedded address too.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[..., list[tuple[Any, ...]]]

_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT (RFC 6598)
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_V4_COMPATIBLE = ipaddress.ip_network("::/96")

_resolver_lock = threading.Lock()
_resolver: Resolver = socket.getaddrinfo


class BlockedAddress(Exception):
    """The host is, or resolves to, an address researcher-supplied endpoints may not reach."""


def parse_networks(text: str | Iterable[str]) -> list[Network]:
    """CIDR ranges, one per line or comma separated; raises ValueError naming the bad entry."""
    entries = text.replace(",", "\n").splitlines() if isinstance(text, str) else list(text)
    networks = []
    for number, entry in enumerate(entries, start=1):
        entry = entry.strip()
        if not entry or entry.startswith("#"):
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError as exc:
            raise ValueError(f"entry {number} ({entry!r}) is not an IP range: {exc}") from None
    return networks


def _candidates(ip: IPAddress) -> list[IPAddress]:
    """The addresses to check for `ip`: the IPv4 address an IPv6 spelling stands for (IPv4-mapped,
    IPv4-compatible, NAT64) instead of the spelling; for 6to4 and Teredo both the tunnel endpoint(s)
    and the address itself."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return [ip]
    low32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if any(ip in net for net in _NAT64) or (ip in _V4_COMPATIBLE and int(ip) > 1):
        return [low32]
    found: list[IPAddress] = []
    if ip.sixtofour is not None:
        found.append(ip.sixtofour)
    if ip.teredo is not None:
        found.extend(ip.teredo)
    return [*found, ip]


def _category(ip: IPAddress) -> str | None:
    """Why `ip` is not a public address, or None when it is."""
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED:
        return "shared (carrier-grade NAT)"
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local:
        return "site-local"
    if ip.is_private:
        return "private"
    if ip.is_reserved:
        return "reserved"
    if not ip.is_global:
        return "non-public"
    return None


def address_problem(address: str, allowed: Sequence[Network] = ()) -> str | None:
    """None when `address` (an IP literal) may be reached; else the reason, e.g. 'a loopback address'."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 zone (fe80::1%eth0) names no new range
    for candidate in _candidates(ip):
        category = _category(candidate)
        if category is None:
            continue
        if any(candidate.version == net.version and candidate in net for net in allowed):
            continue
        shown = f"{candidate} (inside {ip})" if candidate != ip else str(ip)
        return f"{shown} is a {category} address"
    return None


def resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to, in the resolver's order, without duplicates."""
    try:
        infos = _resolver(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise BlockedAddress(f"{host} does not resolve ({exc})") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def checked_addresses(host: str, port: int, allowed: Sequence[Network] = ()) -> list[str]:
    """The addresses of `host`, if every one of them may be reached; raises BlockedAddress otherwise.

    A name with one public and one private address is refused as a whole: which one a client
    picks is not ours to predict.
    """
    addresses = resolve(host, port)
    if not addresses:
        raise BlockedAddress(f"{host} does not resolve to any address")
    for address in addresses:
        problem = address_problem(address, allowed)
        if problem:
            via = "" if _is_literal(host, address) else f"{host} resolves to "
            raise BlockedAddress(
                f"{via}{problem}; endpoints supplied by researchers may reach public addresses only"
                " (an admin can allow a range)"
            )
    return addresses


def _is_literal(host: str, address: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")) == ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False


def url_parts(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL; raises ValueError with the reason."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError("the URL must start with http:// or https://")
    if parts.username is not None or parts.password is not None:
        raise ValueError("the URL must not carry a user name or password; store the key in the key field")
    host = parts.hostname or ""
    if not host:
        raise ValueError("the URL has no host")
    return parts.scheme, host, port or (443 if parts.scheme == "https" else 80)


def url_check(url: str, allowed: Sequence[Network] = ()) -> None:
    """Raises BlockedAddress (or ValueError for a malformed URL) unless `url` may be reached now."""
    _, host, port = url_parts(url)
    checked_addresses(host, port, allowed)


@contextmanager
def override_resolver(resolver: Resolver) -> Iterator[None]:
    """Answer name lookups with `resolver` (tests play a rebinding DNS server with it)."""
    global _resolver
    with _resolver_lock:
        previous, _resolver = _resolver, resolver
    try:
        yield
    finally:
        with _resolver_lock:
            _resolver = previous


class GuardedBackend:
    """An httpcore2 network backend that connects only to checked addresses (see the module doc)."""

    def __init__(self, allowed: Sequence[Network] = ()) -> None:
        from httpcore2._backends.sync import SyncBackend

        self.allowed = list(allowed)
        self._backend = SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> Any:
        import httpcore2

        try:
            addresses = checked_addresses(host, port, self.allowed)
        except BlockedAddress as exc:
            raise httpcore2.ConnectError(f"refused to connect: {exc}") from None
        last: Exception | None = None
        for address in addresses:
            try:
                return self._backend.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                last = exc
        assert last is not None
        raise last

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Any:
        import httpcore2

        raise httpcore2.ConnectError("researcher-supplied endpoints may not use unix sockets")

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)

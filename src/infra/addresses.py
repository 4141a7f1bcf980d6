"""What a host names: an IP literal in any spelling, and whether it is reachable from the
public internet. Shared by every check of a URL a provider or our dispatcher will request."""

from __future__ import annotations

import ipaddress
import socket

LOCAL_NAME_SUFFIXES = (".localhost", ".local", ".internal")


def is_local_name(host: str) -> bool:
    host = host.lower().rstrip(".")
    return host == "localhost" or host.endswith(LOCAL_NAME_SUFFIXES)


def literal_address(host: str) -> str | None:
    """The IP a host names literally, legacy IPv4 spellings too (`127.1`, `2130706433`), and
    with the root's trailing dot (`10.0.0.1.`) or an ideographic one (`10.0.0.1。`), which
    resolvers read as the same address."""
    if not host.isascii() and ":" not in host:
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    if host.endswith(".") and ":" not in host:
        host = host[:-1]
    try:
        return str(ipaddress.ip_address(host.split("%", 1)[0]))
    except ValueError:
        pass
    try:
        return str(ipaddress.IPv4Address(socket.inet_aton(host)))
    except (OSError, UnicodeError, ValueError):
        return None


_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# RFC 8215: for local use only, never a public address whatever it carries.
_LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def is_public_address(address: str) -> bool:
    """Whether the address, and any IPv4 address an IPv6 one carries (mapped `::ffff:`,
    compatible `::a.b.c.d`, NAT64 `64:ff9b::`, 6to4 `2002::`), is reachable from the public
    internet: a gateway or stack that translates it would otherwise reach 127.0.0.1."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _LOCAL_NAT64:
            return False
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and (ip in _NAT64 or ip in _IPV4_COMPATIBLE):
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None and not is_public_address(str(embedded)):
            return False
    return ip.is_global and not ip.is_multicast

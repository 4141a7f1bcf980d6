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
    """The IP a host names literally, legacy IPv4 spellings too (`127.1`, `2130706433`)."""
    try:
        return str(ipaddress.ip_address(host.split("%", 1)[0]))
    except ValueError:
        pass
    try:
        return str(ipaddress.IPv4Address(socket.inet_aton(host)))
    except (OSError, UnicodeError, ValueError):
        return None


def is_public_address(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast

"""Where webhooks may go: https to public addresses only, unless HTTP webhooks are allowed.

Checked when a URL is registered and again before every connection, because a name that
resolved to a public address at registration may point at an internal one later.
"""

from __future__ import annotations

import re
import socket
from urllib.parse import urlsplit

from domain.errors import invalid
from infra.addresses import is_local_name, is_public_address, literal_address

MAX_URL_LENGTH = 2048
# A forwarding target as the body must write it: http(s), a host, nothing blank after it.
FORWARDING_URL = re.compile(r"^https?://[^\s/?#]+[^\s]*$")
# Letters, digits, hyphens and underscores between dots; non-ASCII names are checked in their
# IDNA form. IP literals are checked apart (`literal_address`).
_BLANK_OR_CONTROL = re.compile(r"[\s\x00-\x1f\x7f]")
_HOST_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")


def check_url_shape(url: str, allow_http: bool) -> str:
    """The host of a well-formed webhook URL; raises invalid_request (field `url`) otherwise."""
    if len(url) > MAX_URL_LENGTH:
        raise invalid("The webhook URL is at most 2048 characters.", "url")
    if _BLANK_OR_CONTROL.search(url):
        # urlsplit drops tabs and line breaks silently; the request line would not hold them.
        raise invalid("The webhook URL must not contain spaces or control characters.", "url")
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError on a malformed port
    except ValueError as exc:
        raise invalid("The webhook URL is not a valid URL.", "url") from exc
    if port == 0:
        raise invalid("The webhook URL's port must be 1 to 65535.", "url")
    if parts.fragment or url.endswith("#"):
        raise invalid("The webhook URL must not carry a #fragment: it is never sent.", "url")
    allowed = ("https", "http") if allow_http else ("https",)
    if parts.scheme not in allowed or not parts.hostname:
        raise invalid("The webhook URL must be an absolute https:// URL.", "url")
    if parts.username or parts.password:
        raise invalid("The webhook URL must not carry credentials.", "url")
    if not _valid_host(parts.hostname):
        raise invalid("The webhook URL's host is not a valid host name or address.", "url")
    return parts.hostname


def _valid_host(host: str) -> bool:
    if literal_address(host) is not None:
        return True
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return False
    labels = ascii_host.rstrip(".").split(".")
    return all(_HOST_LABEL.fullmatch(label) for label in labels)


def check_forwarding_target(url: str, field: str, allow_private: bool) -> None:
    """A forwarding URL may be plain http, but must not name a private, loopback, link-local or
    metadata host (the provider requests it); by name, or by address when it is one."""
    if len(url) > MAX_URL_LENGTH:
        raise invalid(f"{field} is at most {MAX_URL_LENGTH} characters.", field)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError as exc:
        # Whatever the setting: the suites' fetchers and the DNS step parse it too.
        raise invalid(f"{field} is not a valid URL.", field) from exc
    host = parts.hostname or ""
    if not _valid_host(host):
        raise invalid(f"{field}'s host is not a valid host name or address.", field)
    if allow_private:
        return
    address = literal_address(host)
    if is_local_name(host) or (address is not None and not is_public_address(address)):
        raise invalid(f"{field} must not point at a private, loopback or link-local address.", field)


def resolve(host: str) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError):
        return []
    return sorted({str(info[4][0]) for info in infos})


def forbidden_addresses(host: str) -> list[str]:
    """The non-public addresses the host is (in any spelling) or resolves to."""
    address = literal_address(host)
    if address is not None:
        return [] if is_public_address(address) else [address]
    return [found for found in resolve(host) if not is_public_address(found)]


def check_registration(url: str, allow_http: bool) -> None:
    host = check_url_shape(url, allow_http)
    if allow_http:
        return
    if is_local_name(host):
        raise invalid("The webhook URL must point at a public address.", "url")
    if forbidden_addresses(host):
        raise invalid(
            "The webhook URL must not point at a private, loopback or link-local address.", "url"
        )

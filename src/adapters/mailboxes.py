"""The `suite_a` / `suite_b` mailbox suites, simulated deterministically (decisions.md section 5).

Like test card numbers, some inputs reach error paths on purpose:

| input | outcome |
| --- | --- |
| `profile_picture_url` not `https`, or its host loopback, private, link-local, reserved, `localhost`, single-label or under `.local`, `.internal`, `.lan`, `.localhost` | the order goes `action_required` (pending action of kind `profile_picture_url`) |
| a domain whose first label starts with `mailfail` | the suite refuses the domain: the order goes `failed` |

Everything else succeeds: inboxes are `first.last@domain` for each persona, DNS records are the
suite's MX and SPF plus DMARC and a DKIM record holding an RSA-2048 public key (`adapters/dkim.py`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from typing import Any
from urllib.parse import urlsplit

from adapters.dkim import dkim_record_name, dkim_record_value
from infra.addresses import is_local_name, is_public_address, literal_address

SUITES = ("suite_a", "suite_b")
DEFAULT_PERSONAS: tuple[tuple[str, str], ...] = (
    ("Ava", "Martin"),
    ("Liam", "Walker"),
    ("Mia", "Chen"),
    ("Noah", "Patel"),
    ("Emma", "Garcia"),
    ("Lucas", "Nguyen"),
    ("Zoe", "Kim"),
    ("Ethan", "Brooks"),
    ("Ivy", "Turner"),
    ("Owen", "Reyes"),
)
_MX = {
    "suite_a": [("mx1.suite-a.example", 1), ("mx2.suite-a.example", 5)],
    "suite_b": [("mail.protection.suite-b.example", 0)],
}
_SPF = {"suite_a": "include:_spf.suite-a.example", "suite_b": "include:spf.suite-b.example"}
# Beyond `is_local_name`'s: names no public resolver answers, which no suite can fetch from.
_PRIVATE_SUFFIXES = (".lan", ".home", ".corp", ".invalid")
_HOST_LABEL = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")


def profile_picture_problem(url: str | None) -> str | None:
    """Why the suites cannot fetch this picture, or None when it is fine (or absent)."""
    if url is None:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unclosed IPv6 bracket: the suites cannot fetch it either
        return "profile_picture_url is not a valid URL."
    if parts.scheme != "https":
        return "profile_picture_url must be an https URL."
    host = (parts.hostname or "").lower().rstrip(".")
    if not host:
        return "profile_picture_url has no host."
    try:
        parts.port  # noqa: B018 - read for its check: a port beyond 65535 raises
    except ValueError:
        return "profile_picture_url has a port no server listens on."
    # Any spelling of an address counts (`127.1`, `0x7f.0.0.1`, `10.1`): the suites' fetchers
    # resolve them as the C library does.
    address = literal_address(host)
    if address is not None:
        public = is_public_address(address)
    elif not _is_host_name(host):
        return "profile_picture_url's host is not a valid host name."
    else:
        public = "." in host and not is_local_name(host) and not host.endswith(_PRIVATE_SUFFIXES)
    return None if public else "profile_picture_url's host is not publicly reachable."


def _is_host_name(host: str) -> bool:
    """A name a resolver can look up (RFC 1123 labels, IDN in its ASCII form): no empty
    label, none over 63 characters or edged with a hyphen, 253 characters at most."""
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return False
    labels = ascii_host.split(".")
    return len(ascii_host) <= 253 and all(_HOST_LABEL.fullmatch(label) for label in labels)


def refuses_domain(domain: str) -> bool:
    return domain.split(".", 1)[0].startswith("mailfail")


def _slug(value: str) -> str:
    ascii_only = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "", ascii_only.lower()) or "user"


def personas_or_default(personas: list[dict[str, str]]) -> list[dict[str, str]]:
    if personas:
        return personas
    return [{"first_name": f, "last_name": last} for f, last in DEFAULT_PERSONAS]


def inboxes_for(
    domain: str,
    suite: str,
    count: int,
    personas: list[dict[str, str]],
    taken: Collection[str] = (),
) -> list[dict[str, Any]]:
    """`count` inboxes on the domain, personas in turn; a repeated persona, or an address
    in `taken` (mailboxes other orders hold on the domain), gets a number."""
    chosen = personas_or_default(personas)
    inboxes: list[dict[str, Any]] = []
    seen = {address.partition("@")[0] for address in taken}
    for index in range(count):
        persona = chosen[index % len(chosen)]
        local = f"{_slug(persona['first_name'])}.{_slug(persona['last_name'])}"
        candidate, n = local, 1
        while candidate in seen:
            n += 1
            candidate = f"{local}{n}"
        seen.add(candidate)
        inboxes.append(
            {
                "address": f"{candidate}@{domain}",
                "suite": suite,
                "persona": {"first_name": persona["first_name"], "last_name": persona["last_name"]},
                "status": "active",
            }
        )
    return inboxes


def dns_records(domain: str, suite: str | None) -> list[dict[str, Any]]:
    """The records a domain needs to send through its suite (a bare registration: DMARC only)."""
    records: list[dict[str, Any]] = []
    if suite in _MX:
        records += [
            {"type": "MX", "name": domain, "value": host, "priority": prio, "ttl": 3600}
            for host, prio in _MX[suite]
        ]
        records.append(
            {"type": "TXT", "name": domain, "value": f"v=spf1 {_SPF[suite]} ~all", "ttl": 3600}
        )
        records.append(
            {
                "type": "TXT",
                "name": dkim_record_name(suite.replace("_", ""), domain),
                "value": dkim_record_value(domain),
                "ttl": 3600,
            }
        )
    records.append(
        {
            "type": "TXT",
            "name": f"_dmarc.{domain}",
            "value": f"v=DMARC1; p=none; rua=mailto:dmarc@{domain}",
            "ttl": 3600,
        }
    )
    return records

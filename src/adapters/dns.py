"""The DNS provider, simulated deterministically (decisions.md section 5).

Imported domains are spread over DNS accounts; each account has one pair of nameservers the
customer sets at their registrar. Whether the customer has done so is decided by the name:

| input | outcome |
| --- | --- |
| a first label starting with `nsnever` | nameservers never pointed: stays `action_required` |
| a first label starting with `nsslow` | pointed `NS_SLOW_SECONDS` after the import started |
| a first label starting with `importfail` | the DNS provider refuses the zone: the domain fails |
| a first label starting with `dnsbusy`, or more than `SYNC_ACCOUNT_CAPACITY` names | a live synchronous import finds no DNS account free (429 `dns_account_capacity`) |
| a forwarding target whose host ends in `.invalid` (or has no host) | it does not resolve: forwarding fails |

Everything else counts as pointed at once. Records are real: SPF, DMARC, MX and a DKIM record
holding an RSA-2048 public key of the deployment's set (`adapters/dkim.py`).
"""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import urlsplit

from adapters.dkim import dkim_record_name, dkim_record_value

DNS_ACCOUNTS = 4
SYNC_ACCOUNT_CAPACITY = 10
NS_SLOW_SECONDS = 60.0
DKIM_SIGNER = "svc"  # the prefix of the DNS host's selectors
_TTL = 3600


def _label(name: str) -> str:
    return name.split(".", 1)[0]


def account_of(name: str) -> int:
    return int(hashlib.sha256(name.encode()).hexdigest(), 16) % DNS_ACCOUNTS + 1


def nameservers(account: int) -> tuple[str, str]:
    return (f"ns1.dns{account}.partner-dns.example", f"ns2.dns{account}.partner-dns.example")


def nameserver_groups(names: list[str]) -> list[dict[str, Any]]:
    """The nameserver pairs to set, each with the domains that go to it (spec 2.6)."""
    groups: dict[int, list[str]] = {}
    for name in names:
        groups.setdefault(account_of(name), []).append(name)
    result = []
    for account in sorted(groups):
        one, two = nameservers(account)
        result.append({"nameserver_one": one, "nameserver_two": two, "domains": groups[account]})
    return result


def sync_capacity_free(names: list[str]) -> bool:
    if len(names) > SYNC_ACCOUNT_CAPACITY:
        return False
    return not any(_label(n).startswith("dnsbusy") for n in names)


def zone_refused(name: str) -> bool:
    return _label(name).startswith("importfail")


def nameservers_pointed(name: str, started_at: float, now: float) -> bool:
    label = _label(name)
    if label.startswith("nsnever"):
        return False
    if label.startswith("nsslow"):
        return now - started_at >= NS_SLOW_SECONDS
    return True


# Why a forwarding change is refused when its target does not resolve.
FORWARDING_UNRESOLVABLE = "forwarding_target_unresolvable"


def forwarding_resolves(url: str) -> bool:
    try:
        host = (urlsplit(url).hostname or "").rstrip(".").lower()
    except ValueError:  # a URL no resolver could read (stored before bodies were checked)
        return False
    return bool(host) and not host.endswith(".invalid") and host != "invalid"


def mail_records(name: str) -> list[dict[str, Any]]:
    """The records every domain we manage carries: MX, SPF, DKIM (RSA-2048) and DMARC."""
    return [
        {
            "type": "MX",
            "name": name,
            "value": "mx1.mail.partner-dns.example",
            "priority": 10,
            "ttl": _TTL,
        },
        {
            "type": "MX",
            "name": name,
            "value": "mx2.mail.partner-dns.example",
            "priority": 20,
            "ttl": _TTL,
        },
        {
            "type": "TXT",
            "name": name,
            "value": "v=spf1 include:_spf.partner-dns.example ~all",
            "ttl": _TTL,
        },
        {
            "type": "TXT",
            "name": dkim_record_name(DKIM_SIGNER, name),
            "value": dkim_record_value(name),
            "ttl": _TTL,
        },
        {
            "type": "TXT",
            "name": f"_dmarc.{name}",
            "value": f"v=DMARC1; p=quarantine; rua=mailto:dmarc@{name}",
            "ttl": _TTL,
        },
    ]

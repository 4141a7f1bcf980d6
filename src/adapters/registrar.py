"""The registrar, simulated deterministically (decisions.md section 5), and its TLD catalog.

| input | outcome |
| --- | --- |
| a first label containing `taken` | unavailable, `reason: "registered"` |
| a first label starting with `premium` | premium: `available: false`, `reason: "premium"` |
| a syntactically invalid name, or a TLD outside the catalog | `available: false`, `reason: "invalid"` |

Everything else is free to register at its TLD's price. Prices are in US cents; a premium name is
priced at `PREMIUM_PRICE_FACTOR` times its TLD's prices (what a registry would ask, though we do
not sell it), so an availability row never shows a premium name at the standard price.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import idna

CURRENCY = "usd"


@dataclass(frozen=True)
class Tld:
    name: str  # without the dot
    price_cents: int
    renewal_price_cents: int


CATALOG: dict[str, Tld] = {
    t.name: t
    for t in (
        Tld("com", 1299, 1599),
        Tld("net", 1399, 1699),
        Tld("org", 1199, 1499),
        Tld("io", 3999, 4999),
        Tld("co", 2599, 2999),
        Tld("ai", 7999, 8999),
    )
}

_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
DOMAIN_NAME = re.compile(rf"^(?=.{{4,253}}$)(?:{_LABEL}\.)+[a-z]{{2,63}}$")
REGISTERED, PREMIUM, INVALID = "registered", "premium", "invalid"
PREMIUM_PRICE_FACTOR = 50


def normalize(name: str) -> str:
    """The name as registries know it: without the root's trailing dot (one only: `a.com..`
    stays invalid) and in its ASCII form under IDNA 2008 with the UTS 46 mapping, so
    `Bücher.COM` and `xn--bcher-kva.com` are one name and `ß.com` is `xn--zca.com`. A name with
    no such form comes back as sent (lower case), and `is_valid_name` refuses it."""
    name = name.strip()
    if name.endswith("."):
        name = name[:-1]
    return registry_form(name) or name.lower()


@lru_cache(maxsize=8192)
def registry_form(name: str) -> str | None:
    """The A-label form registries store (IDNA 2008, UTS 46 non-transitional: `ß` stays `ß`),
    or None when they would refuse the name: symbols such as emoji, a label that starts with a
    combining mark, an `xn--` label that does not decode, hyphens in the 3rd and 4th place."""
    lowered = name.lower()
    if lowered.isascii() and "--" not in lowered and DOMAIN_NAME.match(lowered):
        return lowered  # letters, digits and single hyphens: IDNA has nothing to change or refuse
    try:
        return idna.encode(name, uts46=True, transitional=False).decode("ascii")
    except (idna.IDNAError, UnicodeError, ValueError):
        return None


def tld_of(name: str) -> Tld | None:
    return CATALOG.get(name.rsplit(".", 1)[-1])


def is_valid_name(name: str) -> bool:
    """A (normalized) name a registry would accept: host-name syntax with an alphabetic TLD,
    and already in registry form, which an `xn--` label that does not decode is not."""
    return bool(DOMAIN_NAME.match(name)) and registry_form(name) == name


def registry_refusal(name: str) -> str | None:
    """Why the registry will not sell this (normalized) name, or None when it is free."""
    if not is_valid_name(name) or tld_of(name) is None:
        return INVALID
    label = name.split(".", 1)[0]
    if label.startswith("premium"):
        return PREMIUM
    if "taken" in label:
        return REGISTERED
    return None


def is_registrable(name: str) -> bool:
    """Whether a registry could sell the name: every catalog TLD is one label, and a registry
    sells the label right under it (`a.b.com` is a name inside b.com). Imported names may be
    sub-domains; names to buy may not."""
    return name.count(".") == 1


def prices(name: str) -> tuple[int, int]:
    """Registration and renewal price of a name; names outside the catalog cost 0."""
    tld = tld_of(name)
    if tld is None:
        return 0, 0
    factor = PREMIUM_PRICE_FACTOR if registry_refusal(name) == PREMIUM else 1
    return tld.price_cents * factor, tld.renewal_price_cents * factor

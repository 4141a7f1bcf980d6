"""Domain name generation (`POST /domains/generate`).

Candidates are `prefix + keyword` and `keyword + suffix` (a prefix goes before the keyword, a
suffix after it; spec 4.2) on each requested TLD (`.com` when `tlds` is omitted), examined in
that order. A list the body leaves out counts as empty once it sends the other one, so the
bare keyword comes only when neither list sent has an entry. When the body sends
neither `prefixes` nor `suffixes`, the service's own lists are used (prefixes get, try, use,
my, go, ...; suffixes hq, app, mail, team, labs, ...), so keywords alone still give up to the
default 75 names. No name may begin or end with a hyphen, so neither may a keyword, a prefix
begin nor a suffix end with one, and every name's label fits in 63 characters: else 400 on the
part (`keywords[0]`, `prefixes[2]`). A candidate is kept when
the registrar would sell it and no suite uses it, so it is available for both suites. At most
300 candidates are examined, within 2 seconds; stopping for either
reason before `limit` names were found, or before every candidate was examined, answers
`partial: true`. No billing effect.
"""

from __future__ import annotations

import re
import time
from itertools import zip_longest
from typing import TYPE_CHECKING

from adapters import registrar
from domain.errors import invalid
from projections.domain_lookups import owners_by_name, usage_by_name
from services.domains.commands import MAX_AFFIXES, MAX_KEYWORDS, MAX_LIMIT, GenerateDomains
from views.domains import GeneratedOut, Tld, TldGroup

if TYPE_CHECKING:
    from runtime.container import Container
    from services.accounts.keys import Principal

DEFAULT_LIMIT = 75
MAX_CANDIDATES = 300
TIME_BUDGET_SECONDS = 2.0
_PART = re.compile(r"^[a-z0-9-]{1,40}$")
# Common outreach-domain affixes: enough that one keyword alone fills the default limit.
DEFAULT_PREFIXES = [
    "get", "try", "use", "my", "go", "hello", "hey", "join", "meet", "with", "the", "team",
    "mail", "reach", "best", "top", "true", "real", "smart", "pro", "now", "hi", "ask",
    "letsgo", "weare", "inbox", "contact", "connect", "discover", "choose", "visit", "find",
    "start", "grow", "on", "by", "via", "all", "one", "new",
]
DEFAULT_SUFFIXES = [
    "hq", "app", "mail", "team", "labs", "group", "online", "now", "inc", "global", "pro",
    "hub", "co", "io", "works", "studio", "digital", "agency", "media", "tech", "solutions",
    "partners", "connect", "direct", "reach", "send", "go", "base", "center", "central",
    "zone", "point", "link", "line", "desk", "office", "corp", "network", "systems", "plus",
]


MAX_LABEL = 63  # a DNS label's length (RFC 1035)
# Which end of a part begins or ends the labels it makes: a label never does with a hyphen.
_OPEN_ENDS = {"keywords": "either end", "prefixes": "its start", "suffixes": "its end"}


def _parts(values: list[str], field: str, most: int, least: int = 0) -> list[str]:
    if not least <= len(values) <= most:
        raise invalid(f"{field} takes {least} to {most} items.", field)
    cleaned: list[str] = []
    for index, value in enumerate(values):
        part = value.strip().lower()
        if not _PART.match(part):
            raise invalid("Use letters, digits and hyphens (1 to 40).", f"{field}[{index}]")
        starts, ends = part.startswith("-"), part.endswith("-")
        if (starts and field != "suffixes") or (ends and field != "prefixes"):
            raise invalid(
                f"A domain name cannot begin or end with a hyphen: no hyphen at "
                f"{_OPEN_ENDS[field]} of {field}.", f"{field}[{index}]",
            )
        if part not in cleaned:
            cleaned.append(part)
    return cleaned


def _check_lengths(keywords: list[str], affixes: list[str], field: str) -> None:
    """Every `prefix + keyword` (or `keyword + suffix`) fits in one DNS label."""
    longest = max(map(len, keywords))
    for index, affix in enumerate(affixes):
        if len(affix) + longest > MAX_LABEL:
            raise invalid(
                f"{field}[{index}] with the longest keyword makes a name of "
                f"{len(affix) + longest} characters before the TLD; {MAX_LABEL} at most.",
                f"{field}[{index}]",
            )


def _labels(keyword: str, prefixes: list[str], suffixes: list[str]) -> list[str]:
    if not prefixes and not suffixes:
        return [keyword]
    return [p + keyword for p in prefixes] + [keyword + s for s in suffixes]


def _candidates(
    keywords: list[str], prefixes: list[str], suffixes: list[str], tlds: list[str]
) -> list[str]:
    """Every keyword's names, taken in turn (the first of each keyword, then the second, ...),
    so that a limit or the 300-candidate budget spreads over all the keywords sent."""
    per_keyword = [
        [
            f"{label}.{tld}"
            for label in _labels(keyword, prefixes, suffixes)
            for tld in tlds
        ]
        for keyword in keywords
    ]
    return list(dict.fromkeys(name for turn in zip_longest(*per_keyword) for name in turn if name))


def generate(container: Container, principal: Principal, command: GenerateDomains) -> GeneratedOut:
    tenant = principal.tenant
    keywords = _parts(command.keywords, "keywords", MAX_KEYWORDS, 1)
    if command.prefixes is None and command.suffixes is None:
        prefixes, suffixes = DEFAULT_PREFIXES, DEFAULT_SUFFIXES
    else:
        prefixes = _parts(command.prefixes or [], "prefixes", MAX_AFFIXES)
        suffixes = _parts(command.suffixes or [], "suffixes", MAX_AFFIXES)
        for field, sent in (("prefixes", command.prefixes), ("suffixes", command.suffixes)):
            _check_lengths(keywords, [part.strip() for part in sent or []], field)
    limit = DEFAULT_LIMIT if command.limit is None else command.limit
    if not 1 <= limit <= MAX_LIMIT:
        raise invalid(f"limit must be between 1 and {MAX_LIMIT}.", "limit")
    tlds_sent = command.tlds
    tlds = ["com"] if tlds_sent is None else [t.strip().lower().lstrip(".") for t in tlds_sent]
    if not tlds:
        raise invalid("tlds must not be empty; omit it for .com.", "tlds")
    for index, tld in enumerate(tlds):
        if tld not in registrar.CATALOG:
            raise invalid(f"'{tld}' is not in the TLD catalog.", f"tlds[{index}]")
    tlds = list(dict.fromkeys(tlds))
    candidates = _candidates(keywords, prefixes, suffixes, tlds)
    deadline = time.monotonic() + TIME_BUDGET_SECONDS
    found: list[str] = []
    examined = 0
    batch = 50
    for start in range(0, min(len(candidates), MAX_CANDIDATES), batch):
        if len(found) >= limit or time.monotonic() > deadline:
            break
        chunk = candidates[start : min(start + batch, MAX_CANDIDATES)]
        with container.read_db.read() as cur:
            usage = usage_by_name(cur, chunk, tenant)
            owners = owners_by_name(cur, chunk, tenant)
        for name in chunk:
            if len(found) >= limit:
                break
            examined += 1
            if registrar.registry_refusal(name) is None and not usage[name] and not owners[name]:
                found.append(name)
    exhausted = examined >= len(candidates)
    partial = len(found) < limit and not exhausted
    groups = [TldGroup(tld=tld, domains=[n for n in found if n.endswith("." + tld)]) for tld in tlds]
    return GeneratedOut(
        domains=groups, returned=len(found), candidates_examined=examined, partial=partial
    )


def tld_catalog() -> list[Tld]:
    return [Tld(tld=t.name, name=f".{t.name}") for t in registrar.CATALOG.values()]

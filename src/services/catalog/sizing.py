"""The bundle sizing rule: from monthly sending volume to inboxes and domains per suite.

1. Sending days per month: 30 when sending on weekends, 22 (weekdays only) otherwise.
2. Each inbox sends at most 30 emails per sending day (a safe cold-email pace).
3. Inboxes needed = ceil(volume / (30 * sending days)), at least 1.
4. The effective split: the percentages given; one given means the other is 100 minus it;
   none given means 50 / 50.
5. Inboxes per suite = ceil(inboxes needed * suite percent / 100) (0 for a 0% suite).
6. Inboxes per domain: `suite_a` uses `suite_a_licenses` (default 3); `suite_b` uses 3.
7. Required domains per suite = ceil(inboxes of the suite / inboxes per domain); total = sum.
"""

from __future__ import annotations

import math

from domain.errors import invalid

SENDS_PER_INBOX_PER_DAY = 30
SENDING_DAYS_WITH_WEEKENDS = 30
SENDING_DAYS_WEEKDAYS_ONLY = 22
DEFAULT_SPLIT = (50, 50)
DEFAULT_SUITE_A_INBOXES_PER_DOMAIN = 3
SUITE_B_INBOXES_PER_DOMAIN = 3
MAX_SUITE_A_INBOXES_PER_DOMAIN = 50
MAX_MONTHLY_VOLUME = 100_000_000
# As the bundle's events store it: the effective split and the per-suite counts by name, and
# the inboxes per domain of each suite.
Sizing = dict[str, dict[str, int] | int]


def effective_split(suite_a_percent: int | None, suite_b_percent: int | None) -> tuple[int, int]:
    for value, field in ((suite_a_percent, "suite_a_percent"), (suite_b_percent, "suite_b_percent")):
        if value is not None and not 0 <= value <= 100:
            raise invalid(f"{field} must be between 0 and 100.", field)
    if suite_a_percent is None and suite_b_percent is None:
        return DEFAULT_SPLIT
    if suite_a_percent is None:
        assert suite_b_percent is not None
        return 100 - suite_b_percent, suite_b_percent
    if suite_b_percent is None:
        return suite_a_percent, 100 - suite_a_percent
    if suite_a_percent + suite_b_percent != 100:
        raise invalid("suite_a_percent and suite_b_percent must add up to 100.", "suite_b_percent")
    return suite_a_percent, suite_b_percent


def inboxes_needed(monthly_sending_volume: int, send_on_weekends: bool) -> int:
    if not 1 <= monthly_sending_volume <= MAX_MONTHLY_VOLUME:
        raise invalid(
            f"monthly_sending_volume must be between 1 and {MAX_MONTHLY_VOLUME}.",
            "monthly_sending_volume",
        )
    days = SENDING_DAYS_WITH_WEEKENDS if send_on_weekends else SENDING_DAYS_WEEKDAYS_ONLY
    return max(1, math.ceil(monthly_sending_volume / (SENDS_PER_INBOX_PER_DAY * days)))


def size_bundle(
    *,
    monthly_sending_volume: int,
    send_on_weekends: bool,
    suite_a_percent: int | None,
    suite_b_percent: int | None,
    suite_a_licenses: int | None,
) -> Sizing:
    """The sizing of one bundle, as JSON-able data (it is stored in the bundle's events)."""
    if suite_a_licenses is not None and not 1 <= suite_a_licenses <= MAX_SUITE_A_INBOXES_PER_DOMAIN:
        raise invalid(
            f"suite_a_licenses must be between 1 and {MAX_SUITE_A_INBOXES_PER_DOMAIN}.",
            "suite_a_licenses",
        )
    split_a, split_b = effective_split(suite_a_percent, suite_b_percent)
    needed = inboxes_needed(monthly_sending_volume, send_on_weekends)
    per_domain_a = suite_a_licenses or DEFAULT_SUITE_A_INBOXES_PER_DOMAIN
    inboxes_a = math.ceil(needed * split_a / 100)
    inboxes_b = math.ceil(needed * split_b / 100)
    domains_a = math.ceil(inboxes_a / per_domain_a)
    domains_b = math.ceil(inboxes_b / SUITE_B_INBOXES_PER_DOMAIN)
    return {
        "effective": {"suite_a_percent": split_a, "suite_b_percent": split_b},
        "suite_a_inboxes_per_domain": per_domain_a,
        "suite_b_inboxes_per_domain": SUITE_B_INBOXES_PER_DOMAIN,
        "inboxes": {"suite_a": inboxes_a, "suite_b": inboxes_b, "total": inboxes_a + inboxes_b},
        "required_domains": {"suite_a": domains_a, "suite_b": domains_b, "total": domains_a + domains_b},
    }

"""PARTNER_API_WEBHOOK_RETRY_SCHEDULE: seconds between attempts, or a start refused with the
variable named."""

from __future__ import annotations

import pytest

from infra.settings import DEFAULT_RETRY_SCHEDULE, _schedule


def test_waits_are_read_in_order_and_default_when_unset() -> None:
    assert _schedule("2, 4,8") == (2.0, 4.0, 8.0)
    assert _schedule(None) == _schedule(",") == DEFAULT_RETRY_SCHEDULE


@pytest.mark.parametrize("value", ["abc", "5,x", "inf", "-1", "nan"])
def test_a_wait_that_is_no_number_of_seconds_names_the_variable(value: str) -> None:
    with pytest.raises(ValueError, match="PARTNER_API_WEBHOOK_RETRY_SCHEDULE"):
        _schedule(value)

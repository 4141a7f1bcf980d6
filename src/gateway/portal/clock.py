"""The sandbox clock on the portal (decisions.md 6): a sandbox key's dashboard shows its
organization's sandbox clock and a form that moves it forward, as `POST /sandbox/clock/advance`
does (the same use case, the same bounds)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domain.errors import invalid
from domain.sandbox_clocks import MAX_ADVANCE_SECONDS
from infra.clock import SANDBOX
from services.sandbox.clock import clock_view
from views.sandbox import ClockOut

if TYPE_CHECKING:
    from runtime.container import Container

UNITS = {"minutes": 60, "hours": 3600, "days": 86_400, "seconds": 1}


def clock_panel(container: Container, org_id: str, environment: str) -> ClockOut | None:
    """What the dashboard shows of the sandbox clock; None for a live key (no clock)."""
    if environment != SANDBOX:
        return None
    return clock_view(container, org_id)


def form_seconds(form: dict[str, Any]) -> int:
    """The advance the form asks for: a whole `amount` of a `unit`, within the API's bounds."""
    amount, unit = str(form.get("amount", "")).strip(), str(form.get("unit", ""))
    if not amount.isascii() or not amount.isdigit() or unit not in UNITS:
        raise invalid("Give a whole number of minutes, hours, days or seconds.", "amount")
    seconds = int(amount[:12]) * UNITS[unit]
    if not 1 <= seconds <= MAX_ADVANCE_SECONDS:
        raise invalid(
            f"One advance moves 1 second to {MAX_ADVANCE_SECONDS // 86_400} days.", "amount"
        )
    return seconds

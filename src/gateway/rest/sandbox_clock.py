"""The sandbox clock (decisions.md 6): read it, move it forward."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import msgspec
from litestar import Controller, Request, Response, get, post

from domain.errors import NotFound, invalid
from domain.sandbox_clocks import MAX_ADVANCE_SECONDS
from gateway.rest.auth import principal_of
from gateway.rest.idempotency import maybe_idempotent
from gateway.rest.lists import container_of
from gateway.rest.schema_notes import ResponseDoc
from infra.clock import SANDBOX
from schema.rules import documented
from services.accounts.keys import Principal
from services.sandbox.clock import advance_clock, clock_view, seconds_to

if TYPE_CHECKING:
    from runtime.container import Container

RULES = """Every organization's sandbox has its own clock, which only it can move forward (as
Stripe's test clocks). Every time-driven rule of that sandbox reads it: a cancellation's grace
window, a premium swap's 14 warm days, the yearly renewal of `auto_renew` domains and the lapse
of the others, and pending webhook retries; timestamps written on its resources (`created_at`,
`updated_at`, `cancel_at`, ...) are on it too. Webhook envelopes' `created_at` and
`Service-Timestamp` stay on real time, so receivers' checks hold. Live keys and other
organizations are never affected."""


# Documentation only: the handler checks the bounds itself, to answer with `field`.
class AdvanceBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    seconds: Annotated[int | None, documented(minimum=1, maximum=MAX_ADVANCE_SECONDS)] = None
    to: str | None = None  # ISO 8601


class CameDueOut(msgspec.Struct):
    """How many of each kind this advance ran."""

    grace_windows: int
    warm_periods: int
    renewals: int
    lapses: int
    webhook_attempts: int


class ClockOut(msgspec.Struct):
    now: str
    advanced_seconds: int


class AdvancedOut(ClockOut):
    came_due: CameDueOut


class ClockResponse(msgspec.Struct):
    data: ClockOut


class AdvancedResponse(msgspec.Struct):
    data: AdvancedOut


def _sandbox_org(principal: Principal) -> str:
    """Live keys have no sandbox clock: 404, as for any resource of another environment."""
    if principal.environment != SANDBOX:
        raise NotFound("sandbox clock (live keys run on real time)")
    return principal.org_id


def advance_seconds(container: Container, org_id: str, body: AdvanceBody) -> int:
    """The body's advance in seconds: `seconds`, or the distance to `to`, never both."""
    if (body.seconds is None) == (body.to is None):
        field = "to" if body.seconds is not None else "seconds"
        raise invalid("Send either `seconds` or `to`, exactly one of them.", field)
    if body.seconds is not None:
        if not 1 <= body.seconds <= MAX_ADVANCE_SECONDS:
            raise invalid(f"seconds must be 1 to {MAX_ADVANCE_SECONDS:,}.", "seconds")
        return body.seconds
    assert body.to is not None
    try:
        target = datetime.fromisoformat(body.to.replace("Z", "+00:00"))
    except ValueError:
        raise invalid("to must be an ISO 8601 time, e.g. 2027-01-01T00:00:00Z.", "to") from None
    if target.tzinfo is None:
        raise invalid("to must name its time zone (Z or an offset).", "to")
    seconds = seconds_to(container, org_id, target.timestamp())
    if seconds > MAX_ADVANCE_SECONDS:
        raise invalid(f"One advance moves at most {MAX_ADVANCE_SECONDS:,} seconds.", "to")
    return seconds


class SandboxClockController(Controller):
    path = "/sandbox/clock"
    tags = ["sandbox clock"]

    @get(
        operation_id="getSandboxClock",
        summary="The sandbox clock: its now and how far it was advanced",
        description=RULES + "\n\nSandbox keys, any preset; a live key: 404 `not_found`.",
        responses={200: ResponseDoc(ClockResponse, description="The sandbox clock")},
    )
    async def read(self, request: Request[Any, Any, Any]) -> dict[str, Any]:
        container = container_of(request)
        org_id = _sandbox_org(principal_of(request))
        return {"data": await anyio.to_thread.run_sync(lambda: clock_view(container, org_id))}

    @post(
        "/advance",
        operation_id="advanceSandboxClock",
        summary="Move the sandbox clock forward and run what comes due on the way",
        description=RULES
        + "\n\nBody: `{\"seconds\": N}` (1 to 31,622,400) or `{\"to\": ISO 8601}` (later than "
        "now), not both (`invalid_request` with `field`). `full` preset (other presets 403); "
        "a live key: 404 `not_found`. Runs, in time order, everything that comes due on the "
        "way, each once, each at its own due time and with its events: grace windows end "
        "(`order.cancelled`), warm periods end (the old domain detached), renewals and lapses, "
        "and one attempt of each webhook delivery due (a failed attempt schedules the next "
        "from the time it was made, so one advance never runs a whole retry chain). Two "
        "advances at once run each due item once; an advance cut short (a crash) is finished "
        "by the next one or at restart. `came_due` counts what this advance ran.",
        status_code=200,
        responses={200: ResponseDoc(AdvancedResponse, description="The moved clock")},
    )
    async def advance(self, request: Request[Any, Any, Any], data: AdvanceBody) -> Response[Any]:
        container = container_of(request)
        org_id = _sandbox_org(principal_of(request))

        def run() -> dict[str, Any]:
            seconds = advance_seconds(container, org_id, data)
            return {"data": advance_clock(container, org_id, seconds)}

        return await maybe_idempotent(request, run, status_code=200)

"""The sandbox clock (decisions.md 6): read it, move it forward."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post

from gateway.rest.auth import SANDBOX_ONLY, principal_of
from gateway.rest.idempotency import maybe_idempotent
from gateway.rest.lists import container_of
from gateway.rest.schema_notes import ResponseDoc
from infra.blocking import run_blocking
from services.sandbox.clock import advance_sandbox_clock, get_sandbox_clock
from services.sandbox.commands import AdvanceSandboxClock
from views.sandbox import AdvancedResponse, ClockResponse

RULES = """Every organization's sandbox has its own clock, which only it can move forward (as
Stripe's test clocks). Every time-driven rule of that sandbox reads it: a cancellation's grace
window, a premium swap's 14 warm days, the yearly renewal of `auto_renew` domains and the lapse
of the others, and pending webhook retries; timestamps written on its resources (`created_at`,
`updated_at`, `cancel_at`, ...) are on it too. Webhook envelopes' `created_at` and
`Service-Timestamp` stay on real time, so receivers' checks hold. Live keys and other
organizations are never affected."""


# decisions.md 6: a live key has no sandbox clock.
LIVE_KEY: dict[int, ResponseDoc] = {
    404: ResponseDoc(None, description="not_found: a live key has no sandbox clock"),
}


class SandboxClockController(Controller):
    path = "/sandbox/clock"
    tags = ["sandbox clock"]
    opt = SANDBOX_ONLY

    @get(
        operation_id="getSandboxClock",
        summary="The sandbox clock: its now and how far it was advanced",
        description=RULES + "\n\nSandbox keys, any preset; a live key: 404 `not_found`.",
        responses={200: ResponseDoc(ClockResponse, description="The sandbox clock"), **LIVE_KEY},
    )
    async def read(self, request: Request[Any, Any, Any]) -> ClockResponse:
        container, principal = container_of(request), principal_of(request)
        clock = await run_blocking(lambda: get_sandbox_clock(container, principal))
        return ClockResponse(clock)

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
        responses={200: ResponseDoc(AdvancedResponse, description="The moved clock"), **LIVE_KEY},
    )
    async def advance(
        self, request: Request[Any, Any, Any], data: AdvanceSandboxClock
    ) -> Response[AdvancedResponse]:
        container, principal = container_of(request), principal_of(request)
        return await maybe_idempotent(
            request,
            lambda: AdvancedResponse(advance_sandbox_clock(container, principal, data)),
            status_code=200,
        )

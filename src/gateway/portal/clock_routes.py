"""`POST /portal/clock/advance`: the portal's form for the sandbox clock (CSRF-checked as the
portal's other forms); answers the dashboard with what came due."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, post

from domain.errors import DomainError
from gateway.portal.app import _dashboard, _form_session, _to_login
from gateway.portal.clock import form_seconds
from infra.blocking import run_blocking
from infra.clock import SANDBOX
from services.sandbox.clock import advance_clock


class PortalClockController(Controller):
    path = "/portal/clock"
    tags = ["portal"]
    include_in_schema = False

    @post("/advance", operation_id="portalAdvanceClock", summary="Advance the sandbox clock")
    async def advance(self, request: Request[Any, Any, Any]) -> Response[Any]:
        try:
            container, session, form = await _form_session(request)
        except PermissionError:
            return _to_login()

        def move() -> Response[str]:
            if session.environment != SANDBOX:
                return _dashboard(container, session, error="Live keys run on real time.")
            try:
                seconds = form_seconds(form)
            except DomainError as exc:
                return _dashboard(container, session, error=exc.message)
            moved = advance_clock(container, session.org_id, seconds)
            return _dashboard(container, session, came_due=moved.came_due)

        return await run_blocking(move)

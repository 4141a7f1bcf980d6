"""The partner portal at /portal: sign in with a `full` key, manage the webhook endpoint, send a
test event, and read the event log with every attempt (server-rendered, no build step).

Its "Redeliver since" form is `POST /events/redeliver` (decisions 7) for the signed-in key.

The portal is outside the bearer middleware; its session is a signed cookie naming the key,
re-checked on every request, so revoking the key ends the session at once.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from litestar import Controller, Request, Response, get, post
from litestar.contrib.jinja import JinjaTemplateEngine
from litestar.datastructures import Cookie
from litestar.response import Redirect

from domain.api_keys import ApiKey
from domain.errors import DomainError
from gateway.portal.clock import clock_panel
from gateway.rest.lists import container_of
from infra.blocking import run_blocking
from infra.clock import real_now
from infra.ids import parse_id
from webhooks.commands import SetWebhookEndpoint
from webhooks.deliveries import STATUSES as DELIVERY_STATUSES
from webhooks.deliveries import redeliver
from webhooks.endpoints import endpoints_of, refuse_sandbox_change
from webhooks.events_view import (
    EVENT_COLUMNS,
    EVENTS_FROM,
    STATUS_SQL,
    event_row,
    render_page,
    sandbox_times,
)
from webhooks.recovery import redeliver_since, to_the_millisecond

if TYPE_CHECKING:
    from runtime.container import Container

COOKIE = "portal_session"
SESSION_SECONDS = 8 * 3600
EVENTS_SHOWN = 50
_templates = JinjaTemplateEngine(directory=Path(__file__).parent / "templates")


class Session:
    def __init__(self, key_id: str, org_id: str, environment: str, token: str, secret: str) -> None:
        self.key_id = key_id
        self.org_id = org_id
        self.environment = environment
        self.csrf = _sign(secret, "csrf:" + token)

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"


def _sign(secret: str, value: str) -> str:
    return hmac.new(
        hashlib.sha256(("portal:" + secret).encode()).digest(), value.encode(), "sha256"
    ).hexdigest()


def _html(template: str, status_code: int = 200, **context: Any) -> Response[str]:
    body = _templates.get_template(template).render(**context)
    return Response(body, status_code=status_code, media_type="text/html")


def _session(container: Container, request: Request[Any, Any, Any]) -> Session | None:
    token = request.cookies.get(COOKIE, "")
    key_id, _, rest = token.partition(".")
    expires, _, signature = rest.partition(".")
    secret = container.settings.secret_key
    # Bytes: compare_digest refuses non-ASCII str (a 500), and the cookie is the caller's.
    if not expires.isdigit() or not hmac.compare_digest(
        signature.encode(), _sign(secret, f"{key_id}.{expires}").encode()
    ):
        return None
    if int(expires) < container.clock.now():
        return None
    key = container.store.find(parse_id("key", key_id), ApiKey)
    if key is None or key.is_revoked or key.preset != "full":
        return None
    return Session(key_id, key.org_id, key.environment, token, secret)


async def _form_session(
    request: Request[Any, Any, Any],
) -> tuple[Container, Session, dict[str, Any]]:
    container = container_of(request)
    session = await run_blocking(_session, container, request)
    form = dict(await request.form())
    csrf = str(form.get("csrf", "")).encode()
    if session is None or not hmac.compare_digest(csrf, session.csrf.encode()):
        raise PermissionError("not signed in")
    return container, session, form


def _dashboard(
    container: Container,
    session: Session,
    status: str | None = None,
    before: int | None = None,
    **extra: Any,
) -> Response[str]:
    """The endpoint and the newest events, EVENTS_SHOWN a page (spec 6: every failed event
    with its attempts stays reachable): `status` filters, `before` pages to older ones."""
    where: list[str] = ["e.tenant = ?"]
    params: list[object] = [session.tenant]
    if status is not None:
        where.append(STATUS_SQL)
        params.append(status)
    if before is not None:
        where.append("e.position < ?")
        params.append(before)
    with container.read_db.read() as cur:
        rows = cur.execute(
            f"SELECT {EVENT_COLUMNS} FROM {EVENTS_FROM} WHERE {' AND '.join(where)} "
            "ORDER BY position DESC LIMIT ?",
            (*params, EVENTS_SHOWN + 1),
        ).fetchall()
    older = None
    if len(rows) > EVENTS_SHOWN:
        rows = rows[:EVENTS_SHOWN]
        query = {"status": status} if status else {}
        older = "/portal?" + urlencode({**query, "before": rows[-1]["position"]})
    return _html(
        "dashboard.html",
        org_id=session.org_id,
        environment=session.environment,
        csrf=session.csrf,
        endpoint=endpoints_of(container).describe(session.org_id),
        events=render_page(container.read_db, rows, sandbox_times(container, session.tenant)),
        shown_status=status,
        older=older,
        sandbox_clock=clock_panel(container, session.org_id, session.environment),
        **extra,
    )


def _page_query(request: Request[Any, Any, Any]) -> tuple[str | None, int | None]:
    """The dashboard's `status` and `before`; anything else there shows the first page."""
    status = request.query_params.get("status")
    before = request.query_params.get("before", "")
    return (
        status if status in DELIVERY_STATUSES else None,
        # ASCII digits that fit a BIGINT: `isdigit()` takes `²`, and a longer number fails
        # int() or the database.
        int(before) if re.fullmatch(r"[0-9]{1,18}", before) else None,
    )


def _since(text: str) -> float:
    """The form's `since`: ISO 8601 with its offset, as the API takes it."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise DomainError(
            "invalid_request", "Give `since` as ISO 8601 with its offset, e.g. 2026-07-01T00:00:00Z."
        )
    return to_the_millisecond(moment).timestamp()  # as the API compares it


def _to_login() -> Redirect:
    return Redirect("/portal", status_code=303)


class PortalController(Controller):
    path = "/portal"
    tags = ["portal"]
    include_in_schema = False

    @get(operation_id="portalHome", summary="Portal page", sync_to_thread=True)
    def home(self, request: Request[Any, Any, Any]) -> Response[str]:
        container = container_of(request)
        session = _session(container, request)
        if session is None:
            return _html("login.html")
        status, before = _page_query(request)
        asked = request.query_params.get("status")
        if asked is not None and asked != status:  # shown unfiltered, but said so
            shown = ", ".join(DELIVERY_STATUSES)
            error = f"No events have the status {asked!r}: it is one of {shown}. All are shown."
            return _dashboard(container, session, None, before, error=error)
        return _dashboard(container, session, status, before)

    @post("/login", operation_id="portalLogin", summary="Sign in with a full API key")
    async def login(self, request: Request[Any, Any, Any]) -> Response[Any]:
        container = container_of(request)
        secret = str((await request.form()).get("api_key", "")).strip()
        principal = await run_blocking(container.accounts.authenticate, secret)
        if principal is None:
            return _html("login.html", 401, error="Use a valid API key with the full preset.")
        if principal.preset != "full":  # spec 5.7: a valid key without the right is 403
            error = f"This {principal.preset} key cannot sign in; use a key with the full preset."
            return _html("login.html", 403, error=error)
        expires = int(container.clock.now()) + SESSION_SECONDS
        value = f"{principal.key_id}.{expires}"
        token = f"{value}.{_sign(container.settings.secret_key, value)}"
        cookie = Cookie(
            key=COOKIE,
            value=token,
            path="/portal",
            httponly=True,
            samesite="strict",
            max_age=SESSION_SECONDS,
            secure=request.url.scheme == "https",
        )
        return Redirect("/portal", status_code=303, cookies=[cookie])

    @post("/logout", operation_id="portalLogout", summary="Sign out")
    async def logout(self) -> Redirect:
        redirect = _to_login()
        redirect.delete_cookie(COOKIE, path="/portal")
        return redirect

    @post("/endpoint", operation_id="portalSetEndpoint", summary="Set the webhook URL")
    async def set_endpoint(self, request: Request[Any, Any, Any]) -> Response[Any]:
        try:
            container, session, form = await _form_session(request)
        except PermissionError:
            return _to_login()
        service = endpoints_of(container)
        try:
            refuse_sandbox_change(session.environment)
            saved = await run_blocking(
                service.set_url, session.org_id, SetWebhookEndpoint(url=str(form.get("url", "")))
            )
        except DomainError as exc:
            message = exc.message
            return await run_blocking(
                lambda: _dashboard(container, session, error=message)
            )
        return await run_blocking(
            lambda: _dashboard(container, session, secret=saved.secret)
        )

    @post("/rotate", operation_id="portalRotateSecret", summary="Rotate the signing secret")
    async def rotate(self, request: Request[Any, Any, Any]) -> Response[Any]:
        try:
            container, session, _ = await _form_session(request)
        except PermissionError:
            return _to_login()
        try:
            refuse_sandbox_change(session.environment)
            rotated = await run_blocking(
                endpoints_of(container).rotate_secret, session.org_id
            )
        except DomainError as exc:
            message = exc.message
            return await run_blocking(
                lambda: _dashboard(container, session, error=message)
            )
        return await run_blocking(
            lambda: _dashboard(container, session, secret=rotated.secret)
        )

    @post("/test", operation_id="portalSendTest", summary="Send a test event")
    async def send_test(self, request: Request[Any, Any, Any]) -> Response[Any]:
        try:
            container, session, _ = await _form_session(request)
        except PermissionError:
            return _to_login()

        def send() -> None:
            position = endpoints_of(container).send_test(session.org_id, session.environment)
            container.read_models.wait_for(position)

        await run_blocking(send)
        return _to_login()

    @post("/events/{event_id:str}/redeliver", operation_id="portalRedeliver", summary="Redeliver")
    async def redeliver_event(
        self, request: Request[Any, Any, Any], event_id: str
    ) -> Response[Any]:
        try:
            container, session, _ = await _form_session(request)
        except PermissionError:
            return _to_login()

        def send_again() -> None:
            row = event_row(container.read_db, session.tenant, event_id)
            if row is not None:  # another tenant's or an unknown id: nothing to do
                redeliver(container.read_db, row, session.org_id, container.clock.now())

        await run_blocking(send_again)
        return _to_login()

    @post("/redeliver", operation_id="portalRedeliverSince", summary="Redeliver since")
    async def redeliver_since(self, request: Request[Any, Any, Any]) -> Response[Any]:
        try:
            container, session, form = await _form_session(request)
        except PermissionError:
            return _to_login()
        status = str(form.get("status", ""))

        def send_again() -> Response[str]:
            try:
                since = _since(str(form.get("since", "")))
            except DomainError as exc:
                return _dashboard(container, session, error=exc.message)
            count = redeliver_since(
                container.read_db,
                session.tenant,
                session.org_id,
                since,
                status if status in DELIVERY_STATUSES else None,
                real_now(container.clock),  # due now for the dispatcher, as the API queues it
                container.settings.webhook_retry_schedule,
            )
            return _dashboard(container, session, redelivered=count)

        return await run_blocking(send_again)

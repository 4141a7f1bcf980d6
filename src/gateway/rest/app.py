"""App factory and composition root of the REST gateway."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from litestar import Litestar, Router
from litestar.openapi.config import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme

from gateway.portal.app import PortalController
from gateway.portal.clock_routes import PortalClockController
from gateway.rest.allow_header import correct_allow_header
from gateway.rest.api_page import api_page, api_page_assets
from gateway.rest.auth import AuthAndRateLimitMiddleware
from gateway.rest.errors import handle_exception
from gateway.rest.health import healthz, metrics_endpoint, readyz
from gateway.rest.me import ME_PATH, serve_me
from gateway.rest.openapi_docs import PartnerOpenAPIJson
from gateway.rest.openapi_info import CONTACT, DESCRIPTION, LICENSE, TAGS
from gateway.rest.pagination import PageTokens
from gateway.rest.request_id import RequestIdMiddleware
from gateway.rest.routes import partner_controllers
from gateway.rest.strict_bodies import request_rules

if TYPE_CHECKING:
    from runtime.container import Container

BASE_PATH = "/partner/v1"
SCHEMA_PATH = f"{BASE_PATH}/schema"
Lifespan = Callable[[Litestar], AbstractAsyncContextManager[None]]


def openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="Partner Provisioning API",
        version="1.0.0",
        description=DESCRIPTION,
        contact=CONTACT,
        license=LICENSE,
        tags=TAGS,
        path=SCHEMA_PATH,
        render_plugins=[
            api_page(BASE_PATH, SCHEMA_PATH),
            PartnerOpenAPIJson(BASE_PATH, path="/openapi.json"),
        ],
        components=Components(
            security_schemes={
                "bearer": SecurityScheme(
                    type="http", scheme="bearer", description="pk_live_... or pk_test_..."
                )
            }
        ),
        security=[{"bearer": []}],
    )


def create_litestar(container: Container, lifespans: list[Lifespan] | None = None) -> Litestar:
    partner = Router(
        path=BASE_PATH,
        route_handlers=partner_controllers(),
        middleware=[AuthAndRateLimitMiddleware()],
        before_request=request_rules,
    )
    extra_routes: list[Any] = container.extras.get("extra_routes", [])
    container.extras.setdefault("page_tokens", PageTokens(container.settings.secret_key))
    app = Litestar(
        route_handlers=[
            partner,
            healthz,
            readyz,
            metrics_endpoint,
            PortalController,
            api_page_assets(SCHEMA_PATH),
            PortalClockController,
            *extra_routes,
        ],
        exception_handlers={Exception: handle_exception},
        openapi_config=openapi_config(),
        request_max_body_size=container.settings.max_body_bytes,
        lifespan=lifespans or [],
        logging_config=None,
        debug=False,
    )
    app.state["container"] = container
    correct_allow_header(app)
    return app


def create_app(container: Container, lifespans: list[Lifespan] | None = None) -> Any:
    """The ASGI callable served: the request-id layer wraps everything, 404s included."""

    async def me(scope: dict[str, Any], send: Any) -> None:
        await serve_me(container, scope, send)

    return RequestIdMiddleware(create_litestar(container, lifespans), {ME_PATH: me})


@asynccontextmanager
async def no_lifespan(_: Litestar) -> AsyncIterator[None]:
    yield

"""The interactive API page (Swagger UI) with its scripts and styles served by the service
itself, from the `swagger-ui-py` package, so the page works with no network beyond the service
(Litestar's default loads them from a CDN: a blank page offline or behind a strict proxy)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from litestar import Router
from litestar.datastructures import CacheControlHeader
from litestar.static_files import create_static_files_router

from gateway.rest.openapi_docs import PartnerSwagger

ASSETS = "assets"


def swagger_ui_directory() -> Path:
    """Swagger UI's distribution inside the `swagger_ui` package (located, not imported: its
    `__init__` wires web-framework handlers we do not use)."""
    spec = importlib.util.find_spec("swagger_ui")
    if spec is None or spec.origin is None:
        raise RuntimeError("swagger-ui-py is not installed")
    return Path(spec.origin).parent / "static"


def api_page(base_path: str, schema_path: str) -> PartnerSwagger:
    assets = f"{schema_path}/{ASSETS}"
    return PartnerSwagger(
        base_path,
        path="/",
        js_url=f"{assets}/swagger-ui-bundle.js",
        css_url=f"{assets}/swagger-ui.css",
        standalone_preset_js_url=f"{assets}/swagger-ui-standalone-preset.js",
        favicon=f"<link rel='icon' type='image/png' href='{assets}/favicon-32x32.png'>",
    )


def api_page_assets(schema_path: str) -> Router:
    """Public like the page itself; a day of caching, the files change only with the package."""
    return create_static_files_router(
        path=f"{schema_path}/{ASSETS}",
        directories=[swagger_ui_directory()],
        name="api_page_assets",
        cache_control=CacheControlHeader(public=True, max_age=86400),
    )

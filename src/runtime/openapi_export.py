"""Writes the served OpenAPI document to a file, built by the app factory without serving it:
`make lint` checks it with openapi-spec-validator and Redocly, and a client can be generated
from it offline.

    python -m runtime.openapi_export var/openapi.json
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from litestar.serialization import encode_json

from gateway.rest.app import BASE_PATH, create_litestar
from gateway.rest.openapi_docs import document_partner_api
from infra.settings import Settings
from runtime.container import Container


def partner_document() -> bytes:
    """The document `GET /partner/v1/schema/openapi.json` answers, from a throw-away SQLite
    store (the factory needs a container; no request reaches it)."""
    with tempfile.TemporaryDirectory() as data_dir:
        container = Container.build(Settings.from_env({"PARTNER_API_DATA_DIR": data_dir}))
        try:
            app = create_litestar(container)
            schema: dict[str, Any] = app.openapi_schema.to_schema()
            return encode_json(document_partner_api(schema, BASE_PATH))
        finally:
            container.close()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m runtime.openapi_export PATH", file=sys.stderr)
        return 2
    target = Path(argv[0])
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(partner_document())
    print(f"wrote {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

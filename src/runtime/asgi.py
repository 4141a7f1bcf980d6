"""Import path for uvicorn workers: each builds its own container from the environment."""

from __future__ import annotations

from typing import Any

from runtime.serve import gateway_only_app


def app() -> Any:
    return gateway_only_app()

"""What `/readyz` answers (and the gRPC health service follows): ready or not, and each check's
word (`ok`, `not configured` or `error: ...`)."""

from __future__ import annotations

import msgspec


class Readiness(msgspec.Struct):
    ready: bool
    checks: dict[str, str]

"""Webhook signatures (spec 6): `v1=<hex HMAC-SHA-256 of "<ts>.<event id>.<raw body>">`.

The key is the whole registered secret (`whsec_...`) as UTF-8 bytes. `verify_signature` is the
receiver's side, written to be copied into a partner's code as it is (standard library only).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping

SECRET_PREFIX = "whsec_"
TOLERANCE_SECONDS = 300
EVENT_ID_HEADER = "Service-Event-Id"
TIMESTAMP_HEADER = "Service-Timestamp"
SIGNATURE_HEADER = "Service-Signature"


def new_secret() -> str:
    """`whsec_` + 32 random bytes (spec asks for at least 24)."""
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def compute_signature(secret: str, timestamp: int, event_id: str, body: bytes) -> str:
    signed = f"{timestamp}.{event_id}.".encode() + body
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def signed_headers(secret: str, timestamp: int, event_id: str, body: bytes) -> dict[str, str]:
    return {
        EVENT_ID_HEADER: event_id,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: "v1=" + compute_signature(secret, timestamp, event_id, body),
    }


def verify_signature(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    now: float,
    tolerance: float = TOLERANCE_SECONDS,
) -> bool:
    """True when `body` was signed with `secret` within `tolerance` seconds of `now`.

    `headers` may use any letter case; `body` must be the raw bytes received, before any JSON
    parsing. Several `v1=` values (comma or space separated) are accepted, so a sender may sign
    with an old and a new secret while a rotation settles.
    """
    lowered = {key.lower(): value for key, value in headers.items()}
    event_id = lowered.get(EVENT_ID_HEADER.lower(), "")
    timestamp = lowered.get(TIMESTAMP_HEADER.lower(), "")
    signature = lowered.get(SIGNATURE_HEADER.lower(), "")
    if not event_id or not (timestamp.isascii() and timestamp.isdigit()) or not signature:
        return False
    if abs(now - int(timestamp)) > tolerance:
        return False
    expected = compute_signature(secret, int(timestamp), event_id, body)
    candidates = signature.replace(",", " ").split()
    return any(
        hmac.compare_digest(candidate.removeprefix("v1=").encode(), expected.encode())
        for candidate in candidates
        if candidate.startswith("v1=")
    )

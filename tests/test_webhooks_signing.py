"""The receiver-side helper: a fixed test vector, tampering, stale timestamps."""

from __future__ import annotations

import hashlib
import hmac

from webhooks.signing import new_secret, signed_headers, verify_signature

SECRET = "whsec_test_secret_0123456789abcdef"
EVENT_ID = "evt_0123456789abcdef0123456789abcdef"
BODY = b'{"id":"evt_0123456789abcdef0123456789abcdef","type":"webhook.test"}'
TIMESTAMP = 1_800_000_000
# HMAC-SHA-256(SECRET, "1800000000.evt_0123....<body>"), hex; fixed so partners can check theirs.
VECTOR = "08cc14234a8fb0e80e70be05e4a96ccfa511ac27c23274afca4e3bc290993c22"


def vector_headers(signature: str = VECTOR, timestamp: int = TIMESTAMP) -> dict[str, str]:
    return {
        "Service-Event-Id": EVENT_ID,
        "Service-Timestamp": str(timestamp),
        "Service-Signature": f"v1={signature}",
    }


def test_fixed_vector_is_what_the_service_signs() -> None:
    assert signed_headers(SECRET, TIMESTAMP, EVENT_ID, BODY) == vector_headers()
    independent = hmac.new(
        SECRET.encode(), f"{TIMESTAMP}.{EVENT_ID}.".encode() + BODY, hashlib.sha256
    ).hexdigest()
    assert independent == VECTOR


def test_fixed_vector_verifies_with_any_header_case() -> None:
    assert verify_signature(SECRET, vector_headers(), BODY, now=TIMESTAMP + 299)
    lowered = {k.lower(): v for k, v in vector_headers().items()}
    assert verify_signature(SECRET, lowered, BODY, now=TIMESTAMP - 299)


def test_rejects_tampering_wrong_secret_and_stale_timestamps() -> None:
    assert not verify_signature(SECRET, vector_headers(), BODY + b" ", now=TIMESTAMP)
    assert not verify_signature(SECRET + "x", vector_headers(), BODY, now=TIMESTAMP)
    assert not verify_signature(SECRET, vector_headers(), BODY, now=TIMESTAMP + 301)
    assert not verify_signature(SECRET, vector_headers(), BODY, now=TIMESTAMP - 301)
    other_id = {**vector_headers(), "Service-Event-Id": "evt_other"}
    assert not verify_signature(SECRET, other_id, BODY, now=TIMESTAMP)
    assert not verify_signature(SECRET, vector_headers("0" * 64), BODY, now=TIMESTAMP)
    assert not verify_signature(SECRET, {}, BODY, now=TIMESTAMP)


def test_accepts_one_matching_signature_among_several() -> None:
    headers = {**vector_headers(), "Service-Signature": f"v1={'0' * 64}, v1={VECTOR}"}
    assert verify_signature(SECRET, headers, BODY, now=TIMESTAMP)


def test_new_secrets_carry_the_prefix_and_enough_randomness() -> None:
    secret = new_secret()
    assert secret.startswith("whsec_") and len(secret) >= len("whsec_") + 32
    assert new_secret() != secret

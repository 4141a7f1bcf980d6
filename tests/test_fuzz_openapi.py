"""Issue 9.1: Schemathesis against our own OpenAPI document, over real HTTP to a running service.

Every operation of the schema is fuzzed with generated valid and invalid input by a sandbox `full`
key. Each response must be no 5xx, match the status, content type, headers and body schema that the
document gives, carry `Service-Request-Id`, and every error must be the spec-7 envelope.

`make test` runs a short pass on SQLite; `make fuzz` (PARTNER_API_FUZZ_DEEP=1) runs many more
examples on both stores.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from conftest import RunningService
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

DEEP = os.environ.get("PARTNER_API_FUZZ_DEEP", "") == "1"
MAX_EXAMPLES = 150 if DEEP else 8
STORES = ["sqlite", "postgres"] if DEEP else ["sqlite"]

# Figures for the README: operations fuzzed and requests sent, per store.
TRIED: Counter[str] = Counter()
STATUS: Counter[tuple[str, int]] = Counter()
OPERATIONS: dict[str, set[str]] = {}

pytestmark = [pytest.mark.fuzz, pytest.mark.parametrize("store_kind", STORES, indirect=True)]


def request_id_present(ctx: Any, response: schemathesis.Response, case: schemathesis.Case) -> None:
    assert response.headers.get("service-request-id"), "no Service-Request-Id header"


def errors_use_envelope(ctx: Any, response: schemathesis.Response, case: schemathesis.Case) -> None:
    if response.status_code < 400:
        return
    body = response.json()
    assert isinstance(body, dict) and isinstance(body.get("error"), dict), response.text
    error = body["error"]
    for key in ("code", "message", "request_id"):
        assert isinstance(error.get(key), str) and error[key], f"error.{key} missing: {body}"
    assert error["request_id"] == response.headers["service-request-id"][0]


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
    request_id_present,
    errors_use_envelope,
]


@pytest.fixture
def fuzz_target(service: RunningService, store_kind: str) -> Iterator[tuple[RunningService, str]]:
    # A generous allowance: the fuzzer is one partner sending thousands of requests quickly.
    org = service.new_org("Fuzz", rate_rps=100_000, rate_burst=100_000)
    yield service, service.new_key(org, "test", "full")
    print(f"\nfuzz {store_kind}: {len(OPERATIONS.get(store_kind, ()))} operations, "
          f"{TRIED[store_kind]} requests")
    for (label, status), n in sorted(STATUS.items()):
        print(label, status, n)


@pytest.fixture
def api_schema(fuzz_target: tuple[RunningService, str]) -> Any:
    service, secret = fuzz_target
    config = schemathesis.Config.from_dict(
        {
            "headers": {"Authorization": f"Bearer {secret}"},
            "generation": {
                "max-examples": MAX_EXAMPLES,
                "database": "none",
                "with-security-parameters": False,
            },
            "phases": {"stateful": {"enabled": False}},
        }
    )
    return schemathesis.openapi.from_url(f"{service.api}/schema/openapi.json", config=config)


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
def test_openapi_fuzz(case: schemathesis.Case, store_kind: str) -> None:
    TRIED[store_kind] += 1
    OPERATIONS.setdefault(store_kind, set()).add(case.operation.label)
    response = case.call_and_validate(checks=CHECKS)
    STATUS[(case.operation.label, response.status_code)] += 1

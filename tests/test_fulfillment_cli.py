"""`partner-api fulfillment list | report | retry` against the store, as an operator's shell
would run them (the same use cases as the gRPC FulfillmentService)."""

from __future__ import annotations

import json
from typing import Any

from conftest import ServiceFactory
from test_grpc_fulfillment import event_names, live_order

from cli.main import COMMANDS, _load_extensions, build_parser
from infra.clock import ManualClock


def run(service: Any, *argv: str) -> dict[str, Any]:
    _load_extensions()
    args = build_parser().parse_args(list(argv))
    result: dict[str, Any] = COMMANDS[(args.group, args.action)](args, service.container)
    return json.loads(json.dumps(result))  # what the CLI prints


def test_cli_lists_stuck_work_and_reports_steps(service_factory: ServiceFactory) -> None:
    clock = ManualClock()
    service = service_factory(clock, ["gateway", "projections"])
    order_id, _, _ = live_order(service)
    clock.advance(120)
    listed = run(service, "fulfillment", "list", "--stuck")
    assert [i["order_id"] for i in listed["items"]] == [order_id] and listed["items"][0]["stuck"]
    failed = run(
        service, "fulfillment", "report", order_id, "register", "failed",
        "--reason", "registrar down", "--operator", "bob",
    )
    assert failed["applied"] and failed["operator"] == "bob"
    assert run(service, "fulfillment", "retry", order_id, "register", "--operator", "bob")["applied"]
    done = run(service, "fulfillment", "report", order_id, "register", "done", "--operator", "bob")
    assert done["applied"] and done["order_status"] == "in_progress"
    assert not run(service, "fulfillment", "list", "--stuck")["items"]
    assert event_names(service, order_id) == ["Placed", "StepFailed", "StepRetried", "StepCompleted"]

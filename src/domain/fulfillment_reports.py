"""What an operator of the fulfillment team reported over gRPC, and who reported it.

One aggregate per call (event `FulfillmentReport.Recorded`), saved in the same transaction as
the order's own move, so the history says which operator moved an order and why. A report sent
with a request id gets an id derived from it: the same request again finds the first report
instead of moving the order twice.
"""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from eventsourcing.domain import Aggregate, event

_REPORT_NAMESPACE = uuid.UUID("6f2b8c1e-93d4-4a57-b0e6-1d7f2a9c4e85")

REPORT_STEP = "report_step"
RETRY_STEP = "retry_step"
MARK_DOMAIN_BURNED = "mark_domain_burned"


def report_id(request_id: str | None) -> uuid.UUID:
    return uuid.uuid5(_REPORT_NAMESPACE, request_id) if request_id else uuid.uuid4()


class FulfillmentReport(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Recorded: ClassVar[type[Aggregate.Event]]

    @staticmethod
    def create_id(*_: Any, request_id: str | None, **__: Any) -> uuid.UUID:
        return report_id(request_id)

    @event("Recorded")
    def __init__(
        self,
        *,
        org_id: str,
        environment: str,
        operator: str,
        action: str,
        subject: dict[str, Any],
        reason: str | None,
        request_id: str | None,
        result: dict[str, Any],
        at: float,
    ) -> None:
        self.org_id = org_id
        self.environment = environment
        self.operator = operator
        self.action = action
        self.subject = subject  # what was reported on: order_id, step, outcome or domain
        self.reason = reason
        self.request_id = request_id
        self.result = result  # applied, order_status, pending_action_id, job_id
        self.at = at

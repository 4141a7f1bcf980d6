"""How a fulfillment operator's report (`FulfillmentReport`) is answered: by the
FulfillmentService (`OperatorReport`, with the job as JSON) and the CLI."""

from __future__ import annotations

from typing import Any

import msgspec

from domain.fulfillment_reports import FulfillmentReport
from infra.clock import iso


class OperatorReport(msgspec.Struct, kw_only=True):
    id: str
    operator: str
    action: str
    applied: bool
    order_id: str
    step: str
    outcome: str
    order_status: str
    pending_action_id: str
    job_id: str
    job: dict[str, Any] | None  # the burned-domain job a `mark_domain_burned` started
    recorded_at: str
    replayed: bool


def report_view(report: FulfillmentReport, *, replayed: bool = False) -> OperatorReport:
    subject, result = report.subject, report.result
    return OperatorReport(
        id=str(report.id),
        operator=report.operator,
        action=report.action,
        applied=bool(result.get("applied")),
        order_id=subject.get("order_id", ""),
        step=subject.get("step", ""),
        outcome=subject.get("outcome", ""),
        order_status=result.get("order_status", ""),
        pending_action_id=result.get("pending_action_id") or "",
        job_id=result.get("job_id", ""),
        job=result.get("job"),
        recorded_at=iso(report.at),
        replayed=replayed,
    )

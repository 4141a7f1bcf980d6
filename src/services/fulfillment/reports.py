"""The fulfillment team's reports (gRPC FulfillmentService): a step done, failed or waiting for
partner input, a failed step retried, a domain burned.

Each report moves the order through its aggregate and is recorded as a `FulfillmentReport` that
names the operator, in the same save. Reports are safe to repeat: a step already where the
report puts it is recorded as not applied and nothing moves, and a report sent again with the
same `request_id` returns the first one without recording anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eventsourcing.domain import Aggregate

from domain.errors import DomainError, NotFound, invalid
from domain.fulfillment_reports import (
    MARK_DOMAIN_BURNED,
    REPORT_STEP,
    RETRY_STEP,
    FulfillmentReport,
    report_id,
)
from domain.orders import ACTION_REQUIRED, COMPLETED, FAILED, IN_PROGRESS, PURCHASE, Order
from domain.pending_actions import INPUT_FIELD
from infra.ids import parse_id
from services.fulfillment.burned_domains import burned_domain_job
from services.fulfillment.commands import MarkDomainBurned, ReportStep, RetryStep
from services.orders import steps
from services.orders.use_cases import apply_outcome, fail
from views.fulfillment_reports import OperatorReport, report_view
from views.pool import burned_job_view

if TYPE_CHECKING:
    from runtime.container import Container

DONE, STEP_FAILED, NEEDS_INPUT = "done", "failed", "needs_partner_input"
OUTCOMES = (DONE, STEP_FAILED, NEEDS_INPUT)
MAX_REASON = 500
MAX_REQUEST_ID = 200


def _request_id(value: str) -> str | None:
    value = (value or "").strip()
    if len(value) > MAX_REQUEST_ID:
        raise invalid(f"request_id must be at most {MAX_REQUEST_ID} characters.", "request_id")
    return value or None


def _reason(value: str, required: bool) -> str | None:
    value = (value or "").strip()
    if len(value) > MAX_REASON:
        raise invalid(f"reason must be at most {MAX_REASON} characters.", "reason")
    if required and not value:
        raise invalid("reason is required for this report.", "reason")
    return value or None


def _earlier(
    container: Container,
    request_id: str | None,
    action: str,
    subject: dict[str, object],
    reason: str | None,
) -> OperatorReport | None:
    """The report already recorded for this request id, or None. Another report under it (a
    different order, step, outcome, `fail_order`, input or reason) is a conflict; a report
    recorded before `fail_order` and `input_field` were kept compares on what it holds."""
    if request_id is None:
        return None
    found = container.store.find(report_id(request_id), FulfillmentReport)
    if not isinstance(found, FulfillmentReport):
        return None
    same = found.action == action and found.reason == reason and all(
        subject.get(key) == value for key, value in found.subject.items()
    )
    if not same:
        raise DomainError(
            "idempotency_conflict",
            "This request_id was already used for another report.",
            field="request_id",
        )
    return report_view(found, replayed=True)


def _load_order(container: Container, order_id: str) -> Order:
    uuid_ = parse_id("ord", order_id or "")
    if uuid_ is None:
        raise invalid("order_id must be an ord_ id.", "order_id")
    found = container.store.find(uuid_, Order)
    if not isinstance(found, Order):
        raise NotFound("order", field="order_id")
    return found


def _check_step(order: Order, step: str) -> None:
    if step not in steps.steps_for(order):
        names = ", ".join(steps.steps_for(order))
        raise invalid(f"step must be one of {names} for this order.", "step")


def _require_next(order: Order, step: str) -> None:
    """Only the order's next step can be reported on (the steps run in order)."""
    expected = steps.next_step(order)
    if order.status == IN_PROGRESS and step != expected:
        raise DomainError(
            "order_state_conflict",
            f"Step '{step}' is not the order's next step.",
            details={"status": order.status, "next_step": expected},
        )


def _record(
    container: Container,
    *,
    operator: str,
    action: str,
    subject: dict[str, object],
    reason: str | None,
    request_id: str | None,
    order: Order | None,
    result: dict[str, object],
    others: list[Aggregate],
    org: tuple[str, str],
    at: float,
) -> OperatorReport:
    report = FulfillmentReport(
        org_id=org[0],
        environment=org[1],
        operator=operator,
        action=action,
        subject=subject,
        reason=reason,
        request_id=request_id,
        result=result,
        at=at,
    )
    moved = [order] if order is not None and result.get("applied") else []
    container.unit_of_work.save(*moved, *others, report)
    return report_view(report)


def _apply_report(
    container: Container, order: Order, command: ReportStep, reason: str | None, field: str
) -> tuple[bool, list[Aggregate]]:
    """Move the order as the report says; (applied, other aggregates to save)."""
    step, outcome = command.step, command.outcome
    at = container.clock.now()
    if outcome == DONE:
        # The sandbox's steps are the worker's, all at once and unrecorded: a report on a
        # sandbox order, even one the worker has not reached yet, never records one.
        if step in order.steps_done or order.status == COMPLETED or order.environment == "test":
            return False, []
        _require_next(order, step)
        done = steps.run_step(step, order)
        order.record_step(step, done.domains, at)
        if steps.next_step(order) is None:
            order.complete(steps.completed_domains(order.domains), at)
        return True, []
    if outcome == STEP_FAILED and command.fail_order:
        if order.status == FAILED:
            return False, []
        # The report names no domain: every one of them may be at fault, none is picked again.
        every = [item["domain"] for item in order.domains]
        return True, fail(container, order, reason or "", at, every)
    if outcome == STEP_FAILED:
        if order.failed_step == step:
            return False, []
        _require_next(order, step)
        order.fail_step(step, reason or "", at)
        return True, []
    if order.status == ACTION_REQUIRED:
        return False, []
    _require_next(order, step)
    action: steps.ActionRequest = {
        "kind": field,
        "field": field,
        "message": reason or "",  # required for this outcome (`_reason`)
        "details": {"step": step},
    }
    return True, apply_outcome(container, order, steps.Outcome(order.domains, action=action), at)


def report_step(container: Container, operator: str, command: ReportStep) -> OperatorReport:
    order_id, step, outcome = command.order_id, command.step, command.outcome
    if outcome not in OUTCOMES:
        raise invalid(f"outcome must be one of {', '.join(OUTCOMES)}.", "outcome")
    why = _reason(command.reason, required=outcome != DONE)
    field = command.input_field or "profile_picture_url"
    if outcome == NEEDS_INPUT and field not in INPUT_FIELD:
        raise invalid(f"input_field must be one of {', '.join(INPUT_FIELD)}.", "input_field")
    request = _request_id(command.request_id)
    subject: dict[str, object] = {
        "order_id": order_id,
        "step": step,
        "outcome": outcome,
        "fail_order": command.fail_order,
        "input_field": field,
    }

    def run() -> OperatorReport:
        earlier = _earlier(container, request, REPORT_STEP, subject, why)
        if earlier is not None:
            return earlier
        order = _load_order(container, order_id)
        _check_step(order, step)
        if outcome == NEEDS_INPUT and order.kind == PURCHASE:
            # The one input a partner gives (a profile picture) is for mailboxes, which a bare
            # purchase has none of.
            raise invalid("A domain purchase waits on no partner input; report the step done "
                          "or failed.", "outcome")
        # A sandbox order moves on its organization's clock, as the worker moves it.
        with container.clock.scoped(order.org_id, order.environment):
            applied, others = _apply_report(container, order, command, why, field)
        result = {
            "applied": applied,
            "order_status": order.status,
            "pending_action_id": order.pending_action_id,
        }
        return _record(
            container,
            operator=operator,
            action=REPORT_STEP,
            subject=subject,
            reason=why,
            request_id=request,
            order=order,
            result=result,
            others=others,
            org=(order.org_id, order.environment),
            at=container.clock.now(),
        )

    return container.unit_of_work.retrying(run)


def retry_step(container: Container, operator: str, command: RetryStep) -> OperatorReport:
    """Clear a failed step so the worker runs it again; a step not failed (any more) is not
    applied."""
    order_id, step = command.order_id, command.step
    request = _request_id(command.request_id)
    subject: dict[str, object] = {"order_id": order_id, "step": step, "outcome": "retried"}

    def run() -> OperatorReport:
        earlier = _earlier(container, request, RETRY_STEP, subject, None)
        if earlier is not None:
            return earlier
        order = _load_order(container, order_id)
        _check_step(order, step)
        applied = not (order.status == IN_PROGRESS and order.failed_step is None)
        if applied:
            with container.clock.scoped(order.org_id, order.environment):
                order.retry_step(step, container.clock.now())
        return _record(
            container,
            operator=operator,
            action=RETRY_STEP,
            subject=subject,
            reason=None,
            request_id=request,
            order=order,
            result={"applied": applied, "order_status": order.status},
            others=[],
            org=(order.org_id, order.environment),
            at=container.clock.now(),
        )

    return container.unit_of_work.retrying(run)


def mark_domain_burned(
    container: Container, operator: str, command: MarkDomainBurned
) -> OperatorReport:
    """Start a burned-domain job (`brj_`, it names the operator too) and record the report,
    in one save: a retry with the same request id finds the report and starts nothing."""
    request = _request_id(command.request_id)
    subject: dict[str, object] = {"domain": (command.domain or "").strip().lower()}
    why = (command.reason or "").strip() or None

    def run() -> OperatorReport:
        earlier = _earlier(container, request, MARK_DOMAIN_BURNED, subject, why)
        if earlier is not None:
            return earlier
        job, changed = burned_domain_job(
            container, domain=command.domain, operator=operator, reason=command.reason
        )
        view = burned_job_view(job)
        result = {"applied": True, "job_id": view["id"], "job": view}
        return _record(
            container,
            operator=operator,
            action=MARK_DOMAIN_BURNED,
            subject=subject,
            reason=why,
            request_id=request,
            order=None,
            result=result,
            others=[job, *changed],
            org=(job.org_id, job.environment),
            at=container.clock.now(),
        )

    return container.unit_of_work.retrying(run)

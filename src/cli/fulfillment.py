"""`partner-api fulfillment list | report | retry`: the FulfillmentService's work list and
step reports from a shell, run against the configured store (the operator is `--operator`,
else the login name)."""

from __future__ import annotations

import argparse
import getpass
from typing import Any

from cli.main import EXTENSIONS, command
from runtime.container import Container
from services import fulfillment_reports as reports
from services.fulfillment_work import list_work


def _operator(args: argparse.Namespace) -> str:
    return str(args.operator or getpass.getuser() or "operator")


def _add_commands(groups: Any) -> None:
    fulfillment = groups.add_parser("fulfillment").add_subparsers(dest="action", required=True)
    listing = fulfillment.add_parser("list")
    listing.add_argument("--stuck", action="store_true", help="only work idle past the threshold")
    listing.add_argument("--stuck-after", type=float, default=0.0, help="seconds; 0: the default")
    listing.add_argument("--org", default="")
    report = fulfillment.add_parser("report")
    report.add_argument("order_id")
    report.add_argument("step")
    report.add_argument("outcome", choices=reports.OUTCOMES)
    report.add_argument("--reason", default="")
    report.add_argument("--fail-order", action="store_true")
    report.add_argument("--request-id", default="")
    report.add_argument("--operator", default=None)
    retry = fulfillment.add_parser("retry")
    retry.add_argument("order_id")
    retry.add_argument("step")
    retry.add_argument("--request-id", default="")
    retry.add_argument("--operator", default=None)


EXTENSIONS.append(_add_commands)


@command("fulfillment", "list")
def fulfillment_list(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    items, threshold = list_work(
        c, stuck_only=args.stuck, stuck_after=args.stuck_after, org_id=args.org
    )
    return {"stuck_after_seconds": threshold, "items": items}


@command("fulfillment", "report")
def fulfillment_report(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    return reports.report_step(
        c,
        operator=_operator(args),
        order_id=args.order_id,
        step=args.step,
        outcome=args.outcome,
        reason=args.reason,
        fail_order=args.fail_order,
        request_id=args.request_id,
    )


@command("fulfillment", "retry")
def fulfillment_retry(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    return reports.retry_step(
        c, operator=_operator(args), order_id=args.order_id, step=args.step, request_id=args.request_id
    )

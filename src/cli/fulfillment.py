"""`partner-api fulfillment list | report | retry`: the FulfillmentService's work list and
step reports from a shell, run against the configured store (the operator is `--operator`,
else the login name)."""

from __future__ import annotations

import argparse
import getpass
from typing import Any

import msgspec

from cli.help import add_command, add_group
from cli.main import EXTENSIONS, command
from runtime.container import Container
from services.fulfillment import reports
from services.fulfillment.commands import ListWork, ReportStep, RetryStep
from services.fulfillment.work import list_work


def _operator(args: argparse.Namespace) -> str:
    return str(args.operator or getpass.getuser() or "operator")


def _add_commands(groups: Any) -> None:
    fulfillment = add_group(
        groups,
        "fulfillment",
        "the fulfillment team's work list and step reports",
        "partner-api fulfillment list --stuck",
    )
    listing = add_command(
        fulfillment,
        "list",
        "orders in progress, waiting for the partner or being cancelled",
        "partner-api fulfillment list",
        "partner-api fulfillment list --stuck --stuck-after 600 --org org_...",
    )
    listing.add_argument("--stuck", action="store_true", help="only work idle past the threshold")
    listing.add_argument(
        "--stuck-after",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="idle seconds that make work stuck (default: ten provisioning steps, at least 60)",
    )
    listing.add_argument("--org", default="", metavar="ORG_ID", help="only this organization")
    report = add_command(
        fulfillment,
        "report",
        "report the result of an order's next step",
        "partner-api fulfillment report ord_... dns done",
        "partner-api fulfillment report ord_... mailboxes failed --reason 'provider down'",
    )
    report.add_argument("order_id", help="ord_... id")
    report.add_argument("step", help="the step reported: register, dns, mailboxes or sequencer")
    report.add_argument("outcome", choices=reports.OUTCOMES, help="what happened to the step")
    report.add_argument(
        "--reason", default="", help="why (required for failed and needs_partner_input)"
    )
    report.add_argument(
        "--fail-order",
        action="store_true",
        help="with failed: fail the whole order now (refunded) instead of waiting for a retry",
    )
    _report_options(report)
    retry = add_command(
        fulfillment,
        "retry",
        "run a failed step again",
        "partner-api fulfillment retry ord_... mailboxes",
    )
    retry.add_argument("order_id", help="ord_... id")
    retry.add_argument("step", help="the failed step")
    _report_options(retry)


def _report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--request-id",
        default="",
        help="the same id again returns the first report and changes nothing",
    )
    parser.add_argument(
        "--operator", default=None, help="who reports, recorded on the event (default: login name)"
    )


EXTENSIONS.append(_add_commands)


@command("fulfillment", "list")
def fulfillment_list(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    query = ListWork(stuck_only=args.stuck, stuck_after_seconds=args.stuck_after, org_id=args.org)
    printed: dict[str, Any] = msgspec.to_builtins(list_work(c, query))
    return printed


@command("fulfillment", "report")
def fulfillment_report(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    command = ReportStep(
        order_id=args.order_id,
        step=args.step,
        outcome=args.outcome,
        reason=args.reason,
        fail_order=args.fail_order,
        request_id=args.request_id,
    )
    printed: dict[str, Any] = msgspec.to_builtins(reports.report_step(c, _operator(args), command))
    return printed


@command("fulfillment", "retry")
def fulfillment_retry(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    command = RetryStep(order_id=args.order_id, step=args.step, request_id=args.request_id)
    printed: dict[str, Any] = msgspec.to_builtins(reports.retry_step(c, _operator(args), command))
    return printed

"""`partner-api audit replay | verify | export --org ORG`: the auditor's commands.

A detected difference or tampering still prints its one JSON object, then exits 1, so a
scheduled audit fails loudly.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from typing import Any

from audit.chain import verify_and_seal
from audit.export import export_organization
from audit.replay import replay
from cli.help import add_command, add_group
from cli.main import EXTENSIONS, command
from domain.errors import invalid
from projections.follower import TrackingMoved
from runtime.container import Container

BAR_WIDTH = 30


class ProgressBar:
    """A one-line bar on stderr, redrawn at most ten times a second."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream or sys.stderr
        self._drawn = 0.0

    def __call__(self, position: int, total: int) -> None:
        now = time.monotonic()
        if position < total and now - self._drawn < 0.1:
            return
        self._drawn = now
        fraction = min(1.0, position / total) if total else 1.0
        filled = int(BAR_WIDTH * fraction)
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        self.stream.write(f"\rreplay [{bar}] {fraction:6.1%} {position}/{total}")
        if position >= total:
            self.stream.write("\n")
        self.stream.flush()


def _fail_after_printing(result: dict[str, Any]) -> None:
    print(json.dumps(result))
    raise SystemExit(1)


@command("audit", "replay")
def audit_replay(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    # The live read models first take in what was stored while no projections ran (CLI
    # commands with the service down), so the replay covers the whole history. With a
    # service running, its follower may commit an overlapping batch first: ours rolls back
    # and the service's own catch-up stands.
    with contextlib.suppress(TrackingMoved):
        c.read_models.catch_up()
    report = replay(c.settings, c.store, c.read_models, ProgressBar()).as_json()
    if not report["identical"]:
        _fail_after_printing(report)
    return report


@command("audit", "verify")
def audit_verify(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    report = verify_and_seal(c.store, c.ops_db).as_json()
    if not report["intact"]:
        _fail_after_printing(report)
    return report


@command("audit", "export")
def audit_export(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    if args.output == "-":
        # The history itself is the output; the summary goes where the progress would.
        count = export_organization(c.store, args.org, sys.stdout)
        sys.stdout.flush()
        print(json.dumps({"org_id": args.org, "events": count}), file=sys.stderr)
        raise SystemExit(0)
    try:
        out = open(args.output, "w", encoding="utf-8")  # noqa: SIM115 (closed below)
    except OSError as error:  # the operator's mistake, not ours: say which and why
        raise invalid(f"cannot write {args.output}: {error.strerror}", "output") from None
    with out:
        count = export_organization(c.store, args.org, out)
    return {"org_id": args.org, "events": count, "output": args.output}


def _add_audit(groups: Any) -> None:
    audit = add_group(
        groups, "audit", "replay, verify and export the event history", "partner-api audit verify"
    )
    add_command(
        audit,
        "replay",
        "rebuild every read model from the history and compare with the live ones "
        "(exit 1 on a difference)",
        "partner-api audit replay",
    )
    add_command(
        audit,
        "verify",
        "check the hash chain over the stored events (exit 1 on a changed or deleted row)",
        "partner-api audit verify",
    )
    export = add_command(
        audit,
        "export",
        "one organization's history as JSON lines",
        "partner-api audit export --org org_... > acme.jsonl",
        "partner-api audit export --org org_... --output acme.jsonl",
    )
    export.add_argument("--org", required=True, metavar="ORG_ID", help="org_... id")
    export.add_argument(
        "--output", default="-", metavar="FILE", help="file to write (default: stdout)"
    )


EXTENSIONS.append(_add_audit)

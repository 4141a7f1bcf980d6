"""What the fulfillment team asks (gRPC FulfillmentService, `partner-api fulfillment`), as the
servicer and the CLI turn their requests into it. The operator who asks is passed beside the
command, as a partner's principal is."""

from __future__ import annotations

import msgspec


class ListWork(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Busy orders, longest idle first. `stuck_after_seconds` 0: ten provisioning steps (at
    least 60); `org_id` "": every organization."""

    stuck_only: bool = False
    stuck_after_seconds: float = 0.0
    org_id: str = ""


class StreamWork(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The work list, then (with `follow`) every change to it as it happens."""

    stuck_after_seconds: float = 0.0
    org_id: str = ""
    follow: bool = False


class ReportStep(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The result of an order's next step: `done`, `failed` (with `fail_order`: the whole
    order, refunded) or `needs_partner_input` (`input_field`); a reason unless done."""

    order_id: str
    step: str
    outcome: str
    reason: str = ""
    input_field: str = ""
    fail_order: bool = False
    request_id: str = ""


class RetryStep(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Run a failed step again."""

    order_id: str
    step: str
    request_id: str = ""


class MarkDomainBurned(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A domain (by name) burned at its provider: a burned-domain job (`brj_`)."""

    domain: str
    reason: str
    request_id: str = ""

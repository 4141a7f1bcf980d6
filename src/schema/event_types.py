"""Every public event type: spec 6's catalog of 18, the `pool.*` family and `webhook.test`.

The mappers emit these names; `GET /events?type=` takes only these, so a typo is a 400 rather
than an empty list, and the OpenAPI document lists them.
"""

from __future__ import annotations

SPEC_TYPES = (
    "order.in_progress",
    "order.completed",
    "order.failed",
    "order.action_required",
    "order.cancel_scheduled",
    "order.cancelled",
    "domain.connected",
    "domain.action_required",
    "domain.forwarding_updated",
    "domain.forwarding_failed",
    "domain_import.completed",
    "domain_import.failed",
    "domain_import.action_required",
    "swap.created",
    "swap.in_progress",
    "swap.completed",
    "swap.failed",
    "swap.action_required",
)
POOL_TYPES = (
    "pool.domain_added",
    "pool.domain_removed",
    "pool.domain_burned",
    "pool.domain_retired",
    "pool.attach_in_progress",
    "pool.attach_completed",
    "pool.attach_failed",
    "pool.release_in_progress",
    "pool.release_completed",
    "pool.replacement_completed",
    "pool.replacement_failed",
    "pool.burned_domain_job_completed",
)
EVENT_TYPES = (*SPEC_TYPES, *POOL_TYPES, "webhook.test")

"""Replacement of a burned pool-assigned domain (`prp_`).

The burned domain's workspace and client get one available pool domain in its place, in the
same step: the new one is reserved and assigned under the replacement's id, the burned one
retired from the pool. With no available domain the replacement is recorded `failed` (reason
`insufficient_inventory`) and the burned domain stays assigned until the partner releases it.

Answer: `views/pool.py` `ReplacementOut`; route: `GET /pool/replacements/{id}` in
`gateway/rest/pool.py`; webhooks `pool.replacement_*`: `webhooks/pool_events.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.errors import NotFound
from domain.pool_domains import PoolDomain
from domain.pool_replacements import COMPLETED, FAILED, PoolReplacement
from infra.ids import parse_id, public_id
from services.pool.records import take_available
from views.pool import ReplacementOut, replacement_view

if TYPE_CHECKING:
    from runtime.container import Container


def replace_burned(
    container: Container, burned: PoolDomain, job_id: str | None, at: float, burned_before: bool = False
) -> tuple[PoolReplacement, list[PoolDomain]]:
    """The replacement (unsaved) and the pool domains it changed (unsaved). `burned_before`:
    the domain was burned and still assigned already, so an earlier replacement failed."""
    found = take_available(container, burned.tenant, 1, excluded={burned.name})
    replacement = PoolReplacement(
        org_id=burned.org_id,
        environment=burned.environment,
        job_id=job_id,
        workspace_id=burned.workspace_id,
        client_id=burned.client_id,
        burned_domain={"id": burned.dom_id or "", "domain": burned.name},
        replacement_domain=(
            {"id": found[0].dom_id or "", "domain": found[0].name} if found else None
        ),
        status=COMPLETED if found else FAILED,
        reason=None if found else "insufficient_inventory",
        at=at,
        ends_replacement_needed=bool(found) and burned_before,
    )
    if not found:
        return replacement, []
    replacement_id = public_id("prp", replacement.id)
    new = found[0]
    new.reserve(
        reservation_id=replacement_id,
        workspace_id=burned.workspace_id or "",
        client_id=burned.client_id,
        at=at,
    )
    new.assign(replacement_id, at)
    burned.retire(replacement_id, at)
    return replacement, [new]


def load_replacement(container: Container, tenant: str, replacement_id: str) -> ReplacementOut:
    found = container.store.find(parse_id("prp", replacement_id), PoolReplacement)
    if not isinstance(found, PoolReplacement) or found.tenant != tenant:
        raise NotFound("pool replacement")
    return replacement_view(found)

"""Bundles: saved order templates sized by monthly sending volume.

The sizing result (effective split, inboxes per domain, required domains) is computed by the
service before each event and stored in it: an order placed from a bundle sees exactly what the
partner saw, even if the sizing rule is later refined.
"""

from __future__ import annotations

from typing import Any, ClassVar

from eventsourcing.domain import Aggregate, event

from domain.creation_ids import created_as

ACTIVE = "active"
ARCHIVED = "archived"
STATUSES = (ACTIVE, ARCHIVED)


class Bundle(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Edited: ClassVar[type[Aggregate.Event]]
    Archived: ClassVar[type[Aggregate.Event]]

    create_id = created_as("bundle")

    @event("Created")
    def __init__(
        self,
        *,
        org_id: str,
        environment: str,
        terms: dict[str, Any],
        sizing: dict[str, Any],
        created_at: float,
    ) -> None:
        self.org_id = org_id
        self.environment = environment
        self.status = ACTIVE
        self.created_at = created_at
        self.updated_at = created_at
        self._apply_terms(terms, sizing)

    def _apply_terms(self, terms: dict[str, Any], sizing: dict[str, Any]) -> None:
        self.name: str = terms["name"]
        self.monthly_sending_volume: int = terms["monthly_sending_volume"]
        self.send_on_weekends: bool = terms["send_on_weekends"]
        self.suite_a_percent: int | None = terms["suite_a_percent"]
        self.suite_b_percent: int | None = terms["suite_b_percent"]
        # None: the partner left it to the sizing rule, so an edit recomputes it.
        self.requested_suite_a_licenses: int | None = terms["suite_a_licenses"]
        self.effective: dict[str, int] = dict(sizing["effective"])
        self.suite_a_licenses: int = sizing["suite_a_inboxes_per_domain"]
        self.suite_b_inboxes_per_domain: int = sizing["suite_b_inboxes_per_domain"]
        self.inboxes: dict[str, int] = dict(sizing["inboxes"])
        self.required_domains: dict[str, int] = dict(sizing["required_domains"])

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"

    @property
    def suite_a_inboxes_per_domain(self) -> int:
        """The list response's name for `suite_a_licenses` (spec 2.2)."""
        return self.suite_a_licenses

    @property
    def is_active(self) -> bool:
        return self.status == ACTIVE

    def owned_by(self, org_id: str, environment: str) -> bool:
        return self.org_id == org_id and self.environment == environment

    def terms(self) -> dict[str, Any]:
        """What the partner chose, as a create or edit request would carry it."""
        return {
            "name": self.name,
            "monthly_sending_volume": self.monthly_sending_volume,
            "send_on_weekends": self.send_on_weekends,
            "suite_a_percent": self.suite_a_percent,
            "suite_b_percent": self.suite_b_percent,
            "suite_a_licenses": self.requested_suite_a_licenses,
        }

    def edit(self, terms: dict[str, Any], sizing: dict[str, Any], at: float) -> None:
        self._edited(terms=terms, sizing=sizing, at=at)

    @event("Edited")
    def _edited(self, *, terms: dict[str, Any], sizing: dict[str, Any], at: float) -> None:
        self._apply_terms(terms, sizing)
        self.updated_at = at

    def archive(self, at: float) -> None:
        if self.status != ARCHIVED:
            self._archived(at=at)

    @event("Archived")
    def _archived(self, *, at: float) -> None:
        self.status = ARCHIVED
        self.updated_at = at

"""What partners ask of their bundles, as the gateway decodes it.

The bounds are documentation only (`extra_json_schema`): `services.catalog.sizing` checks them
itself, to answer the spec-7 envelope with its own message and `field`; msgspec does not
enforce them.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from schema.rules import TEXT, documented
from services.catalog.sizing import MAX_MONTHLY_VOLUME, MAX_SUITE_A_INBOXES_PER_DOMAIN

MAX_NAME = 200


def _range(least: int, most: int) -> msgspec.Meta:
    return documented(minimum=least, maximum=most)


Volume = Annotated[int, _range(1, MAX_MONTHLY_VOLUME)]
Percent = Annotated[int | None, _range(0, 100)]
Licenses = Annotated[int | None, _range(1, MAX_SUITE_A_INBOXES_PER_DOMAIN)]
Edit = int | None | msgspec.UnsetType  # an edited integer: unset when not sent
BundleName = Annotated[str, documented(min_length=1, max_length=MAX_NAME, pattern=TEXT)]


class CreateBundle(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /bundles`: an order template, sized by monthly sending volume. Also the terms a
    bundle holds after an edit (`UpdateBundle` applied to them)."""

    name: BundleName
    monthly_sending_volume: Volume
    send_on_weekends: bool
    suite_a_percent: Percent = None
    suite_b_percent: Percent = None
    suite_a_licenses: Licenses = None


class UpdateBundle(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Only the properties sent change; a null percent or `suite_a_licenses` returns to the
    sizing rule's value."""

    # These three may be left out, not set to null (400 with the property named in `field`).
    name: BundleName | msgspec.UnsetType = msgspec.UNSET
    monthly_sending_volume: Annotated[int | msgspec.UnsetType, _range(1, MAX_MONTHLY_VOLUME)] = (
        msgspec.UNSET
    )
    send_on_weekends: bool | msgspec.UnsetType = msgspec.UNSET
    suite_a_percent: Annotated[Edit, _range(0, 100)] = msgspec.UNSET
    suite_b_percent: Annotated[Edit, _range(0, 100)] = msgspec.UNSET
    suite_a_licenses: Annotated[Edit, _range(1, MAX_SUITE_A_INBOXES_PER_DOMAIN)] = msgspec.UNSET

    def changes(self) -> dict[str, str | int | bool | None]:
        """The properties sent, by name."""
        return {
            name: value
            for name, value in msgspec.structs.asdict(self).items()
            if value is not msgspec.UNSET
        }

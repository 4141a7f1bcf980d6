"""The mailbox names a partner sends (`personas` on an order or a user-names swap), checked
once for both (`commands.MAX_NAME_LENGTH` says why names are held short)."""

from __future__ import annotations

from collections.abc import Sequence

from domain.errors import invalid
from services.orders.commands import MAX_NAME_LENGTH, MAX_PERSONAS, Persona


def checked_personas(personas: Sequence[Persona], field: str = "personas") -> list[dict[str, str]]:
    """The personas with their names trimmed, or `invalid_request` naming the first bad one."""
    if len(personas) > MAX_PERSONAS:
        raise invalid(f"Send at most {MAX_PERSONAS} personas.", field)
    cleaned = []
    for index, persona in enumerate(personas):
        names = {"first_name": persona.first_name.strip(), "last_name": persona.last_name.strip()}
        for key, value in names.items():
            if not value:
                raise invalid(f"{key} must not be empty.", f"{field}[{index}].{key}")
            if len(value) > MAX_NAME_LENGTH:
                raise invalid(
                    f"{key} must be at most {MAX_NAME_LENGTH} characters.", f"{field}[{index}].{key}"
                )
        cleaned.append(names)
    return cleaned

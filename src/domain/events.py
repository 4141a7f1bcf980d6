"""Naming domain events for the code that reacts to them (read models, webhook mappers,
workers): by class, so a renamed or removed event fails at import and under mypy."""

from __future__ import annotations

from eventsourcing.domain import DomainEvent


def event_names(*events: type[DomainEvent]) -> tuple[str, ...]:
    """The qualified names (`Order.Placed`) of these event classes: the suffix of their
    notification topic, and what `type(event).__qualname__` gives for a stored event."""
    for candidate in events:
        if not (isinstance(candidate, type) and issubclass(candidate, DomainEvent)):
            raise TypeError(f"not a domain event class: {candidate!r}")
    return tuple(candidate.__qualname__ for candidate in events)

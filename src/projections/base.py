"""Read models: tables written by event handlers, read by separate view functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from eventsourcing.domain import DomainEvent, DomainEventProtocol

from domain.events import event_names
from infra.database import create_if_missing

EventHandler = Callable[[Any, Any, Any, int], None]


def on(*events: type[DomainEvent]) -> Callable[[EventHandler], EventHandler]:
    """Mark a read-model method as the handler of these event classes; dispatch is by their
    qualified name (`Order.Placed`). Anything but an event class is a TypeError."""
    names = event_names(*events)

    def mark(func: EventHandler) -> EventHandler:
        func.__dict__.setdefault("_handles", []).extend(names)
        return func

    return mark


class ReadModel:
    """Subclasses declare `tables`, `ddl` and `@on(Event)` methods taking (cursor, event,
    position); position is the event's notification id, a stable order for keyset paging."""

    name: ClassVar[str] = ""
    tables: ClassVar[tuple[str, ...]] = ()
    ddl: ClassVar[tuple[str, ...]] = ()
    # Rough cost per event of a typical history, relative to the others: how a replay splits
    # the models across processes (`audit.forked_replay`). A poor guess only makes one
    # process finish later.
    replay_weight: ClassVar[int] = 1
    _dispatch: ClassVar[dict[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dispatch: dict[str, str] = {}
        for klass in reversed(cls.__mro__):
            for attr, value in vars(klass).items():
                for event_name in getattr(value, "_handles", ()):
                    dispatch[event_name] = attr
        cls._dispatch = dispatch

    def attach(self, store: Any) -> None:
        """Called once with the event store, for models that must load aggregates."""

    def replaying(self) -> None:
        """Called on an audit replay's own instances before their first event: their tables
        are fresh and written by them alone, so they may keep what they wrote in memory
        rather than read it back, and hold writes back until `write_held`."""

    def write_held(self, cur: Any) -> None:
        """Called by a replay before each batch commits: write what `replaying` held back."""

    def create_tables(self, cur: Any) -> None:
        for statement in self.ddl:
            create_if_missing(cur, statement)

    def handles(self, event_name: str) -> bool:
        """Whether `apply` does anything for events named `Aggregate.Event`."""
        return event_name in self._dispatch

    def handler(self, event_name: str) -> Callable[[Any, Any, int], None] | None:
        """What `apply` runs for events named `Aggregate.Event`, looked up once (a replay asks
        per event type, not per event); None if nothing."""
        if not self.handles(event_name):
            return None
        method = self._dispatch.get(event_name)
        if method is None or type(self).apply is not ReadModel.apply:
            return self.apply  # the model dispatches by itself
        handler: Callable[[Any, Any, int], None] = getattr(self, method)
        return handler

    def apply(self, cur: Any, event: DomainEventProtocol[Any], position: int) -> None:
        method = self._dispatch.get(type(event).__qualname__)
        if method is not None:
            getattr(self, method)(cur, event, position)

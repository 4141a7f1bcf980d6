"""Read models and webhook mappers name the events they handle by class: anything else is
refused when the module loads, and what they register is the classes' qualified names (the
suffix of a notification's topic, which dispatch and replay filters look up)."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import pytest
from eventsourcing.domain import Aggregate, DomainEvent

import domain
import projections
import webhooks
from domain.api_keys import ApiKey
from domain.orders import Order
from projections.base import ReadModel, on
from webhooks.public_events import MAPPERS, maps


def _load_all(package: Any) -> None:
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")


def _event_classes_by_name() -> dict[str, type[DomainEvent]]:
    """Every event class of every aggregate in `domain/`, by qualified name."""
    _load_all(domain)
    found: dict[str, type[DomainEvent]] = {}
    pending = list(Aggregate.__subclasses__())
    while pending:
        aggregate = pending.pop()
        pending.extend(aggregate.__subclasses__())
        for value in vars(aggregate).values():
            if isinstance(value, type) and issubclass(value, DomainEvent):
                found[value.__qualname__] = value
    return found


def _read_models() -> list[type[ReadModel]]:
    _load_all(projections)
    models, pending = [], list(ReadModel.__subclasses__())
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        models.append(model)
    return models


@pytest.mark.parametrize("not_an_event", ["ApiKey.Issued", int, ApiKey, None])
def test_a_handler_registered_with_anything_but_an_event_class_is_refused(
    not_an_event: Any,
) -> None:
    with pytest.raises(TypeError):
        on(ApiKey.Issued, not_an_event)
    with pytest.raises(TypeError):
        maps(not_an_event)


def test_a_read_model_registers_its_handlers_under_the_classes_qualified_names() -> None:
    class Keys(ReadModel):
        @on(ApiKey.Issued, ApiKey.Revoked)
        def key_changed(self, cur: Any, event: Any, position: int) -> None: ...

        @on(Order.Placed)
        def order_placed(self, cur: Any, event: Any, position: int) -> None: ...

    assert Keys._dispatch == {
        "ApiKey.Issued": "key_changed",
        "ApiKey.Revoked": "key_changed",
        "Order.Placed": "order_placed",
    }
    assert Keys().handles(Order.Placed.__qualname__)


def test_every_registry_key_is_the_qualified_name_of_a_domain_event_class() -> None:
    events = _event_classes_by_name()
    _load_all(webhooks)
    assert MAPPERS
    assert set(MAPPERS) <= set(events)
    models = [model for model in _read_models() if model._dispatch]
    assert len(models) >= 7
    for model in models:
        assert set(model._dispatch) <= set(events), model.__name__
    assert events["Order.Placed"] is Order.Placed

"""The domains read model rewrites an order's `domain_usage` rows only when the names it holds
changed (most of an order's events, its completion among them, leave them as they were)."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

from domain.orders import PURCHASE
from projections.domains import DomainInventory

ORDER_ID = uuid.uuid4()


class Recording:
    def __init__(self) -> None:
        self.sent: list[tuple[str, tuple[Any, ...]]] = []

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> Recording:
        self.sent.append((sql.split()[0], params))
        return self


class Versions:
    """A store whose `at_version` built only the versions given."""

    def __init__(self, built: dict[int, Any]) -> None:
        self.built = built

    def built_version(self, aggregate_id: uuid.UUID, version: int) -> Any | None:
        assert aggregate_id == ORDER_ID
        return self.built.get(version)


def order(status: str, *names: str, kind: str = "order") -> Any:
    items = [{"domain": name, "suite": "suite_a"} for name in names]
    return SimpleNamespace(kind=kind, status=status, held_items=items)


def rewrites(before: Any | None, after: Any) -> list[tuple[str, tuple[Any, ...]]]:
    model = DomainInventory()
    model.attach(Versions({} if before is None else {1: before}))
    cur = Recording()
    event = SimpleNamespace(originator_id=ORDER_ID, originator_version=2)
    model._record_usage(cur, "ord_x", after, event)
    return cur.sent


def test_an_event_that_leaves_the_names_as_they_were_writes_nothing() -> None:
    assert rewrites(order("in_progress", "a.com"), order("completed", "a.com")) == []


def test_names_that_changed_are_rewritten() -> None:
    assert rewrites(order("completed", "a.com"), order("completed", "b.com")) == [
        ("DELETE", ("ord_x",)),
        ("INSERT", ("ord_x", "b.com", "suite_a")),
    ]


def test_an_order_that_stops_being_active_lets_its_names_go() -> None:
    assert rewrites(order("completed", "a.com"), order("cancelled", "a.com")) == [
        ("DELETE", ("ord_x",)),
    ]


def test_without_the_version_before_built_here_the_names_are_rewritten() -> None:
    assert rewrites(None, order("completed", "a.com")) == [
        ("DELETE", ("ord_x",)),
        ("INSERT", ("ord_x", "a.com", "suite_a")),
    ]


def test_a_purchase_holds_no_names_for_a_suite() -> None:
    assert rewrites(None, order("completed", "a.com", kind=PURCHASE)) == [("DELETE", ("ord_x",))]

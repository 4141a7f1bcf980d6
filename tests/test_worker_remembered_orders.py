"""The fulfillment worker moves an order as its follower read it from the log, without loading
it again; an order another writer moved meanwhile is moved from the store instead, once."""

from __future__ import annotations

import time

import pytest
from conftest import ServiceFactory
from eventsourcing.persistence import RecordConflictError
from test_orders_sandbox import counts, new_workspace, place, wait_order
from test_store_ordering import Tally

from domain.orders import Order
from infra.ids import parse_id
from infra.store import EventStore, eventstore_env
from workers.orders import STEP, FulfillmentWorker

NO_WORKER = ["projections"]


def test_the_store_rebuilds_what_this_process_read(service_factory: ServiceFactory) -> None:
    service = service_factory(roles=NO_WORKER)
    # Stores of their own: the service's followers would read the other process's save into
    # the service store's histories at a moment of their choosing.
    store = EventStore(eventstore_env(service.container.settings))
    other = EventStore(eventstore_env(service.container.settings))
    try:
        _rebuilds_only_what_it_read(store, other)
    finally:
        other.close()
        store.close()


def _rebuilds_only_what_it_read(store: EventStore, other: EventStore) -> None:
    store.keep_histories()
    tally = Tally(0)
    tally.count_up()
    store.save(tally)
    rebuilt = store.rebuilt(tally.id)
    assert rebuilt is not tally and (rebuilt.count, rebuilt.version) == (1, 2)
    rebuilt.count_up()  # a fresh object: saving it moves the stored aggregate on
    store.save(rebuilt)
    assert store.get(tally.id).count == 2
    # Another process's save is not among what this one read: a save from the stale
    # rebuild fails on its version instead of overwriting it.
    elsewhere = other.get(tally.id)
    elsewhere.count_up()
    other.save(elsewhere)
    stale = store.rebuilt(tally.id)
    assert stale.version == 3
    stale.count_up()
    with pytest.raises(RecordConflictError):
        store.save(stale)
    assert store.rebuilt(Tally(5).id) is None  # never read nor written here


def test_an_order_moved_meanwhile_is_completed_once(service_factory: ServiceFactory) -> None:
    service = service_factory(roles=NO_WORKER)
    with service.partner() as client:
        workspace = new_workspace(client)
        accepted = place(client, counts(workspace, a=1)).json()["data"]
        order_id = parse_id("ord", accepted["id"])
        worker = FulfillmentWorker(service.container)
        worker.follower.catch_up()  # it has read the order placed
        # Another writer (another worker's process) completes it first, unseen by this one.
        other = EventStore(eventstore_env(service.container.settings))
        try:
            order = other.get(order_id)
            order.complete([{**item, "status": "active"} for item in order.domains], time.time())
            other.save(order)
        finally:
            other.close()
        # The job as a pass that caught up just before the other save runs it.
        worker._run(order_id, STEP)
        stored = service.container.store.get(order_id)
        topics = [e.topic for e in service.container.store.recorder.select_events(order_id)]
        assert stored.status == "completed"
        assert sum(topic.endswith(".Completed") for topic in topics) == 1, topics
        assert wait_order(client, accepted["id"])["status"] == "completed"


def test_a_placed_order_is_completed_from_what_the_follower_read(
    service_factory: ServiceFactory,
) -> None:
    service = service_factory(roles=NO_WORKER)
    with service.partner() as client:
        workspace = new_workspace(client)
        accepted = place(client, counts(workspace, a=1)).json()["data"]
        worker = FulfillmentWorker(service.container)
        worker.follower.catch_up()
        assert isinstance(service.container.store.rebuilt(parse_id("ord", accepted["id"])), Order)
        assert worker.run_once() == 1
        assert wait_order(client, accepted["id"])["status"] == "completed"

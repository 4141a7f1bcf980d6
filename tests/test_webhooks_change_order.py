"""A completion goes after its change's parts wherever they were delivered: with several
dispatchers the parts are often another's, so the completion names them in its message and
waits until the deliveries table shows their first attempts ended."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace

import pytest
from test_webhook_messages import EVENT

from infra.database import Database
from webhooks.change_order import ChangeOrder, after_named_parts
from webhooks.deliveries import Due, Outcome, enqueue, record_attempts
from webhooks.messages import due_of
from webhooks.outbox import MAX_NAMED_PARTS, message_of, parts_by_change

NOW = 1_800_000_000.0


@pytest.fixture
def db(open_db: Callable[[str], Database]) -> Database:
    return open_db("change")


def test_a_completion_names_its_parts_and_parts_name_none() -> None:
    parts = [replace(EVENT, type="domain.connected", id=f"evt_part{n}") for n in range(2)]
    named = parts_by_change([*parts, EVENT])
    assert named == {EVENT.change: ["evt_part0", "evt_part1"]}
    done = due_of(*message_of(EVENT, named[EVENT.change]))
    assert (done.after_parts, done.parts) == (True, ("evt_part0", "evt_part1"))
    assert due_of(*message_of(parts[0], named[EVENT.change])).parts == ()
    many = [f"evt_{n}" for n in range(MAX_NAMED_PARTS + 1)]  # past the header's room
    unnamed = due_of(*message_of(EVENT, many))
    assert (unnamed.after_parts, unnamed.parts) == (True, ())


def test_the_completion_waits_for_first_attempts_made_by_another_dispatcher(
    db: Database,
) -> None:
    parts = [Due(f"evt_p{n}", "org_1", "{}", tenant="org_1:test") for n in range(2)]
    done = Due("evt_done", "org_1", "{}", tenant="org_1:test", change="c", after_parts=True,
               parts=tuple(p.event_id for p in parts))

    async def run() -> tuple[bool, bool]:
        waiting = asyncio.ensure_future(after_named_parts(db, done.parts, longest=10.0))
        await asyncio.sleep(0.2)
        still = not waiting.done()  # not taken by any dispatcher yet: no row
        enqueue(db, parts, NOW, 20.0)  # another dispatcher's intake
        await asyncio.sleep(0.2)
        still = still and not waiting.done()  # taken, not attempted yet
        outcomes = [(p.event_id, Outcome(NOW, 1.0, 500, "HTTP 500")) for p in parts]
        record_attempts(db, outcomes, (60.0,), NOW)  # failed first attempts end the wait too
        return still, await asyncio.wait_for(waiting, timeout=5)

    assert asyncio.run(run()) == (True, True)
    assert asyncio.run(after_named_parts(db, done.parts, longest=10.0)) is False  # no wait now


def test_parts_this_dispatcher_took_are_not_looked_up() -> None:
    """The usual case costs no read: the completion asks the table only for the parts that
    went to another dispatcher."""
    mine = Due("evt_p0", "org_1", "{}", tenant="org_1:test", change="c")
    done = Due("evt_done", "org_1", "{}", tenant="org_1:test", change="c", after_parts=True,
               parts=("evt_p0", "evt_p1"))

    async def run() -> tuple[tuple[str, ...], tuple[str, ...]]:
        order = ChangeOrder()
        order.track(mine, asyncio.ensure_future(asyncio.sleep(0)))
        elsewhere = order.taken_elsewhere(done)
        return elsewhere, order.taken_elsewhere(replace(done, parts=("evt_p0",)))

    assert asyncio.run(run()) == (("evt_p1",), ("evt_p0",))  # each change asked once

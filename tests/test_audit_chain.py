"""The hash chain over stored events: kept by the audit role, checked by `audit verify`."""

from __future__ import annotations

import time

from audit_support import build_history, delete_event, tamper_event
from conftest import PATIENCE, RunningService, ServiceFactory
from grpc_support import ROLES

from audit.chain import (
    GENESIS,
    ensure_chain_table,
    extend_all,
    seal_after,
    verify,
    verify_and_seal,
)


def sealed(service: RunningService) -> int:
    """Wait for the audit role's follower to seal the whole log."""
    c = service.container
    head = c.store.recorder.max_notification_id() or 0
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        report = verify(c.store, c.ops_db)
        if report.sealed_through >= head:
            return head
        time.sleep(0.02)
    raise AssertionError("the audit role did not seal the log")


def test_intact_history_verifies(service_factory: ServiceFactory) -> None:
    service = service_factory(roles=ROLES[:2] + ["audit"])
    build_history(service)
    head = sealed(service)
    report = verify(service.container.store, service.container.ops_db)
    assert report.intact and report.checked == head == report.sealed_through


def test_an_edited_event_row_is_detected_at_its_position(service_factory: ServiceFactory) -> None:
    service = service_factory(roles=ROLES[:2] + ["audit"])
    build_history(service)
    head = sealed(service)
    tamper_event(service, 5)
    report = verify(service.container.store, service.container.ops_db)
    assert not report.intact
    assert (report.problem, report.first_bad_position, report.checked) == ("changed", 5, 4)
    assert report.sealed_through == head
    # A tampered chain is not extended over: the evidence stays as it is.
    assert not verify_and_seal(service.container.store, service.container.ops_db).intact


def test_a_deleted_event_row_is_detected(service_factory: ServiceFactory) -> None:
    service = service_factory(roles=ROLES[:2] + ["audit"])
    build_history(service)
    head = sealed(service)
    delete_event(service, head - 1)
    report = verify(service.container.store, service.container.ops_db)
    assert (report.intact, report.problem, report.first_bad_position) == (False, "deleted", head - 1)
    delete_event(service, head)  # the newest row too: nothing after it to notice the gap
    report = verify(service.container.store, service.container.ops_db)
    assert (report.problem, report.first_bad_position) == ("deleted", head - 1)


def test_verify_seals_new_events_where_no_follower_runs(service_factory: ServiceFactory) -> None:
    service = service_factory(roles=ROLES[:2])
    c = service.container
    ensure_chain_table(c.ops_db)
    service.new_org("First")
    first = verify_and_seal(c.store, c.ops_db)
    assert first.intact and first.checked == 0 and first.sealed_through == 1
    service.new_org("Second")
    second = verify_and_seal(c.store, c.ops_db)
    assert (second.intact, second.checked, second.sealed_through) == (True, 1, 2)
    assert extend_all(c.store, c.ops_db) == 0


def test_two_sealers_from_the_same_head_agree(service_factory: ServiceFactory) -> None:
    """`audit verify` (CLI or gRPC) seals while the audit role does too: both may read one
    head and seal the same rows. The second must neither fail nor change the chain."""
    service = service_factory(roles=ROLES[:2])
    c = service.container
    ensure_chain_table(c.ops_db)
    build_history(service)
    head = c.store.recorder.max_notification_id() or 0
    for _ in range(2):  # each sealer read the empty chain's head before the other wrote
        with c.ops_db.bulk_transaction() as cur:
            assert seal_after(cur, c.store, (0, GENESIS), 1000) == head
    report = verify_and_seal(c.store, c.ops_db)
    assert (report.intact, report.checked, report.sealed_through) == (True, head, head)

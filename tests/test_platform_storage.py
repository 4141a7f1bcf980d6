"""Read-model follower (exactly once, resumes), idempotency records, page tokens: both stores."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest
from conftest import PG_URL, _reachable, require

from domain.errors import DomainError
from gateway.rest.pagination import PageTokens
from infra.clock import ManualClock
from infra.idempotency import CLAIM_LEASE_SECONDS, Claim, IdempotencyStore, fingerprint
from infra.settings import Settings
from projections.api_keys import keys_of
from projections.follower import tracked_position
from projections.runner import READ_MODELS_TRACKING, ReadModels
from runtime.bootstrap import all_read_models
from runtime.container import Container


def test_read_models_apply_each_event_once_and_resume(settings: Settings) -> None:
    container = Container.build(settings)
    try:
        org = container.accounts.create_organization("Acme")["id"]
        for _ in range(3):
            container.accounts.create_key(org, "test", "read")
        container.read_models.catch_up()
        with container.read_db.read() as cur:
            assert len(keys_of(cur, org)) == 3
        head = container.store.recorder.max_notification_id()
        assert tracked_position(container.read_db, READ_MODELS_TRACKING) == head

        # A restarted runner resumes from its tracked position: nothing applied twice.
        restarted = ReadModels(container.store, container.read_db, all_read_models())
        restarted.catch_up()
        container.accounts.create_key(org, "live", "full")
        restarted.catch_up()
        with container.read_db.read() as cur:
            rows = keys_of(cur, org)
        assert len(rows) == 4
        assert len({row["id"] for row in rows}) == 4
    finally:
        container.close()


def test_two_runners_racing_apply_once(settings: Settings) -> None:
    container = Container.build(settings)
    try:
        org = container.accounts.create_organization("Race")["id"]
        for _ in range(20):
            container.accounts.create_key(org, "test", "read")
        runners = [ReadModels(container.store, container.read_db, all_read_models()) for _ in range(2)]
        errors: list[BaseException] = []

        def run(models: ReadModels) -> None:
            for _ in range(20):
                try:
                    models.catch_up()
                except Exception as exc:  # a lost race rolls back its whole batch
                    errors.append(exc)

        threads = [threading.Thread(target=run, args=(r,)) for r in runners]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        runners[0].catch_up()
        with container.read_db.read() as cur:
            assert len(keys_of(cur, org)) == 20
    finally:
        container.close()


def test_a_runner_whose_remembered_position_went_stale_applies_once(settings: Settings) -> None:
    """A runner keeps the position it committed; when another runner moved it meanwhile, the
    compare-and-set refuses the batch and the runner goes on from the stored position."""
    container = Container.build(settings)
    try:
        org = container.accounts.create_organization("Stale")["id"]
        first, second = (ReadModels(container.store, container.read_db, all_read_models()) for _ in range(2))
        for runner in (first, second, first, second, first):
            container.accounts.create_key(org, "test", "read")
            runner.catch_up()  # never raises: a refused batch is retried from the table
        with container.read_db.read() as cur:
            rows = keys_of(cur, org)
        assert len(rows) == 5 == len({row["id"] for row in rows})
        head = container.store.recorder.max_notification_id()
        assert tracked_position(container.read_db, READ_MODELS_TRACKING) == head
    finally:
        container.close()


def test_only_derived_writes_skip_the_wal_flush(settings: Settings) -> None:
    """On PostgreSQL the relaxed pool commits without waiting for the disk, the other pool
    waits; on SQLite both are the same synchronous=NORMAL file."""
    container = Container.build(settings)
    try:
        if container.read_db.dialect != "postgres":
            assert container.read_db.relaxed() is container.read_db
            return
        with container.read_db.transaction() as cur:
            assert cur.execute("SHOW synchronous_commit").fetchone()["synchronous_commit"] == "on"
        with container.read_db.relaxed().transaction() as cur:
            assert cur.execute("SHOW synchronous_commit").fetchone()["synchronous_commit"] == "off"
        assert container.read_models.db is container.read_db.relaxed()
    finally:
        container.close()


def test_revocation_reaches_read_model(settings: Settings) -> None:
    container = Container.build(settings)
    try:
        org = container.accounts.create_organization("Acme")["id"]
        key = container.accounts.create_key(org, "test", "full")
        container.accounts.revoke_key(key.id)
        container.read_models.catch_up()
        with container.read_db.read() as cur:
            (row,) = keys_of(cur, org)
        assert row["revoked_at"] is not None
        assert container.accounts.authenticate(key.secret) is None
    finally:
        container.close()


def test_idempotency_records_are_durable_and_scoped(settings: Settings) -> None:
    clock = ManualClock()
    container = Container.build(settings, clock)
    try:
        store = container.idempotency
        body = fingerprint("POST", "/partner/v1/orders", b'{"a": 1, "b": 2}')
        claim = store.begin("org_a:test", "k1", body)
        assert isinstance(claim, Claim)
        with pytest.raises(DomainError) as running:
            store.begin("org_a:test", "k1", body)
        assert running.value.code == "idempotency_in_progress"
        store.finish(claim, 201, b'{"id": "ord_1"}')

        # A new store over the same database (a restart) still remembers the key.
        again = IdempotencyStore(container.idempotency.db, clock)
        same_json = fingerprint("POST", "/partner/v1/orders", b'{"b":2,"a":1}')
        replay = again.begin("org_a:test", "k1", same_json)
        assert replay is not None and replay.status == 201 and replay.body == b'{"id": "ord_1"}'
        other = fingerprint("POST", "/partner/v1/orders", b'{"a": 2}')
        with pytest.raises(DomainError) as conflict:
            again.begin("org_a:test", "k1", other)
        assert conflict.value.code == "idempotency_conflict"
        assert isinstance(again.begin("org_a:live", "k1", other), Claim)  # other scope
        clock.advance(24 * 3600 + 1)
        assert isinstance(again.begin("org_a:test", "k1", other), Claim)  # window over: new key
    finally:
        container.close()


def in_progress(store: IdempotencyStore, key: str, print_: str) -> bool:
    try:
        store.begin("org_a:test", key, print_)
    except DomainError as error:
        return error.code == "idempotency_in_progress"
    return False


def test_one_retry_at_a_time_takes_over_a_claim_and_only_after_its_lease(
    settings: Settings,
) -> None:
    """A claim is taken over only once no live request can still hold it (a request can
    wait 30 s for a SQLite lock and 10 s for the read models), and by one retry: two retries
    running the request at once would each create what it creates."""
    clock = ManualClock()
    container = Container.build(settings, clock)
    body = fingerprint("POST", "/partner/v1/workspaces", b'{"name": "w"}')
    try:
        store = container.idempotency
        first = store.begin("org_a:test", "slow", body)
        assert isinstance(first, Claim)
        clock.advance(45)  # slow, not dead
        assert in_progress(store, "slow", body)
        clock.advance(CLAIM_LEASE_SECONDS)
        taken = store.begin("org_a:test", "slow", body)
        assert isinstance(taken, Claim) and taken.taken_over
        assert taken.created_at == first.created_at  # the same ids derive from it
        assert in_progress(store, "slow", body)  # a second retry meanwhile
        store.release(first)  # the slow original fails at last: the retry's claim stands
        store.finish(first, 201, b'{"late": true}')  # nor does it answer for the retry
        assert in_progress(store, "slow", body)
        clock.advance(CLAIM_LEASE_SECONDS + 1)  # the retry died too: its own lease ran out
        last = store.begin("org_a:test", "slow", body)
        assert isinstance(last, Claim)
        store.finish(last, 201, b'{"id": "wrk_1"}')
        replayed = store.begin("org_a:test", "slow", body)
        assert not isinstance(replayed, Claim) and replayed.body == b'{"id": "wrk_1"}'

        failed = store.begin("org_a:test", "failed", body)
        assert isinstance(failed, Claim)
        store.release(failed)
        clock.advance(CLAIM_LEASE_SECONDS + 1)
        again = store.begin("org_a:test", "failed", body)
        assert isinstance(again, Claim) and again.taken_over
        assert in_progress(store, "failed", body)  # its new lease holds
    finally:
        container.close()


def test_page_tokens_are_tamper_evident() -> None:
    tokens = PageTokens("secret")
    token = tokens.encode(42, "/partner/v1/bundles", {"status": "active"}, "org_a:test")
    assert tokens.decode(token, "/partner/v1/bundles", {"status": "active"}, "org_a:test") == 42
    bad_cases = [
        (token[:-2] + ("AA" if token[-2:] != "AA" else "BB"), {"status": "active"}, "org_a:test"),
        (token, {"status": "archived"}, "org_a:test"),
        (token, {"status": "active"}, "org_b:test"),
        ("not-a-token", {"status": "active"}, "org_a:test"),
        (PageTokens("other").encode(42, "/partner/v1/bundles", {}, "org_a:test"), {}, "org_a:test"),
    ]
    for forged, filters, tenant in bad_cases:
        with pytest.raises(DomainError) as error:
            tokens.decode(forged, "/partner/v1/bundles", filters, tenant)
        assert error.value.field == "page_token"


def test_each_deployment_has_its_own_default_stream(tmp_path: Path) -> None:
    """Deployments sharing a NATS (two test runs, staging beside production) must not take
    each other's events; every process of one deployment must find the same stream."""
    from infra.settings import Settings

    def stream(**env: str) -> str:
        return Settings.from_env({"PARTNER_API_DATA_DIR": str(tmp_path / "a"), **env}).nats_stream

    pg = "postgresql://postgres@127.0.0.1:5432/test"
    assert stream() == stream() != stream(PARTNER_API_DATA_DIR=str(tmp_path / "b"))
    assert stream(PARTNER_API_DATABASE_URL=pg) == stream(
        PARTNER_API_DATABASE_URL=pg, PARTNER_API_DATA_DIR=str(tmp_path / "b")
    )
    assert stream(PARTNER_API_DATABASE_URL=pg) != stream(
        PARTNER_API_DATABASE_URL=pg, PARTNER_API_DATABASE_SCHEMA="other"
    )
    same_place = "postgres://app:secret@127.0.0.1/test?sslmode=prefer"
    assert stream(PARTNER_API_DATABASE_URL=pg) == stream(PARTNER_API_DATABASE_URL=same_place)
    # This machine's loopback, however a process writes it (a dispatcher given `localhost`
    # read a stream of its own, and delivered nothing).
    for loopback in ("localhost", "LOCALHOST", "[::1]", "127.0.0.2"):
        spelled = f"postgresql://postgres@{loopback}:5432/test"
        assert stream(PARTNER_API_DATABASE_URL=spelled) == stream(PARTNER_API_DATABASE_URL=pg)
    elsewhere = "postgresql://postgres@db.internal:5432/test"
    assert stream(PARTNER_API_DATABASE_URL=elsewhere) != stream(PARTNER_API_DATABASE_URL=pg)
    assert stream().startswith("PARTNER_EVENTS_")
    assert stream(PARTNER_API_NATS_STREAM="MINE") == "MINE"


def test_a_schema_named_in_the_database_url_is_the_one_used() -> None:
    """The libpq way of naming a schema (`options=-c search_path=...` in the URL) must not be
    replaced by the pool's own `search_path=public`: two deployments would share `public`."""
    from infra.database import PostgresDatabase
    from infra.settings import Settings

    require("PostgreSQL", _reachable("127.0.0.1", 5432))
    url = f"{PG_URL}?options=-csearch_path%3Durl_named_schema"
    settings = Settings.from_env({"PARTNER_API_DATABASE_URL": url})
    assert settings.database_schema == "url_named_schema"
    assert settings.nats_stream == Settings.from_env(
        {"PARTNER_API_DATABASE_URL": PG_URL, "PARTNER_API_DATABASE_SCHEMA": "url_named_schema"}
    ).nats_stream
    with pytest.raises(ValueError, match="name one schema"):
        Settings.from_env(
            {"PARTNER_API_DATABASE_URL": url, "PARTNER_API_DATABASE_SCHEMA": "another"}
        )
    database = PostgresDatabase(url, settings.database_schema, 1)
    try:
        with database.read() as cur:
            shown = cur.execute("SHOW search_path").fetchone()["search_path"]
        assert shown == "url_named_schema"
    finally:
        database.close()
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute("DROP SCHEMA IF EXISTS url_named_schema CASCADE")


def test_a_schema_name_postgresql_would_fold_is_refused_at_start() -> None:
    """An unquoted name is folded to lower case: `Audit_E` would be made as written and then
    looked for as `audit_e`. Refused with the rule, before anything is created."""
    from infra.settings import Settings

    for bad in ("Audit_E", "1st", "with-dash", "s" * 64):
        with pytest.raises(ValueError, match="a schema name is lower-case"):
            Settings.from_env({"PARTNER_API_DATABASE_URL": PG_URL,
                               "PARTNER_API_DATABASE_SCHEMA": bad})
    assert Settings.from_env({"PARTNER_API_DATABASE_URL": PG_URL,
                              "PARTNER_API_DATABASE_SCHEMA": "audit_e2"}).database_schema == "audit_e2"

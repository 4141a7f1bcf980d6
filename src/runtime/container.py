"""The one place that builds infrastructure from settings."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg

from adapters import dkim
from infra.clock import Clock, SystemClock, TenantClock
from infra.database import Database, PostgresDatabase, SQLiteDatabase
from infra.deployment import ensure_deployment_id
from infra.idempotency import IdempotencyStore
from infra.rate_limit import RateLimiter
from infra.sandbox_offsets import SandboxOffsets
from infra.sealing import Sealer
from infra.settings import Settings
from infra.storage_health import StorageHealth
from infra.store import EventStore, eventstore_env
from projections.runner import ReadModels
from runtime.bootstrap import all_read_models
from services.accounts.keys import Accounts
from services.unit_of_work import UnitOfWork


def build_databases(settings: Settings) -> tuple[Database, Database, Database]:
    """(read models, operational records, rate buckets); one PostgreSQL schema holds all three.

    On SQLite the rate buckets get a file of their own without fsync: a token count lost to a
    power cut costs nothing, while an fsync stall on every request would cost latency.
    """
    if settings.database_url:
        shared = PostgresDatabase(settings.database_url, settings.database_schema)
        return shared, shared, shared
    return (
        SQLiteDatabase(settings.data_dir / "read.sqlite"),
        SQLiteDatabase(settings.data_dir / "ops.sqlite"),
        SQLiteDatabase(settings.data_dir / "rate.sqlite", durable=False),
    )


def _idempotency_database(settings: Settings, ops_db: Database
                          ) -> tuple[Database, Database | None]:
    """Where idempotency records live: the event store's database (infra/idempotency.py),
    and on SQLite the operational file they are moved out of."""
    if settings.database_url:
        return ops_db, None
    return SQLiteDatabase(settings.data_dir / "events.sqlite"), ops_db


@contextmanager
def schema_setup_lock(settings: Settings) -> Iterator[None]:
    """Processes starting together would race on CREATE TABLE IF NOT EXISTS (PostgreSQL) or on
    the switch to WAL (SQLite); a lock makes start-up one process at a time."""
    if not settings.database_url:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        with open(settings.data_dir / ".setup.lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # SQLite's first switch to WAL is not concurrent
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
        return
    with psycopg.connect(settings.database_url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(7272001)")
        try:
            yield
        finally:
            conn.execute("SELECT pg_advisory_unlock(7272001)")


@dataclass
class Container:
    settings: Settings
    clock: TenantClock
    store: EventStore
    read_db: Database
    ops_db: Database
    read_models: ReadModels
    unit_of_work: UnitOfWork
    accounts: Accounts
    rate_limiter: RateLimiter
    idempotency: IdempotencyStore
    sealer: Sealer
    dkim_keys: dkim.KeySet
    extras: dict[str, Any] = field(default_factory=dict)
    deployment_id: str = ""  # the store's identity (infra/deployment.py)
    # Storage failures this process saw, which readiness reports (services/operations/readiness.py).
    storage_health: StorageHealth = field(default_factory=StorageHealth)
    databases: list[Database] = field(default_factory=list)  # what close() closes, once each

    @classmethod
    def build(cls, settings: Settings, clock: Clock | None = None) -> Container:
        with schema_setup_lock(settings):
            return cls._build(settings, clock or SystemClock())

    @classmethod
    def _build(cls, settings: Settings, clock: Clock) -> Container:
        read_db, ops_db, rate_db = build_databases(settings)  # first: creates the PG schema
        store = EventStore(eventstore_env(settings))
        records_db, moved_from = _idempotency_database(settings, ops_db)
        dkim_keys = dkim.KeySet(dkim.StoredKeys(ops_db))
        dkim.use(dkim_keys)  # the simulators draw this deployment's keys
        tenant_clock = TenantClock(clock)
        tenant_clock.offset_of = SandboxOffsets(store)
        # Keys, rate buckets and idempotency records are the organization's, not its sandbox's:
        # they stay on real time.
        # Read models and rate buckets are rebuilt or harmless to lose (`relaxed`).
        read_models = ReadModels(
            store, read_db.relaxed(), all_read_models(), poll_interval=settings.poll_interval_seconds
        )
        return cls(
            settings=settings,
            clock=tenant_clock,
            store=store,
            read_db=read_db,
            ops_db=ops_db,
            read_models=read_models,
            unit_of_work=UnitOfWork(store, read_models),
            accounts=Accounts(store, clock),
            rate_limiter=RateLimiter(rate_db.relaxed(), clock),
            idempotency=IdempotencyStore(records_db, clock, moved_from),
            sealer=Sealer(settings.secret_key),
            dkim_keys=dkim_keys,
            databases=list(
                {id(db): db for db in (read_db, ops_db, rate_db, records_db)}.values()
            ),
            deployment_id=ensure_deployment_id(ops_db),
        )

    def close(self) -> None:
        self.dkim_keys.stop()
        self.read_models.close()
        self.store.close()
        for db in self.databases:  # each closes its relaxed pool with it
            db.close()

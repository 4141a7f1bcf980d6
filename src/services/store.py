"""The event store: one eventsourcing Application whose repository holds every aggregate.

Its persistence is built here, in one place, from our own settings (SQLite file by default,
PostgreSQL when a database URL is configured).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlparse
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import Recording

from infra.settings import Settings

APPLICATION_NAME = "partner"


def eventstore_env(settings: Settings) -> dict[str, str]:
    if settings.database_url:
        url = urlparse(settings.database_url)
        return {
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": url.path.lstrip("/") or "postgres",
            "POSTGRES_HOST": url.hostname or "127.0.0.1",
            "POSTGRES_PORT": str(url.port or 5432),
            "POSTGRES_USER": unquote(url.username or "postgres"),
            "POSTGRES_PASSWORD": unquote(url.password or ""),
            "POSTGRES_SCHEMA": settings.database_schema,
            "POSTGRES_POOL_SIZE": "10",
            "POSTGRES_MAX_OVERFLOW": "20",
            "POSTGRES_LOCK_TIMEOUT": "10",
        }
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": str(settings.data_dir / "events.sqlite"),
        "SQLITE_LOCK_TIMEOUT": "30",
    }


class EventStore(Application[UUID]):
    name = APPLICATION_NAME

    def __init__(self, env: dict[str, str] | None = None) -> None:
        super().__init__(env)
        self._listeners: list[Callable[[int], None]] = []
        self._listeners_lock = threading.Lock()

    def on_saved(self, listener: Callable[[int], None]) -> None:
        """Called with the last notification id after each save in this process.

        Followers in the same process wake at once instead of waiting for their next poll.
        """
        with self._listeners_lock:
            self._listeners.append(listener)

    def save(self, *objs: Any, **kwargs: Any) -> list[Recording[UUID]]:
        recordings = super().save(*objs, **kwargs)
        if recordings:
            last = max(r.notification.id for r in recordings)
            for listener in list(self._listeners):
                listener(last)
        return recordings

    def get(self, aggregate_id: UUID) -> Any:
        return self.repository.get(aggregate_id)

    def find(self, aggregate_id: UUID | None, kind: type[Aggregate]) -> Any | None:
        """The aggregate of this kind, or None for an unknown id or another kind."""
        if aggregate_id is None:
            return None
        try:
            found: Any = self.repository.get(aggregate_id)
        except AggregateNotFoundError:
            return None
        return found if isinstance(found, kind) else None

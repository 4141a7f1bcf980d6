"""A PostgreSQL that stops answering (a dead host, a cut network: connections stay open, nothing
comes back) is reported by `/readyz` within seconds as not ready, instead of the probe
hanging with the store's queries; readiness returns once the store answers again."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest
from conftest import ServiceFactory
from webhook_receiver import wait_until

from infra.settings import Settings


class FreezingProxy:
    """TCP to the real PostgreSQL; `frozen`, it holds every byte back, the sockets open."""

    def __init__(self, host: str, port: int) -> None:
        self.upstream = (host, port)
        self.frozen = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                while self.frozen.is_set():
                    time.sleep(0.05)
                target.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, target):
                end.close()

    def close(self) -> None:
        self.frozen.clear()
        self.listener.close()


# A network between the service and its store: PostgreSQL's.
pytestmark = pytest.mark.parametrize("store_kind", ["postgres"], indirect=True)


@pytest.fixture
def proxy(settings: Settings) -> Iterator[FreezingProxy]:
    parts = urlsplit(settings.database_url or "")
    running = FreezingProxy(parts.hostname or "127.0.0.1", parts.port or 5432)
    yield running
    running.close()


def test_readiness_reports_a_store_that_stopped_answering(
    settings: Settings, service_factory: ServiceFactory, proxy: FreezingProxy
) -> None:
    parts = urlsplit(settings.database_url or "")
    through = parts._replace(netloc=f"{parts.username or 'postgres'}@127.0.0.1:{proxy.port}")
    service = service_factory(database_url=urlunsplit(through))
    with service.client() as client:
        assert client.get(service.base_url + "/readyz").status_code == 200
        proxy.frozen.set()
        started = time.monotonic()
        frozen = client.get(service.base_url + "/readyz", timeout=15)
        assert time.monotonic() - started < 5
        assert frozen.status_code == 503, frozen.text
        assert frozen.json()["checks"]["event_store"].startswith("error: no answer within")
        again = client.get(service.base_url + "/readyz", timeout=15)  # no second check piles up
        assert again.status_code == 503
        proxy.frozen.clear()
        wait_until(lambda: client.get(service.base_url + "/readyz").status_code == 200, timeout=30)


def test_a_read_on_a_terminated_pooled_connection_is_asked_again(settings: Settings) -> None:
    """A PostgreSQL restart (or an administrator's terminate) leaves idle pooled connections
    that fail on their next use: a read runs again on a fresh one instead of answering 500."""
    import psycopg

    from infra.database import PostgresDatabase

    db = PostgresDatabase(settings.database_url or "", settings.database_schema, max_size=1)
    try:
        with db.read() as cur:
            pid = cur.execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"]
        with psycopg.connect(settings.database_url or "", autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with db.read() as cur:
            again = cur.execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"]
        assert again != pid
    finally:
        db.close()

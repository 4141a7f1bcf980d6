"""A real HTTP receiver on loopback for webhook tests: records every request it gets and
answers from a script (status codes, or a hang past the dispatcher's time-out)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from conftest import PATIENCE


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    at: float

    @property
    def event(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.body)
        return parsed


@dataclass
class Receiver:
    """`respond(received_so_far)` -> status code, or a negative number of seconds to hang."""

    respond: Callable[[list[Received]], float] = lambda _: 200
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None
    port: int = 0  # fixed, to stand a receiver up again where a stopped one listened

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.received.append(Received(dict(self.headers), body, time.time()))
                    answer = receiver.respond(list(receiver.received))
                if answer < 0:
                    time.sleep(-answer)
                    answer = 200
                self.send_response(int(answer))
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def of_event(self, event_id: str) -> list[Received]:
        with self.lock:
            return [r for r in self.received if r.headers.get("Service-Event-Id") == event_id]

    def event_ids(self) -> set[str]:
        with self.lock:
            return {r.headers["Service-Event-Id"] for r in self.received}


def wait_until(check: Callable[[], Any], timeout: float = PATIENCE, interval: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(interval)

"""Raw-socket clients for the HTTP edge tests: what a hostile client sends, byte for byte."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest
from conftest import RunningService


@pytest.fixture
def store_kind() -> str:
    """The edge sits in front of the application and never reaches a store: one store is
    enough to run it (the conftest's fixture would run every test once per store)."""
    return "sqlite"


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def error(self) -> dict[str, Any]:
        """The envelope, checked: JSON, a code, a message and the header's request id."""
        assert self.headers["content-type"] == "application/json", self.headers
        error: dict[str, Any] = json.loads(self.body)["error"]
        assert set(error) >= {"code", "message", "request_id"}, error
        assert error["request_id"] == self.headers["service-request-id"]
        return error


def address(service: RunningService) -> tuple[str, int]:
    parts = urlsplit(service.base_url)
    return parts.hostname or "127.0.0.1", parts.port or 80


def connect(service: RunningService, timeout: float = 10.0) -> socket.socket:
    return socket.create_connection(address(service), timeout=timeout)


def read_answer(sock: socket.socket) -> Answer:
    """One response: the head, then as many body bytes as Content-Length says."""
    return read_answers(sock, 1)[0]


def read_answers(sock: socket.socket, count: int) -> list[Answer]:
    """`count` responses in a row on one connection (pipelined requests)."""
    data, answers = b"", []
    while len(answers) < count:
        while b"\r\n\r\n" not in data:
            data += _received(sock, data)
        head, _, data = data.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(data) < length:
            data += _received(sock, data)
        answers.append(Answer(int(status_line.split(" ")[1]), headers, data[:length]))
        data = data[length:]
    return answers


def _received(sock: socket.socket, so_far: bytes) -> bytes:
    chunk = sock.recv(65536)
    if not chunk:
        raise AssertionError(f"connection closed in a response: {so_far!r}")
    return chunk


def exchange(service: RunningService, request: bytes, timeout: float = 10.0) -> Answer:
    with connect(service, timeout) as sock:
        sock.sendall(request)
        return read_answer(sock)


def closed_by_server(sock: socket.socket, within: float) -> bool:
    """Whether the server closes the connection (EOF or reset) within `within` seconds."""
    sock.settimeout(within)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionError:
        return True
    return True


@contextmanager
def streaming(sock: socket.socket, head: bytes, filler: bytes) -> Iterator[None]:
    """Sends `head`, then `filler` again and again from a thread (a header or a body without
    end) until the block ends: the caller reads the answer meanwhile."""
    stop = threading.Event()

    def send() -> None:
        try:
            sock.sendall(head)
            while not stop.is_set():
                sock.sendall(filler)
        except OSError:
            pass  # the server closed: what the test expects sooner or later

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        yield
    finally:
        stop.set()
        sock.shutdown(socket.SHUT_RDWR)
        sender.join(timeout=10)


def request_head(path: str, *lines: str, method: str = "GET") -> bytes:
    text = f"{method} {path} HTTP/1.1\r\nHost: edge.test\r\n" + "".join(f"{x}\r\n" for x in lines)
    return text.encode("latin-1")


def rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def wait_until(condition: Any, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())

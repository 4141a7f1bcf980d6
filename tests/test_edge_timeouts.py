"""The HTTP edge bounds the time a client may hold a connection, and how many it may hold.

Raw sockets against a running service with short limits (the defaults are 10 s for a head, 30 s
for a body, 5 s idle between requests, 1000 connections).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest
from conftest import RunningService, ServiceFactory, free_port
from edge_support import (  # noqa: F401 - store_kind: the edge needs one store only
    closed_by_server,
    connect,
    read_answer,
    request_head,
    store_kind,
    wait_until,
)
from test_platform_processes import CLI, wait_listening

ME = "/partner/v1/me"
SHORT = {
    "http_head_timeout_seconds": 1.0,
    "http_body_timeout_seconds": 1.0,
    "http_keep_alive_seconds": 1,
}


@pytest.fixture
def short(service_factory: ServiceFactory) -> RunningService:
    return service_factory(**SHORT)


def timed_out(sock: socket.socket) -> None:
    answer = read_answer(sock)
    assert answer.status == 408, answer
    assert answer.error()["code"] == "request_timeout"
    assert closed_by_server(sock, within=5)


def test_500_unfinished_heads_are_408_and_let_go(short: RunningService) -> None:
    # Each head begun as soon as its socket connects: one that stayed silent for the head's
    # time (opening 500 can take that long on a busy machine) is closed without an answer.
    sockets: list[socket.socket] = []
    try:
        started = time.monotonic()
        for _ in range(500):
            sockets.append(sock := connect(short))
            sock.sendall(b"GET /partner/v1/me HTTP/1.1\r\nHost: x\r\nX-Unfinished: ")
        for sock in sockets:
            timed_out(sock)
        assert time.monotonic() - started < 15
    finally:
        for sock in sockets:
            sock.close()
    connections = short.server.server_state.connections
    assert wait_until(lambda: not connections, within=5), len(connections)


def test_a_head_sent_byte_by_byte_is_bounded_in_time(short: RunningService) -> None:
    """Each byte resets no clock: the head has its time from its first byte."""
    with connect(short) as sock:
        started = time.monotonic()
        for byte in request_head(ME):
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break
            if time.monotonic() - started > 1.5:
                break
            time.sleep(0.05)
        timed_out(sock)


def test_bodies_that_never_end_are_408(short: RunningService) -> None:
    secret = short.new_key(short.new_org())
    post = request_head(
        "/partner/v1/domains/availability",
        f"Authorization: Bearer {secret}",
        "Content-Type: application/json",
        method="POST",
    )
    with connect(short) as sock:  # shorter than its Content-Length
        sock.sendall(post + b"Content-Length: 100\r\n\r\n" + b'{"domains": [')
        timed_out(sock)
    with connect(short) as sock:  # chunked, a chunk every 0.2 s, never the last one
        sock.sendall(post + b"Transfer-Encoding: chunked\r\n\r\n")
        deadline = time.monotonic() + 1.6
        while time.monotonic() < deadline:
            sock.sendall(b"1\r\n \r\n")
            time.sleep(0.2)
        timed_out(sock)


def test_idle_connections_are_closed(short: RunningService) -> None:
    with connect(short) as silent:  # connected, never sent a byte: closed without an answer
        assert closed_by_server(silent, within=4)
    with connect(short) as kept:  # idle after a request: the keep-alive timeout closes it
        kept.sendall(request_head(ME) + b"\r\n")
        assert read_answer(kept).status == 401
        assert closed_by_server(kept, within=4)


def test_connections_over_the_limit_are_503(service_factory: ServiceFactory) -> None:
    service = service_factory(http_max_connections=5)
    held = [connect(service) for _ in range(5)]
    try:
        assert wait_until(lambda: len(service.server.server_state.connections) == 5, within=5)
        with connect(service) as extra:
            answer = read_answer(extra)
            assert answer.status == 503 and answer.error()["code"] == "server_busy"
            assert answer.headers["retry-after"] == "1"
        held.pop().close()
        assert wait_until(lambda: len(service.server.server_state.connections) < 5, within=5)
        with connect(service) as another:
            another.sendall(request_head(ME) + b"\r\n")
            assert read_answer(another).status == 401
    finally:
        for sock in held:
            sock.close()


def test_gateway_workers_take_their_bounds_from_the_environment(
    service_env: dict[str, str],
) -> None:
    """`serve --workers N` starts uvicorn's worker processes, which name the protocol by its
    import path and read the limits from the environment."""
    port = free_port()
    env = {
        **os.environ,
        **service_env,
        "PARTNER_API_HTTP_PORT": str(port),
        "PARTNER_API_HTTP_HEAD_TIMEOUT_SECONDS": "1",
    }
    process = subprocess.Popen(
        [*CLI, "serve", "--role", "gateway", "--workers", "2"], env=env, stdout=subprocess.DEVNULL
    )
    try:
        wait_listening(f"http://127.0.0.1:{port}", process)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"GET /partner/v1/me HTTP/1.1\r\nHost: x\r\nX-Unfinished: ")
            timed_out(sock)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"GET /partner/v1/m\x00e HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = read_answer(sock)
            assert answer.status == 400 and answer.error()["code"] == "invalid_request"
    finally:
        process.terminate()
        process.wait(timeout=20)

"""The HTTP edge bounds a request's size, and refuses what is not HTTP/1.1 with the envelope.

Raw sockets against a running service: the cases are ones an HTTP client library will not send.
"""

from __future__ import annotations

import socket

from conftest import RunningService
from edge_support import (  # noqa: F401 - store_kind: the edge needs one store only
    connect,
    exchange,
    read_answer,
    read_answers,
    request_head,
    rss_kib,
    store_kind,
    streaming,
)

ME = "/partner/v1/me"


def refused(answer_status: int, answer: object, code: str) -> None:
    from edge_support import Answer

    assert isinstance(answer, Answer)
    assert answer.status == answer_status, (answer.status, answer.body)
    assert answer.error()["code"] == code
    assert answer.headers["connection"] == "close"


def test_a_header_without_end_is_431_and_memory_stays_bounded(service: RunningService) -> None:
    """50 MB in one header, 20 times: each is refused once the head passes 32 KiB, and the
    process does not keep what was sent (before, RSS grew by 64 MiB and stayed)."""
    before = rss_kib()
    for _ in range(20):
        with connect(service) as sock, streaming(sock, request_head(ME) + b"X-Big: ", b"a" * 65536):
            refused(431, read_answer(sock), "request_headers_too_large")
    assert rss_kib() - before < 24 * 1024, (before, rss_kib())
    whole = request_head(ME, "X-Big: " + "a" * 40_000) + b"\r\n"
    refused(431, exchange(service, whole), "request_headers_too_large")


def test_too_many_headers_is_431(service: RunningService) -> None:
    with connect(service) as sock, streaming(sock, request_head(ME), b"X-A: 1\r\n" * 1000):
        refused(431, read_answer(sock), "request_headers_too_large")  # 100,000 and more
    with connect(service) as sock, streaming(sock, b"", b"\r\n" * 32768):
        # Blank lines before a request line: read and dropped by the parser, still counted.
        refused(431, read_answer(sock), "request_headers_too_large")
    some = request_head(ME, *[f"X-N{n}: 1" for n in range(101)]) + b"\r\n"
    refused(431, exchange(service, some), "request_headers_too_large")
    fine = exchange(service, request_head(ME, *[f"X-N{n}: 1" for n in range(90)]) + b"\r\n")
    assert fine.status == 401 and fine.error()["code"] == "unauthorized"


def test_a_long_request_target_is_414(service: RunningService) -> None:
    query = "?q=" + "a" * 100_000
    refused(414, exchange(service, request_head(ME + query) + b"\r\n"), "uri_too_long")
    with connect(service) as sock, streaming(sock, b"GET /partner/v1/me?q=", b"a" * 65536):
        refused(414, read_answer(sock), "uri_too_long")


def test_requests_that_are_not_http_are_400_with_the_envelope(service: RunningService) -> None:
    cases = [
        b"GET /partner/v1/wallet?per_page= 5 HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /partner/v1/m\x00e HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /partner/v1/wallet?per_page=\x005 HTTP/1.1\r\nHost: x\r\n\r\n",
        request_head(ME, "Content-Length: 2", "Content-Length: 2", method="POST") + b"\r\n{}",
        request_head(ME, "Content-Length: 2", "Content-Length: 3", method="POST") + b"\r\n{}",
        request_head(ME, "Content-Length: 5", "Transfer-Encoding: chunked", method="POST")
        + b"\r\n0\r\n\r\n",
        b"GET /partner/v1/\xff HTTP/1.1\r\nHost: x\r\n\r\n",
        b"NOT HTTP AT ALL\r\n\r\n",
        b"GET /partner/v1/me HTTP/1.1\r\n\r\n",  # RFC 9112 3.2: Host is required
        request_head(ME, "Host: other.test") + b"\r\n",  # and only one
    ]
    for request in cases:
        answer = exchange(service, request)
        refused(400, answer, "invalid_request")
    scraped = exchange(service, request_head("/metrics", "Connection: close") + b"\r\n")
    counted = 'partner_api_requests_total{method="-",route="edge",status="400"}'
    assert counted in scraped.body.decode(), "edge refusals are counted apart"


def test_a_body_over_the_limit_is_413(service: RunningService) -> None:
    declared = request_head(
        "/partner/v1/domains/availability", "Content-Length: 2000000", method="POST"
    )
    # Refused from the head alone: nothing of the body is sent, or read.
    refused(413, exchange(service, declared + b"\r\n"), "payload_too_large")
    secret = service.new_key(service.new_org())
    chunked = request_head(
        "/partner/v1/domains/availability",
        f"Authorization: Bearer {secret}",
        "Content-Type: application/json",
        "Transfer-Encoding: chunked",
        method="POST",
    )
    with connect(service) as sock, streaming(sock, chunked + b"\r\n", b"10000\r\n" + b"a" * 0x10000 + b"\r\n"):
        refused(413, read_answer(sock), "payload_too_large")


def test_ordinary_requests_still_pass(service: RunningService) -> None:
    secret = service.new_key(service.new_org())
    auth = f"Authorization: Bearer {secret}"
    two = request_head(ME, auth) + b"\r\n" + request_head(ME, auth, "Connection: close") + b"\r\n"
    with connect(service) as sock:
        sock.sendall(two)  # pipelined on one connection
        first, second = read_answers(sock, 2)
    assert (first.status, second.status) == (200, 200)
    body = b'{"domains": ["fine-name.com"]}'
    post = request_head(
        "/partner/v1/domains/availability", auth, "Content-Type: application/json",
        f"Content-Length: {len(body)}", method="POST",
    )
    assert exchange(service, post + b"\r\n" + body).status == 200
    with socket.create_connection(("127.0.0.1", int(service.base_url.rsplit(":", 1)[1]))) as s:
        s.sendall(request_head(ME, auth, "X-Long: " + "b" * 16_000) + b"\r\n")
        assert read_answer(s).status == 200

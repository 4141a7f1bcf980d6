"""The delivery client on its own: where it refuses to connect, and what an attempt records."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterator

import pytest
from webhook_receiver import Receiver

from webhooks.sender import Answer, WebhookSender


def post(url: str, allow_http: bool, timeout: float = 5.0) -> Answer:
    async def attempt() -> Answer:
        sender = WebhookSender(timeout, allow_http, 8, ssl.create_default_context())
        try:
            return await sender.post("org_1", url, b"{}", {"Service-Event-Id": "evt_1"})
        finally:
            await sender.close()

    return asyncio.run(attempt())


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    started = Receiver().start()
    yield started
    started.stop()


@pytest.mark.parametrize(
    "url",
    [
        "https://localhost/hook",  # a name resolving to loopback: refused when connecting
        "https://127.0.0.1/hook",
        "https://127.1/hook",  # legacy IPv4 spellings
        "https://2130706433/hook",
        "https://[::1]/hook",
        "https://10.0.0.1/hook",
        "https://169.254.169.254/latest/meta-data",
    ],
)
def test_non_public_addresses_are_refused_before_connecting(url: str) -> None:
    answer = post(url, allow_http=False)
    assert answer.status_code is None
    assert answer.error is not None and answer.error.startswith("refused: ")
    assert "non-public address" in answer.error


def test_plain_http_is_refused_unless_allowed(receiver: Receiver) -> None:
    refused = post(receiver.url, allow_http=False)
    assert refused.status_code is None and refused.error is not None
    assert refused.error.startswith("refused: ") and not receiver.received


def test_an_answer_records_its_status(receiver: Receiver) -> None:
    assert post(receiver.url, allow_http=True) == Answer(200, None)
    receiver.respond = lambda _: 503
    assert post(receiver.url, allow_http=True) == Answer(503, "HTTP 503")
    got = receiver.received[0]
    assert got.headers["Content-Type"] == "application/json"
    assert got.headers["User-Agent"] == "partner-api-webhooks/1"
    assert got.headers["Service-Event-Id"] == "evt_1" and got.body == b"{}"


def test_a_redirect_is_a_failed_attempt_not_followed(receiver: Receiver) -> None:
    receiver.respond = lambda _: 302
    assert post(receiver.url, allow_http=True) == Answer(302, "HTTP 302")
    assert len(receiver.received) == 1


def test_a_hanging_receiver_times_out(receiver: Receiver) -> None:
    receiver.respond = lambda _: -2.0
    answer = post(receiver.url, allow_http=True, timeout=0.5)
    assert answer == Answer(None, "timed out after 0.5 s")


def test_a_refused_connection_is_an_error() -> None:
    answer = post("http://127.0.0.1:9/hook", allow_http=True)
    assert answer.status_code is None and answer.error is not None
    assert answer.error.startswith("ClientConnectorError: ")

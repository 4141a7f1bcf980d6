"""The HTTP edge: what one client can make the server hold, and how it is refused.

uvicorn's httptools protocol reads a request head of any size (httptools keeps a header's pieces
until the header ends), waits for ever on a head or a body that never ends, and answers a request
it cannot parse with a plain-text 400 of its own. This subclass keeps uvicorn and its parser and
adds the bounds: the request target (414), the head's size and header count (431), the body's
size (413, before the application sees the request when `Content-Length` says so), the time a
head and a body may take (408), the connections open at once (503). Every refusal, and the 400
for a request that is not HTTP/1.1 (a space or a NUL in the target, two `Content-Length`s,
`Content-Length` with chunked), carries the error envelope and a `Service-Request-Id`, as the
application's own errors do. The values are in docs/security.md.
"""

from __future__ import annotations

import asyncio
import http
from dataclasses import dataclass
from typing import Any, ClassVar

import httptools
import msgspec
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from gateway.rest import metrics
from gateway.rest.errors import STATUS_BY_CODE, envelope
from gateway.rest.request_id import new_request_id
from infra.settings import Settings

# After a refusal the connection reads (and drops) what the client is still sending, for at most
# this long, before it closes: closing with unread data makes the kernel reset the connection,
# and the client would lose the answer that explains the refusal.
LINGER_SECONDS = 2.0


@dataclass(frozen=True)
class EdgeLimits:
    max_target_bytes: int = 8 * 1024  # the request target: path and query string
    max_head_bytes: int = 32 * 1024  # the request target and every header line together
    max_headers: int = 100
    max_body_bytes: int = 1024 * 1024
    head_timeout: float = 10.0  # from a request's first byte (or the connection's) to its head's end
    body_timeout: float = 30.0  # from the head's end to the body's last byte
    keep_alive_timeout: int = 5  # idle between two requests on one connection
    max_connections: int = 1000  # per server process

    @classmethod
    def of(cls, settings: Settings) -> EdgeLimits:
        return cls(
            max_body_bytes=settings.max_body_bytes,
            head_timeout=settings.http_head_timeout_seconds,
            body_timeout=settings.http_body_timeout_seconds,
            keep_alive_timeout=settings.http_keep_alive_seconds,
            max_connections=settings.http_max_connections,
        )


@dataclass(frozen=True)
class Refusal:
    code: str
    message: str

    @property
    def status(self) -> int:
        return STATUS_BY_CODE[self.code]


class Refused(Exception):
    """Raised from a parser callback: httptools stops parsing and reports a callback error."""


NOT_HTTP = Refusal("invalid_request", "The request is not valid HTTP/1.1.")
HEAD_TOO_SLOW = Refusal("request_timeout", "The request head took too long to arrive.")
BODY_TOO_SLOW = Refusal("request_timeout", "The request body took too long to arrive.")
BUSY = Refusal("server_busy", "Too many connections are open; retry shortly.")
# RFC 9112 3.2: an HTTP/1.1 request without a Host header, or any with two, is a 400.
NO_SINGLE_HOST = Refusal("invalid_request", "An HTTP/1.1 request carries exactly one Host header.")


def _too_large(limits: EdgeLimits) -> Refusal:
    return Refusal("payload_too_large", f"The request body exceeds {limits.max_body_bytes} bytes.")


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    limits: ClassVar[EdgeLimits | None] = None  # from the environment unless a subclass sets it

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.limits is None:  # a uvicorn worker process: it names this class by its path
            type(self).limits = EdgeLimits.of(Settings.from_env())
        self.edge: EdgeLimits = self.limits or EdgeLimits()
        self.refusing = False
        self.reading_head = True
        self.head_bytes = 0  # whole reads seen while a head was being read
        self.body_bytes = 0
        self.completed = 0  # requests fully read on this connection
        self.message_begun = False
        self.url = b""  # uvicorn sets it when a request begins; CRLFs alone begin none
        self.deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.edge.max_connections:
            self.refuse(BUSY, (b"retry-after", b"1"))
            return
        self.arm(self.edge.head_timeout, self.head_timed_out)

    def connection_lost(self, exc: Exception | None) -> None:
        self.disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.refusing:
            return  # lingering: what the client still sends is dropped
        self._unset_keepalive_if_required()
        counting, completed = self.reading_head, self.completed
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self.disarm()  # the connection is no longer HTTP/1.1 requests
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return
        except httptools.HttpParserError as error:
            refusal = error.__context__
            if not self.refusing:
                self.refuse(refusal.args[0] if isinstance(refusal, Refused) else NOT_HTTP)
            return
        whole_read_was_head = counting and completed == self.completed
        if self.reading_head and (self.message_begun or whole_read_was_head):
            self.count_head(len(data), whole_read_was_head)  # a head begun, not ended
            self.arm_once(self.edge.head_timeout, self.head_timed_out)
        elif not self.reading_head:
            self.arm_once(self.edge.body_timeout, self.body_timed_out)  # a body to come
        # A request read whole in one read (the usual case) arms no deadline at all.

    def count_head(self, size: int, whole_read_was_head: bool) -> None:
        """The parser keeps a header's pieces until its line ends, so a head is bounded by the
        reads it took. A read that held the end of an earlier request is not counted: the
        bound may be passed by up to two reads (uvloop reads at most 250 KB), never reached early."""
        if not self.reading_head or self.refusing:
            return
        self.head_bytes = self.head_bytes + size if whole_read_was_head else 0
        if self.head_bytes > self.edge.max_head_bytes:
            self.refuse(self.head_too_large())

    def head_too_large(self) -> Refusal:
        if not self.headers and len(self.url) > self.edge.max_target_bytes:  # cut mid-target
            return self.target_too_long()
        return Refusal(
            "request_headers_too_large",
            f"The request head exceeds {self.edge.max_head_bytes} bytes or "
            f"{self.edge.max_headers} headers.",
        )

    def target_too_long(self) -> Refusal:
        return Refusal(
            "uri_too_long", f"The request target exceeds {self.edge.max_target_bytes} bytes."
        )

    # Parser callbacks: a bound passed stops the parser (Refused), data_received answers.
    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.message_begun = True
        self.body_bytes = 0

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        if len(self.url) > self.edge.max_target_bytes:
            raise Refused(self.target_too_long())

    def on_headers_complete(self) -> None:
        self.disarm()
        if len(self.headers) > self.edge.max_headers or self.head_size() > self.edge.max_head_bytes:
            raise Refused(self.head_too_large())  # a head that came in fewer reads than its size
        hosts = sum(1 for name, _ in self.headers if name == b"host")
        if hosts > 1 or (hosts == 0 and self.parser.get_http_version() == "1.1"):
            raise Refused(NO_SINGLE_HOST)
        length = self.parser_content_length()
        if length is not None and length > self.edge.max_body_bytes:
            raise Refused(_too_large(self.edge))  # before the application sees the request
        self.reading_head = False
        self.head_bytes = 0
        super().on_headers_complete()

    def head_size(self) -> int:
        return len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)

    def parser_content_length(self) -> int | None:
        for name, value in self.headers:
            if name == b"content-length":
                try:
                    return int(value)  # llhttp has checked it is one number
                except ValueError:
                    return None
        return None

    def on_body(self, body: bytes) -> None:
        self.body_bytes += len(body)
        if self.body_bytes > self.edge.max_body_bytes:
            raise Refused(_too_large(self.edge))
        super().on_body(body)

    def on_message_complete(self) -> None:
        self.disarm()
        self.reading_head, self.message_begun = True, False
        self.completed += 1
        super().on_message_complete()

    # Deadlines: one at a time (the head's, then the body's); the idle keep-alive is uvicorn's.
    def arm(self, seconds: float, then: Any) -> None:
        self.disarm()
        self.deadline = self.loop.call_later(seconds, then)

    def arm_once(self, seconds: float, then: Any) -> None:
        """From the first read that leaves a head (or a body) unfinished, not the last."""
        if self.deadline is None:
            self.arm(seconds, then)

    def disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def head_timed_out(self) -> None:
        self.deadline = None
        if self.message_begun:
            self.refuse(HEAD_TOO_SLOW)
        elif self.cycle is not None and not self.cycle.response_complete:
            pass  # blank lines after a request still being answered; keep-alive follows it
        elif not self.transport.is_closing():
            self.transport.close()  # a connection that never sent a request: nothing to answer

    def body_timed_out(self) -> None:
        self.deadline = None
        self.refuse(BODY_TOO_SLOW)

    def refuse(self, refusal: Refusal, *extra: tuple[bytes, bytes]) -> None:
        """Answer with the envelope, linger, close. No answer where one would be taken for
        another request's: the application answered this request already (it need not read a
        body), or is still answering an earlier one on this connection (pipelining)."""
        self.refusing = True
        self.disarm()
        self._unset_keepalive_if_required()
        cycle = self.cycle
        in_flight = cycle is not None and not cycle.response_complete
        answered = cycle is not None and not self.reading_head and cycle.response_started
        if in_flight:
            cycle.disconnected = True  # its receive() now says the client is gone
            cycle.message_event.set()
        if self.transport.is_closing():
            return
        if answered or (in_flight and self.reading_head):
            self.transport.close()
            return
        self.transport.write(self.refusal_bytes(refusal, extra))
        # Counted apart from the routes (a refused request may have no method or path yet).
        metrics.observe_request("-", "edge", refusal.status, 0.0)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_SECONDS, self.transport.close)

    def refusal_bytes(self, refusal: Refusal, extra: tuple[tuple[bytes, bytes], ...]) -> bytes:
        request_id = new_request_id()
        body = msgspec.json.encode(envelope(request_id, refusal.code, refusal.message))
        phrase = http.HTTPStatus(refusal.status).phrase
        headers = [
            *self.server_state.default_headers,
            (b"content-type", b"application/json"),
            (b"content-length", b"%d" % len(body)),
            (b"service-request-id", request_id.encode()),
            (b"connection", b"close"),
            *extra,
        ]
        lines = [b"HTTP/1.1 %d %s\r\n" % (refusal.status, phrase.encode())]
        lines += [name + b": " + value + b"\r\n" for name, value in headers]
        return b"".join([*lines, b"\r\n", body])


def bounded_protocol(limits: EdgeLimits) -> type[BoundedHttpToolsProtocol]:
    """The protocol class for one server in this process, with its own limits."""
    return type("BoundedHttpToolsProtocol", (BoundedHttpToolsProtocol,), {"limits": limits})

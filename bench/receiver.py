"""A minimal webhook receiver for the delivery benchmark: answers 200 to every POST and keeps
when each `Service-Event-Id` first arrived; `GET /stats` returns them (a raw ASGI app, so the
receiver costs as little as possible and is the same for the dispatcher and the plain loop)."""

from __future__ import annotations

import json
import time
from typing import Any

arrivals: dict[str, float] = {}
posts = 0

OK = {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"0")]}
EMPTY = {"type": "http.response.body", "body": b""}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    global posts
    if scope["type"] != "http":
        return
    more = True
    while more:  # drain the body
        message = await receive()
        more = message.get("more_body", False)
    if scope["method"] == "POST":
        now = time.time()
        posts += 1
        for name, value in scope["headers"]:
            if name == b"service-event-id":
                arrivals.setdefault(value.decode(), now)
        await send(OK)
        await send(EMPTY)
        return
    if scope["path"] == "/count":  # cheap to ask often, while deliveries still arrive
        body = str(len(arrivals)).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
        return
    if scope["path"] == "/reset":
        arrivals.clear()
        posts = 0
    body = json.dumps({"posts": posts, "arrivals": arrivals}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})

"""The webhook roles `partner-api serve --role publisher|dispatcher` can run."""

from __future__ import annotations

from runtime.roles import register_role
from webhooks.dispatcher import WebhookDispatcher
from webhooks.outbox import OutboxPublisher

register_role("publisher", OutboxPublisher)
register_role("dispatcher", WebhookDispatcher)

"""Partner organizations: the tenant of every other resource and owner of the rate allowance."""

from __future__ import annotations

from typing import ClassVar

from eventsourcing.domain import Aggregate, event


class Organization(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    RateLimitChanged: ClassVar[type[Aggregate.Event]]
    WebhookEndpointSet: ClassVar[type[Aggregate.Event]]
    WebhookSecretRotated: ClassVar[type[Aggregate.Event]]
    WebhookTestRequested: ClassVar[type[Aggregate.Event]]

    @event("Created")
    def __init__(
        self, *, name: str, rate_rps: float | None, rate_burst: int | None, created_at: float
    ) -> None:
        self.name = name
        self.rate_rps = rate_rps
        self.rate_burst = rate_burst
        self.created_at = created_at
        self.webhook_url: str | None = None
        self.webhook_secret_sealed: str | None = None

    @event("RateLimitChanged")
    def change_rate_limit(self, *, rate_rps: float | None, rate_burst: int | None) -> None:
        self.rate_rps = rate_rps
        self.rate_burst = rate_burst

    @event("WebhookEndpointSet")
    def set_webhook_endpoint(self, *, url: str, secret_sealed: str) -> None:
        # The secret is sealed (encrypted) before it reaches an event: events are never secret-free
        # once stored, so the plain value must never be in one.
        self.webhook_url = url
        self.webhook_secret_sealed = secret_sealed

    @event("WebhookSecretRotated")
    def rotate_webhook_secret(self, *, secret_sealed: str) -> None:
        self.webhook_secret_sealed = secret_sealed

    def request_webhook_test(self, *, environment: str, requested_at: float) -> None:
        """A `webhook.test` event on demand; recorded here so it takes the same outbox path
        as every other public event."""
        self._webhook_test_requested(environment=environment, requested_at=requested_at)

    @event("WebhookTestRequested")
    def _webhook_test_requested(self, *, environment: str, requested_at: float) -> None:
        self.last_webhook_test_at = requested_at

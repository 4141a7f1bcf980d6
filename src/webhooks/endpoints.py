"""Webhook endpoint registration: one URL and one secret per organization (spec 6).

The secret is shown once, when it is made; the aggregate only ever holds it sealed. The one
endpoint serves live and sandbox events alike, so a sandbox key may look at it but not change
it (`refuse_sandbox_change`): sandbox work never redirects live deliveries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from domain.errors import DomainError
from domain.organizations import Organization
from infra.conflicts import retry_conflicts
from infra.ids import parse_id
from views.events import EndpointOut, EndpointSecretOut
from webhooks.commands import SetWebhookEndpoint
from webhooks.signing import new_secret
from webhooks.urls import check_registration

if TYPE_CHECKING:
    from runtime.container import Container


def refuse_sandbox_change(environment: str) -> None:
    """403 for a key of any environment but live: only live keys (and the operator) change
    the endpoint or its secret."""
    if environment != "live":
        raise DomainError(
            "forbidden",
            "The webhook endpoint serves live and sandbox events alike: change it with a live "
            "key (full preset) or the operator CLI (partner-api webhook set).",
        )


@dataclass(frozen=True)
class Endpoint:
    url: str
    secret: str


class WebhookEndpoints:
    def __init__(self, container: Container) -> None:
        self.container = container

    def _organization(self, org_id: str) -> Organization:
        org = self.container.store.find(parse_id("org", org_id), Organization)
        if org is None:
            raise DomainError("not_found", "No such organization.")
        return org  # type: ignore[no-any-return]

    def describe(self, org_id: str) -> EndpointOut:
        org = self._organization(org_id)
        return EndpointOut(url=org.webhook_url, secret_set=org.webhook_secret_sealed is not None)

    def set_url(self, org_id: str, command: SetWebhookEndpoint) -> EndpointSecretOut:
        """Save the URL with a new secret, returned here and never again."""
        url = command.url
        check_registration(url, self.container.settings.allow_http_webhooks)

        def run() -> EndpointSecretOut:
            org = self._organization(org_id)
            secret = new_secret()
            org.set_webhook_endpoint(url=url, secret_sealed=self.container.sealer.seal(secret))
            self.container.store.save(org)
            return EndpointSecretOut(url=url, secret=secret)

        # A concurrent PUT or rotate saved the organization first: decide again on fresh
        # state (last writer wins) instead of answering 500.
        return retry_conflicts(run)

    def rotate_secret(self, org_id: str) -> EndpointSecretOut:
        def run() -> EndpointSecretOut:
            org = self._organization(org_id)
            if org.webhook_url is None:
                raise DomainError(
                    "invalid_request", "Set a webhook URL before rotating its secret."
                )
            secret = new_secret()
            org.rotate_webhook_secret(secret_sealed=self.container.sealer.seal(secret))
            self.container.store.save(org)
            return EndpointSecretOut(url=org.webhook_url, secret=secret)

        return retry_conflicts(run)

    def send_test(self, org_id: str, environment: str) -> int:
        """Record a `webhook.test` event; returns its notification id (for read-your-writes)."""

        def run() -> int:
            org = self._organization(org_id)
            now = self.container.clock.now()
            org.request_webhook_test(environment=environment, requested_at=now)
            return self.container.store.save(org)[-1].notification.id

        return retry_conflicts(run)

    def endpoint(self, org_id: str) -> Endpoint | None:
        """The URL and the plain secret deliveries are signed with, if one is registered."""
        org = self._organization(org_id)
        if org.webhook_url is None or org.webhook_secret_sealed is None:
            return None
        return Endpoint(org.webhook_url, str(self.container.sealer.unseal(org.webhook_secret_sealed)))


def endpoints_of(container: Container) -> WebhookEndpoints:
    service = container.extras.get("webhook_endpoints")
    if service is None:
        service = container.extras["webhook_endpoints"] = WebhookEndpoints(container)
    return service

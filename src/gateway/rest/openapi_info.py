"""The document's `info` and tag list: what a reader of the API page or a generated client's
README sees before any operation."""

from __future__ import annotations

from litestar.openapi.spec import Contact, License, Tag

DESCRIPTION = """\
Provision sending infrastructure for your customers: workspaces at a mail sequencing provider,
bundles that size an order, orders that buy and connect domains with their inboxes, domain
swaps, a warm domain pool and the webhooks that report each step.

**Authentication**: every call takes `Authorization: Bearer <key>`. A `pk_test_` key works in
the sandbox, a `pk_live_` key on live resources; the two never see each other's data.

**Errors** answer one envelope, `{"error": {"code", "message", "request_id", "field"?,
"details"?}}`, with a stable `code` to branch on (listed in `ErrorEnvelope`). Every answer
carries `Service-Request-Id`; quote it when reporting a problem. An unknown body property or
query parameter is refused (`invalid_request`, `field` naming it), never ignored.

**Retries**: `POST /orders`, `POST /workspaces` and `POST /domains/purchase` require an
`Idempotency-Key`; a retry with the same key and body within 24 hours answers the first
response (`Idempotent-Replayed: true`). Other writes that list the header honour it.

**Lists** are pages: pass `per_page` (1-100) and follow `links.next` (or `page_token`).

**Webhooks**: the `webhooks` section lists every event type with its signed envelope.
"""

CONTACT = Contact(name="Partner Provisioning API support")
LICENSE = License(name="Proprietary", identifier="LicenseRef-Proprietary")

TAGS = [
    Tag(name="account", description="The API key and the organization it belongs to."),
    Tag(name="events", description="The organization's webhook events, the endpoint they are "
        "delivered to and its signing secret."),
    Tag(name="workspaces", description="Workspaces at the mail sequencing provider that orders "
        "connect domains to."),
    Tag(name="bundles", description="Named sizings (volume, suite split) an order can use "
        "instead of license counts."),
    Tag(name="users", description="Users of a workspace at the sequencing provider."),
    Tag(name="orders", description="Orders and quotes: buy and connect domains with their "
        "inboxes; pending actions an order waits on."),
    Tag(name="billing", description="The environment's wallet and the domain purchases it "
        "pays for."),
    Tag(name="domains", description="The domain inventory, availability, the TLD catalog and "
        "name generation."),
    Tag(name="domain imports", description="Bring domains registered elsewhere into the "
        "inventory."),
    Tag(name="domain forwarding", description="Forward domains' web traffic to a URL."),
    Tag(name="pool", description="The warm domain pool: add, attach to a workspace, release, "
        "replace burned domains."),
    Tag(name="swaps", description="Replace a domain of an order, or rename its personas."),
    Tag(name="sandbox clock", description="The sandbox's own clock: move it forward to try "
        "time-driven rules (grace windows, warm periods, renewals, webhook retries) at once."),
    Tag(name="webhooks", description="What the service POSTs to the organization's endpoint: "
        "one signed envelope per event type."),
]

"""Everything the service runs, named in one place: the read models one follower applies, and
every role `partner-api serve --role NAME` can start, in the order they start."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from audit.role import AuditChainRole
from gateway.grpc.role import GrpcRole
from projections.api_keys import ApiKeyList
from projections.base import ReadModel
from projections.catalog import CatalogLists
from projections.domain_jobs import DomainJobs
from projections.domains import DomainInventory
from projections.fulfillment_work import FulfillmentWork
from projections.orders import OrderList
from projections.pool import PoolReadModel
from projections.swaps import SwapList
from runtime.roles import ProjectionsRole, Role
from webhooks.dispatcher import WebhookDispatcher
from webhooks.event_log import WebhookEventLog
from webhooks.outbox import OutboxPublisher
from workers.domain_jobs import DomainWorker
from workers.orders import FulfillmentWorker
from workers.pool import PoolWorker
from workers.swaps import SwapWorker

if TYPE_CHECKING:
    from runtime.container import Container

RoleFactory = Callable[["Container"], Role]


def all_read_models() -> list[ReadModel]:
    """Applied in this order by one follower, so one tracked position covers them all."""
    return [
        ApiKeyList(),
        WebhookEventLog(),
        CatalogLists(),
        OrderList(),
        DomainInventory(),
        DomainJobs(),
        PoolReadModel(),
        FulfillmentWork(),
        SwapList(),
    ]


# The REST gateway is not listed: it is the process's web server, which the others run beside.
ROLE_FACTORIES: dict[str, RoleFactory] = {
    "projections": ProjectionsRole,
    "publisher": OutboxPublisher,
    "dispatcher": WebhookDispatcher,
    "grpc": GrpcRole,
    "audit": AuditChainRole,
    "worker": FulfillmentWorker,  # orders, renewals and what a sandbox clock brings due
    "domains": DomainWorker,  # import and forwarding jobs
    "pool": PoolWorker,  # pool reservations and releases
    "swaps": SwapWorker,
}

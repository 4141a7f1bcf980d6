"""Every read model, applied in order by one follower (so one position covers them all)."""

from __future__ import annotations

from projections.api_keys import ApiKeyList
from projections.base import ReadModel
from projections.catalog import CatalogLists
from projections.domain_jobs import DomainJobs
from projections.domains import DomainInventory
from projections.fulfillment_work import FulfillmentWork
from projections.orders import OrderList
from projections.pool import PoolReadModel
from projections.swaps import SwapList
from webhooks.event_log import WebhookEventLog


def all_read_models() -> list[ReadModel]:
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

"""Every `/partner/v1` controller, in one list the app factory mounts."""

from __future__ import annotations

from typing import Any

from gateway.rest.bundles import BundlesController
from gateway.rest.domains import DomainsController
from gateway.rest.events import EventsController, WebhookEndpointController
from gateway.rest.forwarding import ForwardingController
from gateway.rest.imports import ImportsController
from gateway.rest.me import MeController
from gateway.rest.orders import OrdersController
from gateway.rest.pool import PoolController
from gateway.rest.purchase import PurchaseController
from gateway.rest.quotes import QuotesController
from gateway.rest.sandbox_clock import SandboxClockController
from gateway.rest.swaps import SwapsController
from gateway.rest.tlds_generate import TldsGenerateController
from gateway.rest.users import UsersController
from gateway.rest.wallet import WalletController
from gateway.rest.workspaces import WorkspacesController


def partner_controllers() -> list[Any]:
    return [
        MeController,
        EventsController,
        WebhookEndpointController,
        WorkspacesController,
        BundlesController,
        UsersController,
        OrdersController,
        QuotesController,
        WalletController,
        PurchaseController,
        DomainsController,
        TldsGenerateController,
        ImportsController,
        ForwardingController,
        PoolController,
        SwapsController,
        SandboxClockController,
    ]

"""`partner-api webhook set ORG_ID URL`: register an organization's webhook endpoint."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from cli.help import add_command, add_group
from cli.main import EXTENSIONS, command
from runtime.container import Container
from webhooks.commands import SetWebhookEndpoint
from webhooks.endpoints import endpoints_of


def add_parsers(groups: Any) -> None:
    webhook = add_group(
        groups,
        "webhook",
        "an organization's webhook endpoint and signing secret",
        "partner-api webhook set org_... https://partner.example/hooks",
    )
    set_url = add_command(
        webhook,
        "set",
        "set the URL; prints the new signing secret once",
        "partner-api webhook set org_... https://partner.example/hooks",
    )
    set_url.add_argument("org_id", help="org_... id")
    set_url.add_argument("url", help="https URL that receives the signed events")
    rotate = add_command(
        webhook,
        "rotate",
        "replace the signing secret; prints the new one once",
        "partner-api webhook rotate org_...",
    )
    rotate.add_argument("org_id", help="org_... id")


EXTENSIONS.append(add_parsers)


@command("webhook", "set")
def webhook_set(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    saved = endpoints_of(c).set_url(args.org_id, SetWebhookEndpoint(url=args.url))
    printed: dict[str, Any] = msgspec.to_builtins(saved)
    return printed


@command("webhook", "rotate")
def webhook_rotate(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    printed: dict[str, Any] = msgspec.to_builtins(endpoints_of(c).rotate_secret(args.org_id))
    return printed

"""`partner-api webhook set ORG_ID URL`: register an organization's webhook endpoint."""

from __future__ import annotations

import argparse
from typing import Any

from cli.main import EXTENSIONS, command
from runtime.container import Container
from webhooks.endpoints import endpoints_of


def add_parsers(groups: Any) -> None:
    webhook = groups.add_parser("webhook").add_subparsers(dest="action", required=True)
    set_url = webhook.add_parser("set", help="set the URL; prints the new secret once")
    set_url.add_argument("org_id")
    set_url.add_argument("url")
    webhook.add_parser("rotate", help="replace the signing secret").add_argument("org_id")


EXTENSIONS.append(add_parsers)


@command("webhook", "set")
def webhook_set(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    return endpoints_of(c).set_url(args.org_id, args.url)


@command("webhook", "rotate")
def webhook_rotate(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    return endpoints_of(c).rotate_secret(args.org_id)

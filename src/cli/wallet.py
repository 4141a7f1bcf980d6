"""`partner-api wallet credit ORG_ID CENTS`: credit an organization's live wallet."""

from __future__ import annotations

import argparse
from typing import Any

from cli.main import EXTENSIONS, command
from runtime.container import Container
from services.wallet import credit


def _parser(groups: Any) -> None:
    wallet = groups.add_parser("wallet", help="billing wallets").add_subparsers(
        dest="action", required=True
    )
    credit_cmd = wallet.add_parser("credit", help="credit the live wallet (sandbox never bills)")
    credit_cmd.add_argument("org_id")
    credit_cmd.add_argument("cents", type=int)


@command("wallet", "credit")
def wallet_credit(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    result = credit(c, args.org_id, args.cents)
    return {"org_id": result["org_id"], "balance_cents": result["balance_cents"]}


EXTENSIONS.append(_parser)

"""`partner-api wallet credit ORG_ID CENTS`: credit an organization's live wallet."""

from __future__ import annotations

import argparse
from typing import Any

from cli.help import add_command, add_group
from cli.main import EXTENSIONS, command
from runtime.container import Container
from services.accounts.commands import MAX_CREDIT_CENTS, CreditWallet
from services.accounts.wallet import credit_wallet


def _parser(groups: Any) -> None:
    wallet = add_group(
        groups, "wallet", "billing wallets", "partner-api wallet credit org_... 5000"
    )
    credit_cmd = add_command(
        wallet,
        "credit",
        "credit the live wallet (sandbox never bills)",
        "partner-api wallet credit org_... 5000   # $50.00",
    )
    credit_cmd.add_argument("org_id", help="org_... id")
    credit_cmd.add_argument(
        "cents", type=_cents, help=f"amount in cents, 1 to {MAX_CREDIT_CENTS:,}"
    )


def _cents(text: str) -> int:
    """Checked here too: through the server, an amount past int64 never reaches the check."""
    number = int(text)
    if not 0 < number <= MAX_CREDIT_CENTS:
        raise argparse.ArgumentTypeError(f"must be 1 to {MAX_CREDIT_CENTS}, not {number}")
    return number


@command("wallet", "credit")
def wallet_credit(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    credited = credit_wallet(c, CreditWallet(org_id=args.org_id, amount_cents=args.cents))
    return {"org_id": credited.org_id, "balance_cents": credited.balance_cents}


EXTENSIONS.append(_parser)

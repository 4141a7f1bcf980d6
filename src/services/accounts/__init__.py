"""Accounts: what an organization holds besides its orders.

Use cases (commands in `commands.py`, views in `views/`):
- `workspaces`: `create_workspace` (CreateWorkspace), `update_workspace` (UpdateWorkspace),
  `get_workspace`; the sequencer-kind rules and sealed credentials.
- `users`: `create_user` (CreateUser), `get_user`.
- `wallet`: `credit_wallet` (CreditWallet, operators), `load_wallet` (charges and refunds of
  orders, swaps and renewals go through it).
- `keys`: organizations and API keys (`Accounts`: issue, revoke, authenticate), `describe_me`.
"""

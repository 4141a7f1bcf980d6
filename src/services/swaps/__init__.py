"""Swaps: replace a domain of a completed order, or rename its mailboxes.

- `use_cases`: `create_swap` (CreateSwap), `rename_user_names` (RenameSwapUserNames),
  `get_swap`; `advance_swap`, `recheck_waiting`, `detach_warm_domain` (the swap worker's moves).
- `plan`: checking a swap request and choosing its new domain; `steps`: its provisioning steps.
"""

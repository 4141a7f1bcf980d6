"""Orders: place, quote, read, cancel, resolve pending actions, and the fulfillment moves.

- `use_cases`: `place_order` (PlaceOrder), `quote` (PlaceOrder, no side effect), `get_order`,
  `cancel_order`, `resolve_action` (ResolvePendingAction); `apply_outcome` and
  `finalize_cancel` (the worker's moves).
- `plan`: checking an order body and pricing it (`plan_order`).
- `steps`: the provisioning steps (`run_step`, `run_all`).
"""

"""The sandbox clock (decisions.md 6).

- `clock`: `get_sandbox_clock`, `advance_sandbox_clock` (AdvanceSandboxClock), `run_due`.
- `due`: what comes due on the way (grace windows, warm periods, renewals, lapses, webhook
  attempts).
"""

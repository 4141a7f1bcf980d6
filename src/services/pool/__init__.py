"""The domain pool (spec 4): add, remove, attach, release, replacement of burned domains.

- `inventory`: `add_domains` (AddPoolDomains), `remove_domains` (RemovePoolDomains).
- `attach`: `attach` (AttachPool) and `release` (ReleasePool), finished by the pool worker
  (`complete_reservation`, `complete_release`); events on `domain/pool_reservations.py` and
  `domain/pool_releases.py`, read model `projections/pool.py`, route `gateway/rest/pool.py`.
- `replacements`: `replace_burned`.
- `eligibility`: who may enter the pool; `leaving`: what swaps, cancellations and lapses do to
  a pooled domain; `records`: loading pool aggregates.
"""

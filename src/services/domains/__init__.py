"""Domains: availability, inventory, generation, imports, forwarding, purchase, renewal.

Use cases (commands in `commands.py`):
- `use_cases`: `check_availability` (CheckAvailability), `get_domain`, `render_rows`.
- `generation`: `generate` (GenerateDomains), `tld_catalog`.
- `imports`: `import_now` (ImportDomains), `submit_job` (SubmitImportJob), `advance_job`.
- `forwarding`: `submit` (SetForwarding), `finish_job`.
- `purchase`: `purchase_domains` (PurchaseDomains).
- `renewals`: `update_domain` (UpdateDomain: auto_renew), `run_term` (renewal or lapse).
- `claims`: the placement lock orders and swaps take on their domains.
"""

"""Catalog: what can be ordered and at what price.

Use cases: `bundles`: `create_bundle` (CreateBundle), `update_bundle` (UpdateBundle),
`archive_bundle`, `get_bundle`; `sizing`: the bundle sizing rule (`size_bundle`);
`pricing`: prices in cents (`price_of`, `registration_price`).
"""

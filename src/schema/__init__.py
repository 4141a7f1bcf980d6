"""The vocabulary and documented rules shared by commands (what partners send) and views (what
they get back), so both write the same OpenAPI document."""

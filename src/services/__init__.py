"""Use cases by capability: each package's `commands.py` holds the typed commands its use cases
take; they answer views (`views/`) and write through `unit_of_work.py`."""

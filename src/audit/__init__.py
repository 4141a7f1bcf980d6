"""The auditor's tools: the stored history described, replayed, sealed and exported."""

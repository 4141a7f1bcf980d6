"""Documented responses of the REST operations."""

from __future__ import annotations

from dataclasses import dataclass

from litestar.openapi.datastructures import ResponseSpec


@dataclass
class ResponseDoc(ResponseSpec):
    """A documented response without Litestar's generated examples: they are random strings
    (an order `status` of `PwugAAGU...`) that contradict the schema and teach a reader nothing."""

    generate_examples: bool = False

"""`json.dumps` for read-model rows, the same text, without the encoder `json.dumps` builds on
each call with options (and the checks around it): a replay serialises a document or two per
event.

No circular-reference check: what is serialised comes from decoded events, never cyclic.
"""

from __future__ import annotations

from _json import encode_basestring_ascii, make_encoder
from json import JSONEncoder
from typing import Any

_default = JSONEncoder().default  # raises the same TypeError as json.dumps
_spaced = make_encoder(None, _default, encode_basestring_ascii, None, ": ", ", ", False, False, True)
_compact = make_encoder(None, _default, encode_basestring_ascii, None, ":", ",", False, False, True)


def json_text(obj: Any) -> str:
    """`json.dumps(obj)`."""
    return "".join(_spaced(obj, 0))


def compact_json_text(obj: Any) -> str:
    """`json.dumps(obj, separators=(",", ":"))`."""
    return "".join(_compact(obj, 0))

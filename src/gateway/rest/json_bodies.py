"""Decoding a request body by hand, for the full dot path in `field` (`POST /orders` and
`POST /quotes` decode `services.orders.commands.PlaceOrder` with it, decisions.md section 3)."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from litestar import Request

from domain.errors import invalid
from gateway.rest.errors import clean_msgspec_message, field_from_msgspec

# Re-exported: `gateway.rest.swaps` takes its personas in the order's shape.

T = TypeVar("T")


async def decode_body(request: Request[Any, Any, Any], kind: type[T]) -> T:
    """Decode here rather than through the handler signature: Litestar drops the nested part of
    msgspec's error path, and `field` must be the full dot path (`destination.foo`)."""
    raw = await request.body()
    try:
        return decode_json(raw, kind)
    except msgspec.ValidationError as exc:
        # msgspec validates while it parses, so `{"a":` is "unknown field 'a'" before it is
        # found cut short: only a body that is JSON gets the validation message.
        if _is_json(raw):
            raise invalid(clean_msgspec_message(str(exc)), field_from_msgspec(str(exc))) from None
    except (msgspec.DecodeError, UnicodeDecodeError):  # bad UTF-8 inside a string is the latter
        pass
    except RecursionError:
        raise invalid(TOO_DEEP) from None
    raise invalid("The body is not valid JSON.") from None


TOO_DEEP = "The body is nested too deeply."


def _is_json(raw: bytes) -> bool:
    try:
        msgspec.json.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return False
    except RecursionError:
        return True  # well-formed as far as it was read, deeper than any body of ours
    return True


def decode_json(raw: bytes, kind: type[T]) -> T:
    """Strict decoding, except that a whole number written with a fraction or an exponent
    (`6.0`, `1e3`) is an integer: JSON Schema, which the OpenAPI 3.1 document uses, counts it
    as one, so a body valid against the published schema is not refused for it."""
    try:
        return msgspec.json.decode(raw, type=kind)
    except msgspec.ValidationError as exc:
        if "got `float`" not in str(exc):
            raise
        try:
            return msgspec.convert(_whole_numbers_as_ints(msgspec.json.decode(raw)), type=kind)
        except msgspec.ValidationError:
            raise exc from None  # what was sent, `float`, rather than the int made of it


# Past int64 a number is refused as a float, as Litestar's own decoding of the body does.
_INT64 = 2**63


def _whole_numbers_as_ints(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and -_INT64 <= value < _INT64:
        return int(value)
    if isinstance(value, list):
        return [_whole_numbers_as_ints(item) for item in value]
    if isinstance(value, dict):
        return {key: _whole_numbers_as_ints(item) for key, item in value.items()}
    return value

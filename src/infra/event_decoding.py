"""Stored events turned back into domain events: the same objects as eventsourcing's
`Mapper.to_domain_event` builds, at a fraction of its cost.

eventsourcing decodes each event's JSON with `json` and an `object_hook`, a Python call for
every object in it; a replay decodes hundreds of thousands of events, and that was a quarter of
its time, and every role decodes each order's events again (loads, read models, the outbox).
Here msgspec parses the JSON (same values: numbers, strings and key order) and the few
`{"_type_": ..., "_data_": ...}` values our events hold at top level (the timestamp) go
through the transcoder's own transcodings. Anything else takes eventsourcing's path, so the
result never differs: a cipher or compressor, a custom mapper or transcoder, upcasting
(`class_version`), escapes (a key could spell `_type_` with `\\u`), a `_type_` anywhere
but a top-level value, JSON msgspec refuses (NaN, lone surrogates, out-of-range floats).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, cast
from uuid import UUID, SafeUUID

import msgspec
from eventsourcing.persistence import (
    JSONTranscoder,
    Mapper,
    Transcoding,
    find_id_convertor,
    str_to_uuid_convertor,
)
from eventsourcing.utils import resolve_topic

_TYPE_KEY = b'"_type_"'
_BACKSLASH = b"\\"  # any escape: rare in our events, and found with one memchr


_UNKNOWN_SAFETY = SafeUUID.unknown
_UNTYPED = object()  # a value that is not a transcoded one
_UNDECODABLE = object()  # a transcoded value only eventsourcing's own path may decode


def text_to_uuid(text: Any) -> UUID:
    """`UUID(text)` for the plain hex forms a store returns, without `UUID.__init__`'s
    parsing (a fifth of a replay's decoding); any other text goes through `UUID(text)`."""
    digits = text.replace("-", "")
    if len(digits) == 32 and digits.isalnum():
        try:
            value = int(digits, 16)
        except ValueError:
            return UUID(text)
        made = object.__new__(UUID)
        object.__setattr__(made, "int", value)
        object.__setattr__(made, "is_safe", _UNKNOWN_SAFETY)
        return made
    return UUID(text)


class _Kind:
    """What a topic's events need to be built: their class and how their ids are converted;
    `fast` False where eventsourcing must decode them (upcasting)."""

    __slots__ = ("cls", "fast", "id_type", "convert_id")

    def __init__(
        self, cls: type, fast: bool, id_type: type, convert_id: Callable[[Any], Any]
    ) -> None:
        self.cls = cls
        self.fast = fast
        self.id_type = id_type
        self.convert_id = convert_id


class EventDecoder:
    """`decoder(stored)`: the domain event, as `mapper.to_domain_event` would give it; `stored`
    is anything with a `StoredEvent`'s fields (a `Notification`, a replay's `StoredRow`)."""

    def __init__(self, mapper: Mapper[Any]) -> None:
        self.mapper = mapper
        transcoder = mapper.transcoder
        self._fast = (
            type(mapper) is Mapper
            and mapper.cipher is None
            and mapper.compressor is None
            and type(transcoder) is JSONTranscoder
        )
        self._transcodings: dict[str, Transcoding] = (
            transcoder.names if isinstance(transcoder, JSONTranscoder) else {}
        )
        self._parse = msgspec.json.Decoder().decode
        self._kinds: dict[str, _Kind] = {}

    def __call__(self, stored: Any) -> Any:
        kind = self._kinds.get(stored.topic) or self._learn(stored)
        data = stored.state
        if (
            not kind.fast
            or type(stored.originator_id) is not kind.id_type
            or type(data) is not bytes
            or _BACKSLASH in data
        ):
            return self.mapper.to_domain_event(stored)
        try:
            state = self._parse(data)
        except msgspec.DecodeError:
            return self.mapper.to_domain_event(stored)
        if (
            type(state) is not dict
            or "class_version" in state
            or not self._transcoded(state, data.count(_TYPE_KEY))
        ):
            return self.mapper.to_domain_event(stored)
        state["originator_id"] = kind.convert_id(stored.originator_id)
        state["originator_version"] = stored.originator_version
        event: Any = object.__new__(kind.cls)
        object.__setattr__(event, "__dict__", state)
        return event

    def _transcoded(self, state: dict[str, Any], typed: int) -> bool:
        """Decode the top-level transcoded values in place; False unless they are all the
        `"_type_"` occurrences of the text (a nested one would need decoding first)."""
        if typed == 0:
            return True
        if typed == 1:  # the usual case: the event's timestamp is its one transcoded value
            decoded = self._decoded(state.get("timestamp"))
            if decoded is not _UNTYPED and decoded is not _UNDECODABLE:
                state["timestamp"] = decoded
                return True
        for name, value in state.items():
            decoded = self._decoded(value)
            if decoded is _UNTYPED:
                continue
            if decoded is _UNDECODABLE:
                return False
            state[name] = decoded
            typed -= 1
            if typed == 0:
                return True  # every occurrence accounted for
        return False

    def _decoded(self, value: Any) -> Any:
        """A `{"_type_": ..., "_data_": ...}` value decoded by its transcoding; `_UNTYPED` for
        any other value, `_UNDECODABLE` where eventsourcing's path must decide."""
        if type(value) is not dict or len(value) != 2:
            return _UNTYPED
        if "_type_" not in value or "_data_" not in value:
            return _UNTYPED
        type_name, data = value["_type_"], value["_data_"]
        transcoding = self._transcodings.get(type_name) if type(type_name) is str else None
        if transcoding is None or type(data) in (dict, list):
            return _UNDECODABLE
        try:
            return transcoding.decode(data)
        except Exception:  # eventsourcing's path raises its own error for it
            return _UNDECODABLE

    def _learn(self, stored: Any) -> _Kind:
        cls = resolve_topic(stored.topic)
        id_type = type(stored.originator_id)
        convert_id = find_id_convertor(cls, cast(Hashable, id_type))
        if convert_id is str_to_uuid_convertor:
            convert_id = text_to_uuid
        fast = self._fast and getattr(cls, "class_version", 1) == 1
        kind = self._kinds[stored.topic] = _Kind(cls, fast, id_type, convert_id)
        return kind


class DecodingMapper(Mapper[Any]):
    """The event store's mapper: eventsourcing's, decoding through `EventDecoder`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        shipped: Mapper[Any] = Mapper(
            transcoder=self.transcoder, cipher=self.cipher, compressor=self.compressor
        )
        self._decode = EventDecoder(shipped)

    def to_domain_event(self, stored_event: Any) -> Any:
        return self._decode(stored_event)

"""A protobuf message as plain Python values, for the models that render it.

The protobuf JSON mapping (``json_format.MessageToDict``) writes 64-bit integers as strings and
Timestamps as strings; this keeps every integer an ``int`` and turns a Timestamp into an aware
UTC ``datetime`` (or what ``timestamp`` makes of it), so a pydantic model or ``orjson`` gets the
values' real types. Unset sub-messages and unset ``optional`` scalars are ``None``; of a
``oneof`` only the member that is set appears.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from google.protobuf.struct_pb2 import Struct
from google.protobuf.timestamp_pb2 import Timestamp

TIMESTAMP = Timestamp.DESCRIPTOR.full_name


def as_datetime(value: Timestamp) -> datetime:
    return value.ToDatetime(tzinfo=UTC)


def timestamp_of_seconds(seconds: int) -> Timestamp | None:
    """Unix seconds as a Timestamp; 0 (the tables' "never") is None, which leaves the field unset."""
    return Timestamp(seconds=seconds) if seconds else None


def timestamp_of_ms(ms: int) -> Timestamp | None:
    """Unix milliseconds as a Timestamp; 0 is None."""
    if not ms:
        return None
    out = Timestamp()
    out.FromMilliseconds(ms)
    return out


def plain(message: Message, timestamp: Callable[[Timestamp], Any] = as_datetime) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        oneof = field.containing_oneof
        has_presence = field.has_presence
        if oneof is not None and not oneof.name.startswith("_"):
            # A real oneof (not the synthetic one of a proto3 `optional`): only its set member.
            if message.WhichOneof(oneof.name) != field.name:
                continue
        elif has_presence and not field.is_repeated and not message.HasField(field.name):
            out[field.name] = None
            continue
        out[field.name] = _value(field, getattr(message, field.name), timestamp)
    return out


def _value(field: Any, value: Any, timestamp: Callable[[Timestamp], Any]) -> Any:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        value_field = field.message_type.fields_by_name["value"]
        return {k: _single(value_field, v, timestamp) for k, v in value.items()}
    if field.is_repeated:
        return [_single(field, v, timestamp) for v in value]
    return _single(field, value, timestamp)


def _single(field: Any, value: Any, timestamp: Callable[[Timestamp], Any]) -> Any:
    if field.message_type is None:
        return value
    if field.message_type.full_name == TIMESTAMP:
        return timestamp(value)
    return plain(value, timestamp)


def struct_values(struct: Struct) -> dict[str, Any]:
    """A ``Struct`` as plain values with its whole numbers as ``int``.

    A Struct holds every number as a double, so a count sent as 5 arrives as 5.0; every number
    we put in one (counts, caps, seconds, line numbers) is an integer when it is whole.
    """
    return _whole(json_format.MessageToDict(struct))  # type: ignore[no-any-return]


def _whole(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value

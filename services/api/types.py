"""The one rule for numbers and times in /v1 bodies, shared by every response model.

- Counts are JSON integers (``Count``), never floats or strings.
- Times are RFC 3339 UTC strings with a ``Z`` suffix and millisecond precision (``Timestamp``),
  whatever the service stored (Unix seconds, milliseconds or ``google.protobuf.Timestamp``):
  the route converts with one of the ``from_*`` helpers, the model serializes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

from pydantic import AfterValidator, Field, PlainSerializer, WithJsonSchema

if TYPE_CHECKING:  # the client imports these models and needs no protobuf at run time
    from google.protobuf import timestamp_pb2


def _as_utc(value: datetime) -> datetime:
    # A naive datetime is read as UTC: every service stores UTC.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def rfc3339(value: datetime) -> str:
    """``2026-11-24T11:22:07.123Z``."""
    return _as_utc(value).isoformat(timespec="milliseconds").replace("+00:00", "Z")


Timestamp = Annotated[
    datetime,
    AfterValidator(_as_utc),
    PlainSerializer(rfc3339, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "format": "date-time", "example": "2026-11-24T11:22:07.123Z"}),
]
Count = Annotated[int, Field(ge=0)]


def from_seconds(value: int | float) -> datetime | None:
    """Unix seconds; 0 (the services' "never") is None."""
    return datetime.fromtimestamp(value, UTC) if value else None


def from_ms(value: int | float) -> datetime | None:
    """Unix milliseconds; 0 is None."""
    return datetime.fromtimestamp(value / 1000, UTC) if value else None


def from_proto(value: timestamp_pb2.Timestamp) -> datetime | None:
    """A protobuf Timestamp; the unset (zero) value is None."""
    if not value.seconds and not value.nanos:
        return None
    return _as_utc(value.ToDatetime())

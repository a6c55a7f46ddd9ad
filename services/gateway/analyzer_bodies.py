"""The analyzer's messages as the REST bodies of ``services.api.analysis``.

A message goes through the protobuf JSON mapping (field names as in the proto, every field
printed) and is validated by its model, which then serializes it with the one rule of
``services.api.types``: 64-bit integers (JSON strings in the mapping) become integers again and
Timestamps RFC 3339 UTC strings. The two places where the mapping is not the REST shape are
converted here: a ``Param`` is its value, and a SARIF log (a ``Struct``) keeps its integers.
"""

from __future__ import annotations

from typing import Any, TypeVar

from google.protobuf import json_format, struct_pb2
from google.protobuf.message import Message
from pydantic import BaseModel

from services.api import analysis as a
from services.contracts.v1 import analyzer_pb2

M = TypeVar("M", bound=BaseModel)


def as_dict(message: Message) -> dict[str, Any]:
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def body(model: type[M], message: Message) -> M:
    return model.model_validate(as_dict(message))


def param(value: analyzer_pb2.Param) -> a.Param:
    kind = value.WhichOneof("kind")
    return "" if kind is None else getattr(value, kind)


def analysis(result: analyzer_pb2.AnalysisResult) -> a.AnalysisResult:
    raw = as_dict(result)
    raw.pop("sarif", None)
    for finding, message in zip(raw["findings"], result.findings, strict=True):
        finding["evidence"]["detail"] = {key: param(v) for key, v in message.evidence.detail.items()}
    return a.AnalysisResult.model_validate(raw)


def _integers(value: Any) -> Any:
    # A Struct holds every number as a double; SARIF's line numbers and indexes are integers.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integers(v) for v in value]
    return value


def sarif(log: struct_pb2.Struct) -> dict[str, Any]:
    """The SARIF 2.1.0 log as the analyzer wrote it."""
    return _integers(json_format.MessageToDict(log))  # type: ignore[no-any-return]

"""The analyzer's messages as the REST bodies of ``services.api.analysis``.

A message becomes plain values (``services.kit.messages.plain``: integers stay integers, unset
sub-messages and optionals None, Timestamps datetimes) and is validated by its model, which then
serializes it with the one rule of ``services.api.types``. The places where the message is not the
REST shape are converted here: a ``Param`` is its value, the indexer's History inlines its view,
and a SARIF log (a ``Struct``) keeps its integers.
"""

from __future__ import annotations

from typing import Any, TypeVar

from google.protobuf import struct_pb2
from google.protobuf.message import Message
from pydantic import BaseModel

from services.api import analysis as a
from services.contracts.v1 import analyzer_pb2
from services.kit.messages import plain, struct_values

M = TypeVar("M", bound=BaseModel)


def body(model: type[M], message: Message) -> M:
    return model.model_validate(plain(message))


def param(value: analyzer_pb2.Param) -> a.Param:
    kind = value.WhichOneof("kind")
    return "" if kind is None else getattr(value, kind)


def analysis(result: analyzer_pb2.AnalysisResult) -> a.AnalysisResult:
    raw = plain(result)
    raw.pop("sarif", None)
    for listed, messages in ((raw["findings"], result.findings), (raw["preexisting"], result.preexisting)):
        for finding, message in zip(listed, messages, strict=True):
            finding["evidence"]["detail"] = {key: param(v) for key, v in message.evidence.detail.items()}
    return a.AnalysisResult.model_validate(raw)


def review_context(context: analyzer_pb2.ReviewContext) -> a.ReviewContext:
    raw = plain(context)
    history = raw["history"].get("file")
    if history is not None:
        for view in ("repository", "single_file"):  # History's oneof: the view's fields, inlined
            history.update(history.pop(view, None) or {})
    return a.ReviewContext.model_validate(raw)


def sarif(log: struct_pb2.Struct) -> dict[str, Any]:
    """The SARIF 2.1.0 log as the analyzer wrote it."""
    return struct_values(log)

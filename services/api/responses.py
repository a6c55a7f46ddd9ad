"""The error body, and ``Open`` for shapes that let unknown fields through.

The response bodies live with their resource: ``services.api.repositories`` (repositories, index,
reads), ``services.api.account`` (account, teams), ``services.api.analysis`` (analysis, context,
dashboard, audits).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ErrorBody(BaseModel):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)  # always all three
    error: str = Field(description="Human-readable message")
    code: str = Field(description="Machine code from the spec's error table")
    details: dict[str, Any] = Field(default_factory=dict, description="Error-specific detail, e.g. the field")

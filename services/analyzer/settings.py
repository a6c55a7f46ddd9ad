from __future__ import annotations

from typing import ClassVar

from services.kit.settings import ServiceSettings


class AnalyzerSettings(ServiceSettings):
    service_name: ClassVar[str] = "analyzer"


def load() -> AnalyzerSettings:
    return AnalyzerSettings()

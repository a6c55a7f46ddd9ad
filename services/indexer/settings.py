from __future__ import annotations

from typing import ClassVar

from services.kit.settings import ServiceSettings


class IndexerSettings(ServiceSettings):
    service_name: ClassVar[str] = "indexer"


def load() -> IndexerSettings:
    return IndexerSettings()

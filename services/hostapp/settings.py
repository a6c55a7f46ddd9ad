from __future__ import annotations

from typing import ClassVar

from services.kit.settings import ServiceSettings


class HostAppSettings(ServiceSettings):
    service_name: ClassVar[str] = "hostapp"


def load() -> HostAppSettings:
    return HostAppSettings()

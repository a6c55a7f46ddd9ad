from __future__ import annotations

from typing import ClassVar

from services.kit.settings import ServiceSettings


class BillingSettings(ServiceSettings):
    service_name: ClassVar[str] = "billing"

    session_lifetime_hours: int = 24 * 14


def load() -> BillingSettings:
    return BillingSettings()

"""What every rule module of the analyzer works with, built once per process."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from services.analyzer.indexer_client import IndexerClient
from services.analyzer.quota import QuotaGate
from services.analyzer.settings import AnalyzerSettings
from services.analyzer.snapshot_facts import FactsCache
from services.analyzer.state import RepoCache
from services.kit.db import Database


@dataclass
class Deps:
    db: Database
    indexer: IndexerClient
    settings: AnalyzerSettings
    cache: RepoCache
    quota: QuotaGate | None = None
    facts: FactsCache = field(default_factory=lambda: FactsCache(0))
    # owner -> (monotonic time read, preferences.Effective); see preferences.py
    preferences: dict[str, tuple[float, Any]] = field(default_factory=dict)

    @classmethod
    def build(cls, db: Database, settings: AnalyzerSettings) -> Deps:
        return cls(
            db=db,
            indexer=IndexerClient(settings.indexer_addr, deadline=settings.grpc_deadline_seconds),
            settings=settings,
            cache=RepoCache(settings.cache_revalidate_seconds),
            facts=FactsCache(settings.facts_cache_repositories, settings.facts_cache_files),
            quota=QuotaGate(settings.billing_addr, ttl=settings.quota_cache_seconds)
            if settings.enforce_quota
            else None,
        )

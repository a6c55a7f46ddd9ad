"""Each repository's model, calibration and identity, kept in memory.

Checking a file against loaded conventions takes about a millisecond; loading them takes a
database round trip and a msgpack decode. So a replica keeps every repository it serves here,
replaces an entry when it learns or calibrates, and re-reads the repository's ``version`` at most
every ``cache_revalidate_seconds`` to pick up what other replicas did.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from services.analyzer.engine import Calibration, ConventionModel

EMPTY_CALIBRATION = Calibration()


@dataclass
class LoadedRepo:
    id: str
    full_name: str
    owner: str
    head_sha: str
    version: int
    model_id: str = ""
    commit: str = ""  # the commit the model was learned at
    model: ConventionModel | None = None  # learned conventions plus those from reports
    calibration: Calibration = EMPTY_CALIBRATION
    summary: dict[str, Any] = field(default_factory=dict)
    learned_at: int = 0
    checked_at: float = field(default_factory=time.monotonic)

    @property
    def ready(self) -> bool:
        return self.model is not None


class RepoCache:
    def __init__(self, revalidate_seconds: float) -> None:
        self.revalidate_seconds = revalidate_seconds
        self._by_id: dict[str, LoadedRepo] = {}
        self._by_name: dict[str, str] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def get(self, ref: str) -> LoadedRepo | None:
        entry = self._by_id.get(ref)
        if entry is None and "/" in ref:
            repo_id = self._by_name.get(ref.lower())
            entry = self._by_id.get(repo_id) if repo_id else None
        return entry

    def entries(self) -> list[LoadedRepo]:
        return list(self._by_id.values())

    def fresh(self, entry: LoadedRepo) -> bool:
        return time.monotonic() - entry.checked_at < self.revalidate_seconds

    def put(self, entry: LoadedRepo) -> None:
        entry.checked_at = time.monotonic()
        self._by_id[entry.id] = entry
        if entry.full_name:
            self._by_name[entry.full_name.lower()] = entry.id

    def touch(self, entry: LoadedRepo) -> None:
        entry.checked_at = time.monotonic()

    def drop(self, repo_id: str) -> None:
        entry = self._by_id.pop(repo_id, None)
        if entry is not None and entry.full_name:
            self._by_name.pop(entry.full_name.lower(), None)

    def lock(self, repo_id: str) -> asyncio.Lock:
        """Serializes learning and reloading per repository (one learn per commit, not one per request)."""
        lock = self._locks.get(repo_id)
        if lock is None:
            lock = self._locks[repo_id] = asyncio.Lock()
        return lock

"""Keeping a replica's in-memory repositories current in the background, not in a request.

Another replica learns a re-index (or calibrates from a report) and bumps the repository's
``version``. Without this loop, the first request here after ``cache_revalidate_seconds`` reads
the version, finds it moved, and reloads the model (a database read, a msgpack decode, the
calibration queries) and then builds the model's lookup tables, all before it answers. The loop
reads every cached repository's version in one query every half ``cache_revalidate_seconds``,
reloads and warms up (``model_warmup``) the changed ones, and marks the others checked, so
requests find their entry fresh; it re-reads the owners' preferences held the same way. When the
loop is behind or down, ``repo_lookup.resolve`` and ``preferences.for_owner`` read inline as
before, so the bound on how stale a replica can be is unchanged.
"""

from __future__ import annotations

import asyncio
import logging

from services.analyzer import loading, model_store, preferences, queries
from services.analyzer.deps import Deps
from services.kit.supervision import beat, idle

log = logging.getLogger(__name__)


async def refresh(deps: Deps) -> int:
    """One pass; returns how many repositories were reloaded."""
    await preferences.refresh_cached(deps)
    entries = [e for e in deps.cache.entries() if e.ready]
    if not entries:
        return 0
    async with deps.db.session() as session:
        versions = await queries.repository_versions(session, [e.id for e in entries])
    reloaded = 0
    for entry in entries:
        version = versions.get(entry.id)
        if version is None:
            deps.cache.drop(entry.id)
        elif version == entry.version:
            deps.cache.touch(entry)
        elif version > entry.version:
            async with deps.db.session() as session:
                row = await queries.repository_by_ref(session, entry.id)
                fresh = await loading.entry_for(session, row) if row is not None and row.model_id else None
            if fresh is None:
                continue
            await model_store.prepare_loaded(deps, fresh)
            current = deps.cache.get(entry.id)
            if current is None or current.version <= fresh.version:  # not replaced by a newer one meanwhile
                deps.cache.put(fresh)
                reloaded += 1
    return reloaded


async def run(deps: Deps) -> None:
    period = max(deps.settings.cache_revalidate_seconds / 2, 0.1)
    while True:
        try:
            await refresh(deps)
        except Exception as exc:
            # A failed pass costs nothing but speed: requests revalidate their entry inline. One
            # line, no traceback: while the database is down this repeats every pass.
            log.warning(
                "refreshing the repository cache failed (%s: %s); requests revalidate inline", type(exc).__name__, exc
            )
        beat()
        with idle():
            await asyncio.sleep(period)

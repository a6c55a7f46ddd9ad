"""Models an older engine learned are learned again in the background after an upgrade.

Every stored model records the ``MODEL_SCHEMA_VERSION`` of the engine that learned it; the
version goes up whenever learning changes what a model holds or means (a new rule, a changed
definition). On start, each analyzer replica walks the repositories whose current model is older
and relearns them one at a time from the indexer's last index, while the old model keeps serving
reviews; an advisory lock per repository keeps replicas from learning the same one twice, and
a repository that fails is left for its next index (``repository.indexed``) to relearn.
"""

from __future__ import annotations

import asyncio
import logging

from services.analyzer import model_store, queries
from services.analyzer.deps import Deps
from services.analyzer.engine.conventions import MODEL_SCHEMA_VERSION
from services.kit.db import try_advisory_lock
from services.kit.supervision import beat, idle

log = logging.getLogger(__name__)

_BATCH = 50
_PASSES = 3  # a pass that failed (the indexer still starting, say) is tried again
_FIRST_WAIT_SECONDS = 5.0
_RETRY_WAIT_SECONDS = 60.0


async def relearn_in_background(deps: Deps) -> None:
    """The start-up task: a few passes, apart, until one has nothing left that failed."""
    for attempt in range(_PASSES):
        with idle():
            await asyncio.sleep(_FIRST_WAIT_SECONDS if attempt == 0 else _RETRY_WAIT_SECONDS)
        done, failed = await relearn_outdated(deps)
        if done or failed:
            log.info("engine version %d: %d models relearned, %d failed", MODEL_SCHEMA_VERSION, done, failed)
        if not failed:
            return


async def relearn_outdated(deps: Deps) -> tuple[int, int]:
    """Relearn every repository whose model is older than this engine: (relearned, failed)."""
    done = 0
    failed: set[str] = set()
    while True:
        async with deps.db.session() as session:
            rows = await queries.outdated_models(session, MODEL_SCHEMA_VERSION, _BATCH, exclude=failed)
        learned = 0
        for row in rows:
            beat()
            try:
                learned += await _relearn(deps, row.id, owner=row.owner, full_name=row.full_name)
            except Exception:  # the old model keeps serving; the next index relearns it
                log.warning("relearning %s for engine version %d failed", row.id, MODEL_SCHEMA_VERSION, exc_info=True)
                failed.add(row.id)
        done += learned
        if not learned and not failed.intersection(r.id for r in rows):
            return done, len(failed)  # nothing left, or only what another replica is learning


async def _relearn(deps: Deps, repo_id: str, *, owner: str, full_name: str) -> bool:
    async with deps.cache.lock(repo_id):
        async with deps.db.session() as session:
            if not await try_advisory_lock(session, f"analyzer.relearn:{repo_id}"):
                return False
            schema = await queries.current_model_schema(session, repo_id)
            if schema is None or schema >= MODEL_SCHEMA_VERSION:
                return False  # relearned meanwhile (an indexed event, another replica) or deleted
            entry = await model_store.learn_and_store(deps, session, repo_id, "", owner=owner, full_name=full_name)
        deps.cache.put(entry)  # after the commit, as every learning run does
    log.info("relearned %s at %s for engine version %d", repo_id, entry.commit[:12], MODEL_SCHEMA_VERSION)
    return True

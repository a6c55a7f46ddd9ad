"""The event that tells every gateway worker a repository listing changed (docs/accounts.md, "Cached listings").

Staged in the transaction of every change a listing shows that no other event announces: a
registration or a claim, a retirement or reactivation, an index queued (a run leaving a finished
state). A run's end is announced by ``repository.indexed`` / ``repository.index_failed`` and a
deletion by ``repository.deleted``; progress inside a run needs none, as the gateway keeps no
listing that shows a queued or running index.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from services.contracts.v1 import events_pb2
from services.indexer.models import outbox
from services.kit.bus import SUBJECT_REPOSITORY_CHANGED
from services.kit.outbox import add_event


async def repository_changed(session: AsyncSession, repository_id: str, owner: str, reason: str) -> None:
    message = events_pb2.RepositoryChanged(repository_id=repository_id, owner=owner, reason=reason)
    await add_event(session, outbox, SUBJECT_REPOSITORY_CHANGED, "repository.changed", message)

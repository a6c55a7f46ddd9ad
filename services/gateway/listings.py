"""Repository listings kept for a short time, so that ``GET /v1/repositories`` does not pay the
indexer's round trip (docs/accounts.md, "Cached listings").

A listing is kept, as the JSON body it was answered with, under the owners the indexer filtered
it by (the caller's own account and organizations: ``accessible_owners``), the page size and the
cursor. A caller whose memberships change gets a new principal (billing's event drops the old one)
and so a new key: nobody is served a page filtered for owners they no longer have.

Only pages whose every index is finished (none queued or running) are kept: progress inside a run
changes without an event. What else a listing shows changes with an indexer event: a registration,
a claim, a retirement, an index queued (``repository.changed``), an index finished or failed, a
deletion. Any of them clears the whole cache of every gateway worker; the worker that carried a
change clears its own at once. Like the principal cache it keeps nothing while its subscription
is down (``LiveCache``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from services.contracts.v1 import events_pb2, indexer_pb2
from services.gateway.livecache import LiveCache
from services.kit.bus import (
    SUBJECT_INDEX_FAILED,
    SUBJECT_REPOSITORY_CHANGED,
    SUBJECT_REPOSITORY_DELETED,
    SUBJECT_REPOSITORY_INDEXED,
)
from services.kit.metrics import REPOSITORY_LIST_CACHE

# The indexer events after which a kept listing may be untrue.
SUBJECTS = (SUBJECT_REPOSITORY_CHANGED, SUBJECT_REPOSITORY_INDEXED, SUBJECT_INDEX_FAILED, SUBJECT_REPOSITORY_DELETED)
# Index states that change only through one of those events (no run, or a finished one).
SETTLED_STATES = frozenset({"", "ready", "failed"})

ListingKey = tuple[tuple[str, ...], int, str]  # (owners, limit, cursor)


def settled(response: indexer_pb2.ListRepositoriesResponse) -> bool:
    """No repository on the page has an index queued or running."""
    return all(r.index.state in SETTLED_STATES for r in response.repositories)


class RepositoryListCache(LiveCache[ListingKey, bytes]):
    def __init__(self, ttl_seconds: float, max_entries: int, clock: Callable[[], float] = time.time) -> None:
        super().__init__("repository list", ttl_seconds, max_entries, clock, REPOSITORY_LIST_CACHE)

    async def on_repository_event(self, env: events_pb2.EventEnvelope) -> None:
        self.clear(env.type or "repository event")

"""Validated principals kept for a short time, so that a request does not pay billing's round trip.

The cache is correct only while it hears billing's events: ``PrincipalsChanged`` (a token revoked
or signed out, a role or a membership changed) and ``SubscriptionChanged`` (a plan, so the rate
limits) drop the principals they concern. It therefore holds nothing unless its subscription is
live: a disconnect or a slow-consumer error (an event may be lost) clears it, and it stays empty
until the connection is back. A validation that started before any drop is not stored, so an
answer that crossed a revocation on the wire cannot put the revoked principal back. The TTL is the
backstop for an event path that fails without the connection noticing (docs/accounts.md).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from services.contracts.v1 import common_pb2, events_pb2
from services.gateway.livecache import LiveCache
from services.kit.metrics import PRINCIPAL_CACHE, PRINCIPAL_CACHE_LIVE

log = logging.getLogger(__name__)


class PrincipalCache(LiveCache[str, common_pb2.Principal]):
    """Token digest -> the principal billing validated it as."""

    def __init__(self, ttl_seconds: float, max_entries: int, clock: Callable[[], float] = time.time) -> None:
        super().__init__("principal", ttl_seconds, max_entries, clock, PRINCIPAL_CACHE, PRINCIPAL_CACHE_LIVE)

    def drop_users(self, user_ids: set[str]) -> int:
        return self.drop(lambda p: p.user_id not in user_ids)

    def drop_owner(self, owner: str) -> int:
        """A plan changed for ``user:<id>`` or ``org:<id>``: that user's, or that organization's members'."""
        kind, _, ident = owner.partition(":")
        if kind == "org":
            return self.drop(lambda p: all(m.org_id != ident for m in p.memberships))
        return self.drop(lambda p: p.user_id != ident)

    async def on_principals_changed(self, env: events_pb2.EventEnvelope) -> None:
        changed = events_pb2.PrincipalsChanged.FromString(env.payload)
        dropped = self.drop_users(set(changed.user_ids))
        log.info("principals changed (%s): %d cached dropped", changed.reason, dropped)

    async def on_subscription_changed(self, env: events_pb2.EventEnvelope) -> None:
        changed = events_pb2.SubscriptionChanged.FromString(env.payload)
        self.drop_owner(changed.owner)

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
from services.kit.metrics import PRINCIPAL_CACHE, PRINCIPAL_CACHE_LIVE

log = logging.getLogger(__name__)


class PrincipalCache:
    def __init__(self, ttl_seconds: float, max_entries: int, clock: Callable[[], float] = time.time) -> None:
        self.ttl = ttl_seconds
        self.max_entries = max_entries
        self.clock = clock
        self.live = False
        # Bumped by every drop: a validation that started under an older generation is not stored.
        self.generation = 0
        self._entries: dict[str, tuple[float, common_pb2.Principal]] = {}  # token digest -> (until, principal)

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, digest: str) -> common_pb2.Principal | None:
        entry = self._entries.get(digest)
        if entry is None or entry[0] <= self.clock():
            if entry is not None:
                del self._entries[digest]
            PRINCIPAL_CACHE.labels("miss").inc()
            return None
        PRINCIPAL_CACHE.labels("hit").inc()
        return entry[1]

    def put(self, digest: str, principal: common_pb2.Principal, token_expires_at: int, generation: int) -> None:
        """Keep a principal validated under ``generation`` (read before the validation began)."""
        if not self.live or generation != self.generation or self.ttl <= 0:
            return
        until = self.clock() + self.ttl
        if token_expires_at:
            until = min(until, float(token_expires_at))
        if len(self._entries) >= self.max_entries:
            self._entries.pop(next(iter(self._entries)))  # the oldest entry
        self._entries[digest] = (until, principal)

    def clear(self, reason: str) -> None:
        self.generation += 1
        if self._entries:
            log.info("principal cache cleared (%s): %d entries", reason, len(self._entries))
        self._entries.clear()

    def set_live(self, live: bool, reason: str) -> None:
        """Caching on (the event subscription is up) or off; either way what was kept goes."""
        self.live = live
        PRINCIPAL_CACHE_LIVE.set(1 if live else 0)
        self.clear(reason)

    def drop(self, keep: Callable[[common_pb2.Principal], bool]) -> int:
        self.generation += 1
        gone = [digest for digest, (_, principal) in self._entries.items() if not keep(principal)]
        for digest in gone:
            del self._entries[digest]
        return len(gone)

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

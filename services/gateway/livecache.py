"""What a gateway worker keeps only while it hears the events that make it untrue.

An entry is dropped by an event (``drop`` or ``clear``), or by its lifetime as a backstop for an
event path that failed without the connection noticing. The cache holds nothing unless its event
subscription is live: a disconnect or a slow-consumer error (an event may be lost) clears it, and
it stays empty until the subscription is back. Each drop bumps ``generation``: an answer fetched
under an older generation is not stored, so an answer that crossed a change on the wire cannot put
the old state back (docs/accounts.md, "Revocation"; docs/accounts.md, "Cached listings").
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, TypeVar

from prometheus_client import Counter, Gauge

log = logging.getLogger(__name__)

K = TypeVar("K")
V = TypeVar("V")


class LiveCache(Generic[K, V]):
    def __init__(
        self,
        name: str,
        ttl_seconds: float,
        max_entries: int,
        clock: Callable[[], float],
        lookups: Counter,
        live_gauge: Gauge | None = None,
    ) -> None:
        self.name = name
        self.ttl = ttl_seconds
        self.max_entries = max_entries
        self.clock = clock
        self.live = False
        self.generation = 0
        self._entries: dict[K, tuple[float, V]] = {}  # key -> (until, value)
        # Label children bound once: a labels() lookup per request is measurable on the hot path.
        self._hit = lookups.labels("hit")
        self._miss = lookups.labels("miss")
        self._live_gauge = live_gauge

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        entry = self._entries.get(key)
        if entry is None or entry[0] <= self.clock():
            if entry is not None:
                del self._entries[key]
            self._miss.inc()
            return None
        self._hit.inc()
        return entry[1]

    def put(self, key: K, value: V, until: float, generation: int) -> None:
        """Keep ``value`` fetched under ``generation`` (read before the fetch began); ``until``
        (unix seconds, 0: none) shortens its lifetime (a token's expiry)."""
        if not self.live or generation != self.generation or self.ttl <= 0:
            return
        expires = self.clock() + self.ttl
        if until:
            expires = min(expires, until)
        if len(self._entries) >= self.max_entries:
            self._entries.pop(next(iter(self._entries)))  # the oldest entry
        self._entries[key] = (expires, value)

    def clear(self, reason: str) -> None:
        self.generation += 1
        if self._entries:
            log.info("%s cache cleared (%s): %d entries", self.name, reason, len(self._entries))
        self._entries.clear()

    def set_live(self, live: bool, reason: str) -> None:
        """Caching on (the event subscription is up) or off; either way what was kept goes."""
        self.live = live
        if self._live_gauge is not None:
            self._live_gauge.set(1 if live else 0)
        self.clear(reason)

    def drop(self, keep: Callable[[V], bool]) -> int:
        self.generation += 1
        gone = [key for key, (_, value) in self._entries.items() if not keep(value)]
        for key in gone:
            del self._entries[key]
        return len(gone)

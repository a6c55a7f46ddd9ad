"""Long-lived ``git cat-file --batch`` readers shared by the read endpoints.

Spawning git costs a few milliseconds; an analysis of an indexed file reads one blob, so
``GetFile`` borrows a reader that stays alive between requests instead. Blobs are
content-addressed, so a reader never answers stale data; objects fetched after it started are
found too (git rescans its packs when an object is missing). A reader that fails is dropped, one
idle for ``idle_seconds`` is closed, and a repository's readers go when its mirror is removed.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from services.indexer.git.tree import BlobReader


class ReaderPool:
    def __init__(self, *, idle_seconds: float = 60.0, per_mirror: int = 2, timeout: float = 3600.0) -> None:
        self.idle_seconds = idle_seconds
        self.per_mirror = per_mirror
        self.timeout = timeout
        self._idle: dict[str, list[tuple[float, BlobReader]]] = {}
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def borrow(self, mirror: str, max_bytes: int) -> Iterator[BlobReader]:
        """A reader for ``mirror`` for the duration of the block; not shared while borrowed."""
        reader = self._take(mirror)
        if reader is None:
            reader = BlobReader(mirror, max_bytes=max_bytes, timeout=self.timeout)
        reader.max_bytes = max_bytes
        try:
            yield reader
        except BaseException:
            reader.close()  # its protocol state is unknown after a failure
            raise
        self._give_back(mirror, reader)

    def _take(self, mirror: str) -> BlobReader | None:
        stale: list[BlobReader] = []
        found = None
        now = time.monotonic()
        with self._lock:
            for key in list(self._idle):
                fresh = [(t, r) for t, r in self._idle[key] if now - t < self.idle_seconds]
                stale += [r for t, r in self._idle[key] if now - t >= self.idle_seconds]
                self._idle[key] = fresh
                if not fresh:
                    del self._idle[key]
            readers = self._idle.get(mirror)
            if readers:
                found = readers.pop()[1]
        for reader in stale:
            reader.close()
        return found

    def _give_back(self, mirror: str, reader: BlobReader) -> None:
        with self._lock:
            readers = self._idle.setdefault(mirror, [])
            if len(readers) < self.per_mirror:
                readers.append((time.monotonic(), reader))
                return
        reader.close()

    def has_idle(self, mirror: str) -> bool:
        with self._lock:
            return bool(self._idle.get(mirror))

    def forget(self, mirror: str) -> None:
        """Close the idle readers of a mirror that is about to be removed."""
        with self._lock:
            readers = self._idle.pop(mirror, [])
        for _t, reader in readers:
            reader.close()

    def close(self) -> None:
        with self._lock:
            readers = [r for items in self._idle.values() for _t, r in items]
            self._idle.clear()
        for reader in readers:
            reader.close()


# The process's pool: readers are OS processes, owned once per service process like its DB pool.
READERS = ReaderPool()

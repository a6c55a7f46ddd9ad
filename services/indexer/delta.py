"""What the last index of a repository left in this process, so the next one works by delta.

An index ends with everything the next incremental one needs already in memory: the tree,
every file's summary and resolved facts, the import resolver's lookups, the structure and the
file rows as written. Keeping that per repository (``StateCache``) turns the next run's
``load`` into a lookup and lets resolve, structure and the write touch only what changed.

A state is only used for the snapshot it describes: the pipeline asks for the one matching the
repository's current snapshot, and takes it out of the cache while it works (a run that fails
halfway leaves nothing half-updated behind). Another replica, a restart, or a run whose
snapshot never became current simply finds nothing and falls back to loading from the
database, which gives the same result more slowly. docs/indexing.md#incremental-indexing.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any

from services.indexer.bulk import FileRow
from services.indexer.facts_codec import FileSummary
from services.indexer.git import TreeEntry
from services.indexer.history_delta import HistoryState
from services.indexer.structure import Structure
from services.source.facts import FileFacts
from services.source.imports import Resolver


@dataclass
class IndexState:
    repository_id: str
    snapshot_id: str
    commit: str
    entries: dict[str, TreeEntry]  # path -> entry, in tree order
    summaries: dict[str, FileSummary]  # as extracted, before resolution
    files: dict[str, FileFacts]  # resolved against this tree
    resolver: Resolver
    structure: Structure
    modules: dict[str, str]  # module -> path of the structure's source files (import edges)
    rule: str  # structure.source_rule of the tree
    rows: dict[str, FileRow]  # snapshot_files rows as written
    documents: dict[str, bytes]  # encoded documents as written
    sums: dict[str, Any]  # the statistics document's counts and sums (pipeline._sums)
    history: HistoryState  # the sums behind the history document
    left_out: list[str]  # notes on the paths no API can address (addressable.split_addressable)


class StateCache:
    """At most ``size`` repositories' states, least recently used out first."""

    def __init__(self, size: int = 2) -> None:
        self.size = size
        self._states: OrderedDict[str, IndexState] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, repository_id: str, snapshot_id: str | None) -> IndexState | None:
        """The state of ``snapshot_id``, removed from the cache; None when there is none."""
        with self._lock:
            state = self._states.pop(repository_id, None)
        if state is None or snapshot_id is None or state.snapshot_id != snapshot_id:
            return None
        return state

    def put(self, state: IndexState) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._states.pop(state.repository_id, None)
            self._states[state.repository_id] = state
            while len(self._states) > self.size:
                self._states.popitem(last=False)

    def drop(self, repository_id: str) -> None:
        with self._lock:
            self._states.pop(repository_id, None)


STATES = StateCache()


def file_edges(facts: FileFacts, modules: dict[str, str]) -> Counter[str]:
    """The import edges leaving one file, as ``structure.import_edges`` counts them."""
    edges: Counter[str] = Counter()
    for imp in facts.imports:
        target = imp.resolved_path or ("" if imp.is_relative else modules.get(imp.module, ""))
        if target and target != facts.path:
            edges[target] += 1
    return edges


def same_shape(old: FileFacts, new: FileFacts, modules: dict[str, str]) -> bool:
    """Whether replacing ``old`` by ``new`` leaves domains, segments and the network as they
    were: same membership and test-ness, same module, same outgoing import edges. Only the
    line counts of domains can then differ."""
    return (old.language, old.skipped, old.is_test, old.module) == (
        new.language,
        new.skipped,
        new.is_test,
        new.module,
    ) and file_edges(old, modules) == file_edges(new, modules)

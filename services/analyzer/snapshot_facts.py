"""A snapshot's facts kept between learning runs, so a re-index decodes only what changed.

The indexer streams every file's facts in path order. A replica keeps, per repository it learned
last, each path's facts with a digest of their encoded bytes; the next snapshot's stream is
compared digest by digest and only files whose bytes differ (changed, added, or whose resolved
imports moved because another file was added) are decoded. Kept and new facts are laid out in the
stream's order, so learning from them gives exactly the model a full decode gives
(``tests/analyzer/test_snapshot_facts.py`` checks it on chains of real edits). The state also
holds what each file taught the learners (``engine/learn_memo.py``), so that learning observes
only the decoded files again. Without a kept state (a restart, another replica learned last)
everything is decoded and observed, as before.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from services.analyzer.engine.learn_memo import LearnMemo
from services.source.facts import FileFacts, decode

Digest = bytes


def digest(data: bytes) -> Digest:
    return hashlib.blake2b(data, digest_size=16).digest()


@dataclass(frozen=True)
class SnapshotFacts:
    repository: str
    commit: str
    files: dict[str, tuple[Digest, FileFacts]]  # path -> (digest of the encoded facts, facts), stream order
    # What each file taught the learners, passed to ``learn`` and updated by it (learn_memo.py):
    # a relearn observes only the files whose facts changed.
    learned: LearnMemo = field(default_factory=LearnMemo)

    @property
    def facts(self) -> list[FileFacts]:
        return [f for _, f in self.files.values()]


@dataclass(frozen=True)
class FactsDelta:
    """What one update did: files decoded (changed or new), kept as they were, and gone."""

    decoded: int
    kept: int
    removed: int

    def as_dict(self) -> dict[str, int]:
        return {"decoded": self.decoded, "kept": self.kept, "removed": self.removed}


def update(
    previous: SnapshotFacts | None, repository: str, commit: str, blobs: Iterable[tuple[str, bytes]]
) -> tuple[SnapshotFacts, FactsDelta]:
    """The snapshot ``blobs`` describe ((path, encoded facts) in stream order), reusing ``previous``.

    Facts are never mutated once decoded (learning only reads them), so a kept entry is shared
    between the old state and the new one.
    """
    same = previous is not None and previous.repository == repository
    held = previous.files if previous is not None and same else {}
    files: dict[str, tuple[Digest, FileFacts]] = {}
    decoded = 0
    for path, data in blobs:
        key = digest(data)
        entry = held.get(path)
        if entry is None or entry[0] != key:
            entry = (key, decode(data))
            decoded += 1
        files[path] = entry
    removed = sum(1 for path in held if path not in files)
    learned = previous.learned if previous is not None and same else LearnMemo()
    return SnapshotFacts(repository, commit, files, learned), FactsDelta(decoded, len(files) - decoded, removed)


class FactsCache:
    """The last learned snapshot's facts of the ``capacity`` repositories learned most recently,
    holding at most ``max_files`` files in all (decoded facts take about 15 KB a file: memory
    must not grow with a large repository by default; a state larger than the bound is not kept,
    and that repository's re-index decodes everything, as without the cache).

    A learning run takes its repository's state out (``take``) and puts the new one back only
    when the run succeeded, so a failed run never leaves a half-updated state behind.
    """

    def __init__(self, capacity: int, max_files: int = 0) -> None:
        self.capacity = capacity
        self.max_files = max_files  # 0: no bound but the repository count
        self._by_repo: OrderedDict[str, SnapshotFacts] = OrderedDict()

    def take(self, repository: str) -> SnapshotFacts | None:
        return self._by_repo.pop(repository, None)

    def put(self, state: SnapshotFacts) -> None:
        self._by_repo.pop(state.repository, None)
        if self.capacity <= 0 or (self.max_files and len(state.files) > self.max_files):
            return
        self._by_repo[state.repository] = state
        while len(self._by_repo) > self.capacity or (self.max_files and self.files > self.max_files):
            self._by_repo.popitem(last=False)

    @property
    def files(self) -> int:
        return sum(len(s.files) for s in self._by_repo.values())

    def drop(self, repository: str) -> None:
        self._by_repo.pop(repository, None)

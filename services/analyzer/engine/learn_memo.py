"""What each file taught the family learners, kept between learning runs of one repository.

A family learner counts each file's observations on its own (its ``observe``) and then adds the
files' counts in the files' order and judges the totals (its ``learn``). :class:`LearnMemo` keeps
every file's observations by path with the facts and domain they came from, so a relearn
observes only the files whose facts or domain changed (the rest are reused as they are) and
drops the files that went. Adding kept and new counts in the files' order gives the tallies,
key order included, that counting every file again gives, so the model is the same, byte for
byte (``tests/analyzer/test_learn_memo.py`` checks it on chains of real edits).

Two sums do not depend on the files' order and are kept updated by delta: the vocabulary (word
-> distinct names per file, summed) and the words of camelCase and PascalCase names behind the
acronyms (counted once per distinct name in the repository, so each name is reference-counted).

What stays linear in the repository, with small constants: adding the kept counts into the
tallies, judging every scope, and the families that read the repository as a whole (module map,
base classes, dependencies, layering, structure).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from services.analyzer.engine import documentation, formatting, idioms, naming, vocabulary
from services.analyzer.engine import typing as typing_family
from services.analyzer.engine.formatting import imports as imports_order
from services.analyzer.engine.learn_inputs import Blocks, FileTallies, Observations
from services.source.facts import FileFacts

BaseMethods = dict[str, tuple[str, ...]]


@dataclass(slots=True)
class _Record:
    """One file's observations, valid while its facts and domain are these."""

    facts: FileFacts
    domain: str
    naming: naming.Observed | None
    typing: FileTallies | None
    idioms: FileTallies
    formatting: formatting.Observed | None
    imports: FileTallies | None
    words: Counter[str]
    camel_names: frozenset[str]
    base_roots: frozenset[str]
    # documentation reads base_methods: its observation is redone when their entries it reads move
    documentation: FileTallies | None = None
    documentation_bases: tuple[tuple[str, ...] | None, ...] = ()


@dataclass
class Observed:
    """Every family's observations of the files learned, in their order, and the running sums."""

    naming: Observations[naming.Observed | None]
    documentation: Observations[FileTallies]
    typing: Observations[FileTallies | None]
    idioms: Observations[FileTallies]
    formatting: Observations[formatting.Observed | None]
    imports: Observations[FileTallies | None]
    vocabulary: dict[str, int]
    acronyms: tuple[str, ...]


@dataclass
class MemoStats:
    """What the last run did: files observed (new or changed), reused, and dropped (gone)."""

    observed: int = 0
    reused: int = 0
    dropped: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"observed": self.observed, "reused": self.reused, "dropped": self.dropped}


@dataclass
class LearnMemo:
    """The observations of the files of one repository's last learned snapshot (see the module).

    Not thread-safe: one learning run at a time owns it (``snapshot_facts.FactsCache`` hands a
    repository's state to one run). A run that fails halfway leaves every record consistent with
    its own facts, and the sums consistent with the records.
    """

    records: dict[str, _Record] = field(default_factory=dict)
    words: Counter[str] = field(default_factory=Counter)
    name_refs: Counter[str] = field(default_factory=Counter)  # camel/Pascal name -> files using it
    capitals: Counter[str] = field(default_factory=Counter)  # word -> distinct names writing it in capitals
    capitalized: Counter[str] = field(default_factory=Counter)
    last: MemoStats = field(default_factory=MemoStats)
    # Per family, the sums of runs of files its last merge made (learn_inputs.Blocks), and the
    # files in a run on average.
    blocks: dict[str, Blocks] = field(default_factory=dict)
    block: int = 64

    def observe(self, files: Sequence[FileFacts], domains: Mapping[str, str], base_methods: BaseMethods) -> Observed:
        """Every family's observations of ``files`` (distinct paths), reusing what is kept."""
        if len({f.path for f in files}) != len(files):
            raise ValueError("files to learn from by delta must have distinct paths")
        stats = MemoStats()
        names, docs, typed, habits, layout, imports = [], [], [], [], [], []
        seen: set[str] = set()
        for f in files:
            path = f.path
            domain = domains.get(path, "")
            record = self.records.get(path)
            if record is None or record.domain != domain or not (record.facts is f or record.facts == f):
                if record is not None:
                    self._retract(record)
                record = self.records[path] = self._observe(f, domain)
                stats.observed += 1
            else:
                stats.reused += 1
            bases = tuple(base_methods.get(r) for r in sorted(record.base_roots))
            if record.documentation is None or record.documentation_bases != bases:
                record.documentation = documentation.observe(f, domain, base_methods)
                record.documentation_bases = bases
            seen.add(path)
            names.append(record.naming)
            docs.append(record.documentation)
            typed.append(record.typing)
            habits.append(record.idioms)
            layout.append(record.formatting)
            imports.append(record.imports)
        for path in [p for p in self.records if p not in seen]:
            self._retract(self.records.pop(path))
            stats.dropped += 1
        self.last = stats
        return Observed(
            naming=Observations(names, self._blocks("naming")),
            documentation=Observations(docs, self._blocks("documentation")),
            typing=Observations(typed, self._blocks("typing")),
            idioms=Observations(habits, self._blocks("idioms")),
            formatting=Observations(layout, self._blocks("formatting")),
            imports=Observations(imports, self._blocks("imports")),
            vocabulary=vocabulary.vocabulary_of(self.words),
            acronyms=naming.acronyms_from(self.capitals, self.capitalized),
        )

    def _blocks(self, family: str) -> Blocks:
        return self.blocks.setdefault(family, Blocks(self.block))

    def _observe(self, f: FileFacts, domain: str) -> _Record:
        record = _Record(
            facts=f,
            domain=domain,
            naming=naming.observe(f, domain),
            typing=typing_family.observe(f, domain),
            idioms=idioms.observe(f, domain),
            formatting=formatting.observe(f, domain),
            imports=imports_order.observe(f, domain),
            words=vocabulary.file_words(f),
            camel_names=naming.camel_names(f),
            base_roots=documentation.base_roots(f),
        )
        self.words.update(record.words)
        for name in record.camel_names:
            self.name_refs[name] += 1
            if self.name_refs[name] == 1:
                capitals, capitalized = naming.name_words(name)
                self.capitals.update(capitals)
                self.capitalized.update(capitalized)
        return record

    def _retract(self, record: _Record) -> None:
        _subtract(self.words, record.words)
        for name in record.camel_names:
            self.name_refs[name] -= 1
            if self.name_refs[name] <= 0:
                del self.name_refs[name]
                capitals, capitalized = naming.name_words(name)
                _subtract(self.capitals, Counter(capitals))
                _subtract(self.capitalized, Counter(capitalized))


def _subtract(total: Counter[str], part: Mapping[str, int]) -> None:
    for key, n in part.items():
        left = total.get(key, 0) - n
        if left > 0:
            total[key] = left
        else:
            total.pop(key, None)

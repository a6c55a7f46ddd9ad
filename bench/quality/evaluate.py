"""Learn from the training files, review held-out files with and without planted violations.

The ground truth (what to plant, where, and what counts as a convention) is the benchmark's own
(``reader``, ``scan``, ``terms``, ``groundtruth``, ``inject``): nothing from ``services/``. The
engine is reached through ``engines`` (the REST API of a running stack by default).

Attribution: a finding on a variant that the untouched file did not already have (by fingerprint,
or by rule and message) was caused by the injection. It is correct when it lies on a line the
injection touched; an injection is detected when such a finding comes from the expected rule.
Untouched held-out files give the noise (findings per 1,000 lines). Families are rule-id
prefixes (``typing.annotations.function`` is ``typing``).
"""

from __future__ import annotations

import hashlib
import posixpath
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bench.quality import groundtruth, reader, scan
from bench.quality.engines import F
from bench.quality.inject import Injection, all_injections


@dataclass
class Source:
    """A repository's files as the benchmark reads them."""

    name: str
    texts: dict[str, bytes]
    tests: bool  # ships its own tests (scored for "new module without test")
    group: str  # "own" (what the engine was tuned on), or a bench/corpora.toml set: "unseen", "fresh", "fresh2"


@dataclass(slots=True)
class Obs:
    rule: str
    family: str
    correct: bool = False
    detects: bool = False
    restores: bool = False
    suggestion: str = ""
    text: str = ""


@dataclass
class InjObs:
    kind: str
    family: str
    findings: list[Obs]
    renamed: bool
    where: str = ""


@dataclass
class RepoResult:
    name: str
    group: str
    files: int = 0
    held: int = 0
    held_lines: int = 0
    noise: list[Obs] = field(default_factory=list)
    injections: list[InjObs] = field(default_factory=list)


def family_of(rule: str) -> str:
    return rule.split(".", 1)[0]


def _obs(f: F, inj: Injection | None = None) -> Obs:
    o = Obs(
        f.rule, family_of(f.rule), suggestion=f.suggestion, text=f"{f.path}:{f.start_line} {f.rule}: {f.message[:140]}"
    )
    if inj is not None:
        o.correct = bool(inj.lines & set(range(f.start_line, f.end_line + 1)))
        o.detects = o.correct and f.rule.startswith(inj.rule)
        o.restores = o.detects and bool(inj.original) and f.suggestion == inj.original
    return o


def split(paths: list[str], ratio: float, seed: str) -> tuple[list[str], list[str]]:
    """Deterministic hold-out by hash of (seed, path): stable across runs and machines."""

    def score(p: str) -> float:
        return int(hashlib.sha1(f"{seed}:{p}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF

    held = sorted(p for p in paths if score(p) < ratio)
    return sorted(set(paths) - set(held)), held


def read_all(src: Source) -> dict[str, reader.Facts]:
    facts = {}
    for path, data in src.texts.items():
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            continue
        facts[path] = reader.read(path, text, scan.is_test_path(path))
    reader.resolve(facts)
    return facts


def evaluate(src: Source, engine: Any, *, seed: str, holdout: float) -> RepoResult:
    facts = read_all(src)
    paths = sorted(p for p, f in facts.items() if f.ok)
    train_paths, held_paths = split(paths, holdout, seed)
    held_set = set(held_paths)
    res = RepoResult(src.name, src.group, files=len(paths), held=len(held_paths))
    if not held_paths:
        return res
    handle = engine.learn(src.name, {p: d for p, d in src.texts.items() if p not in held_set})
    try:
        truth = groundtruth.build([facts[p] for p in train_paths], src.texts)
        for path in held_paths:
            f = facts[path]
            data = src.texts[path]
            text = data.decode("utf-8-sig")
            res.held_lines += f.lines
            base = [x for x in engine.analyze(handle, path, data) if x.level == "strict"]
            res.noise.extend(_obs(x) for x in base)
            seen = {x.fingerprint for x in base}
            for inj in all_injections(f, text, truth, seed):
                found = [x for x in engine.analyze(handle, path, inj.text.encode()) if x.level == "strict"]
                new = _caused(base, seen, found, renames=inj.kind in ("naming", "vocabulary"))
                where = f"{path}:{min(inj.lines, default=0)} {inj.original} {' '.join(inj.planted)}".rstrip()
                res.injections.append(
                    InjObs(
                        inj.kind, inj.family, [_obs(x, inj) for x in new], inj.kind in ("naming", "vocabulary"), where
                    )
                )
        if src.tests:
            _structure(src, facts, engine, handle, held_paths, res)
    finally:
        engine.forget(handle)
    return res


def _caused(base: list[F], seen: set[str], found: list[F], *, renames: bool = True) -> list[F]:
    """Findings the untouched file did not have. Renaming a function changes the fingerprint of
    every finding inside it (the enclosing symbol is part of it), so after a rename a finding
    whose rule and message the untouched file already had counts as old too. Other plants keep
    every old fingerprint: there a second bare ``except:`` (same rule, same message as the file's
    first one, in another function) is new."""
    old = Counter((f.rule, f.message) for f in base) if renames else Counter[tuple[str, str]]()
    out = []
    for f in found:
        if f.fingerprint in seen:
            continue
        key = (f.rule, f.message)
        if old[key] > 0:
            old[key] -= 1
            continue
        out.append(f)
    return out


def _test_text(path: str) -> bytes:
    stem = posixpath.basename(path).split(".", 1)[0]
    if path.endswith(".py"):
        return f"from x import {stem}\n\n\ndef test_{stem}():\n    assert {stem}\n".encode()
    body = f"test('{stem}', () => {{\n  expect({stem}).toBeTruthy();\n}});\n"
    return f"import {{ {stem} }} from './{stem}';\n\n{body}".encode()


def _test_path(path: str) -> str:
    base = posixpath.basename(path)
    if path.endswith(".py"):
        return posixpath.join(posixpath.dirname(path), f"test_{base}")
    stem, _, ext = base.partition(".")
    return posixpath.join(posixpath.dirname(path), f"{stem}.test.{ext}")


def _about(f: F, path: str) -> bool:
    return f.rule.startswith("structure.") and f.level == "strict" and f.path == path


def _structure(
    src: Source, facts: dict[str, reader.Facts], engine: Any, handle: Any, held: list[str], res: RepoResult
) -> None:
    """New module without test: a held-out module added alone, then together with a test for it.

    Adding a public library module alone is a violation exactly where the repository tests its
    modules (``groundtruth.tests_its_modules``, training files only); elsewhere, and whenever the
    module comes with its test, nothing may be flagged. (Whether the training files already hold
    a test named after the module is not asked, by the truth or of the engine: a change adding
    the module alone is judged as a change.)
    """
    held_set = set(held)
    convention = groundtruth.tests_its_modules([f for p, f in facts.items() if p not in held_set])
    for path in held:
        if not scan.is_library_module(path):
            continue
        data = src.texts[path]
        # Only what is said of the module counts: the stand-in test file's own name is not the question.
        alone = [x for x in engine.added(handle, {path: data}) if _about(x, path)]
        paired = [x for x in engine.added(handle, {path: data, _test_path(path): _test_text(path)}) if _about(x, path)]
        found: list[Obs] = []
        for x in alone:
            o = _obs(x)
            o.correct = o.detects = convention
            found.append(o)
        found.extend(_obs(x) for x in paired)
        if convention or found:
            kind = "new-module-test" if convention else "control-untested"
            res.injections.append(InjObs(kind, "structure", found, False, path))


# --- scoring ---------------------------------------------------------------------------------


@dataclass
class Score:
    injected: int = 0
    detected: int = 0
    new: int = 0
    correct: int = 0
    restored: int = 0
    renamed: int = 0

    def add(self, other: Score) -> None:
        self.injected += other.injected
        self.detected += other.detected
        self.new += other.new
        self.correct += other.correct
        self.restored += other.restored
        self.renamed += other.renamed


def score(results: list[RepoResult]) -> tuple[dict[str, Score], dict[str, Score]]:
    """(by planted kind, by family); a family's precision counts the findings of its own rules."""
    kinds: dict[str, Score] = {}
    families: dict[str, Score] = {}
    for r in results:
        for inj in r.injections:
            k = kinds.setdefault(inj.kind, Score())
            fam = families.setdefault(inj.family, Score())
            planted = inj.kind != "control-untested"
            k.injected += planted
            fam.injected += planted
            if any(o.detects for o in inj.findings):
                k.detected += 1
                fam.detected += 1
            if inj.renamed:
                k.renamed += 1
                k.restored += any(o.restores for o in inj.findings)
            for o in inj.findings:
                k.new += 1
                k.correct += o.correct
                of = families.setdefault(o.family, Score())
                of.new += 1
                of.correct += o.correct
    return kinds, families


def vocabulary_found(results: list[RepoResult]) -> tuple[int, int]:
    """(vocabulary injections detected, of those whose suggestion restores the original name)."""
    found = restored = 0
    for r in results:
        for inj in r.injections:
            if inj.kind == "vocabulary" and any(o.detects for o in inj.findings):
                found += 1
                restored += any(o.restores for o in inj.findings)
    return found, restored


def noise(results: list[RepoResult], family: str = "") -> float:
    lines = sum(r.held_lines for r in results)
    found = sum(1 for r in results for o in r.noise if not family or o.family == family)
    return found * 1000 / max(1, lines)

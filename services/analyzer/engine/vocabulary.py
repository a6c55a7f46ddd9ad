"""Vocabulary family: the repository's own words for things (``user_id``, not ``usr_id``).

The learner counts, for every word, how many distinct names use it. A name is flagged when one of
its words is a variant of a term (a known abbreviation, or the term's consonant skeleton for words
the repository has never written) and the repository overwhelmingly spells that term otherwise.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import msgspec

from services.analyzer.engine.abbreviations import ABBREVIATIONS, EXPANSIONS, skeleton
from services.analyzer.engine.context import FileCheck
from services.analyzer.engine.conventions import REPOSITORY, Convention, Scope, make
from services.analyzer.engine.findings import WARNING
from services.analyzer.engine.learning import LearnInput
from services.analyzer.engine.thresholds import LOOSE, OFF, STRICT, Thresholds
from services.source.naming import replace_word, words

FAMILY = "vocabulary"
RULE = "vocabulary.term"
NAME_ROLES = frozenset(
    {"function", "method", "class", "constant", "variable", "parameter", "attribute", "field", "test_function"}
)
_MIN_SKELETON_WORD = 5  # short words ("user" aside) make skeletons that collide with real words


def count_words(inp: LearnInput) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for f in inp.files:
        names = {i.name for i in f.identifiers if i.role in NAME_ROLES}
        for name in names:
            counts.update(set(words(name)))
    return dict(counts)


def _convention(thresholds: Thresholds, term: str, variant: str, vocab: dict[str, int]) -> Convention:
    n_term, n_variant = vocab.get(term, 0), vocab.get(variant, 0)
    return make(
        FAMILY,
        RULE,
        Scope(REPOSITORY),
        term,
        n_term,
        n_term + n_variant,
        thresholds,
        subject=f"names using `{term}` or `{variant}`",
        predicate=f"say `{term}`",
        key=f"{variant}->{term}",
        params={"term": term, "variant": variant},
    )


def learn(inp: LearnInput, vocab: dict[str, int]) -> list[Convention]:
    """The preferred spelling of each known term the repository uses (for ``review_context``)."""
    out: list[Convention] = []
    for word, abbrevs in ABBREVIATIONS.items():
        group = {w: vocab.get(w, 0) for w in (word, *abbrevs)}
        total = sum(group.values())
        if total == 0:
            continue
        best = max(group, key=lambda w: (group[w], w))
        for other, n in group.items():
            if other == best or (n == 0 and total < 3):
                continue
            conv = _convention(inp.thresholds, best, other, vocab)
            if conv.level != OFF:
                out.append(conv)
    return out


def _skeletons(vocab: dict[str, int], min_count: int) -> dict[str, str]:
    best: dict[str, tuple[int, str]] = {}
    second: dict[str, int] = {}
    for word, n in vocab.items():
        if n < min_count or len(word) < _MIN_SKELETON_WORD or not word.isalpha():
            continue
        sk = skeleton(word)
        if len(sk) < 3 or sk == word:
            continue
        prev = best.get(sk)
        if prev is None or n > prev[0]:
            if prev is not None:
                second[sk] = max(second.get(sk, 0), prev[0])
            best[sk] = (n, word)
        else:
            second[sk] = max(second.get(sk, 0), n)
    # A skeleton shared by inflections ("dcd": decode/decoded) still points at the commonest.
    return {sk: w for sk, (n, w) in best.items() if second.get(sk, 0) * 2 <= n}


def _candidates(token: str, vocab: dict[str, int], skeletons: dict[str, str]) -> list[str]:
    out = list(EXPANSIONS.get(token, ()))
    out.extend(ABBREVIATIONS.get(token, ()))
    if vocab.get(token, 0) == 0:
        term = skeletons.get(token)
        if term is not None and term not in out:
            out.append(term)
    return out


@dataclass
class _Memo:
    skeletons: dict[str, str]
    tokens: dict[str, Convention | None] = field(default_factory=dict)


def _memo(fc: FileCheck) -> _Memo:
    """Per loaded model: the skeleton index, and token -> verdict (tokens repeat across files)."""
    idx = fc.index
    memo = idx.extra.get(FAMILY)
    if not isinstance(memo, _Memo):
        model = idx.model
        memo = _Memo(_skeletons(model.vocabulary, model.thresholds.bar(RULE).loose.min_count))
        idx.extra[FAMILY] = memo
    return memo


def _judge(token: str, vocab: dict[str, int], skeletons: dict[str, str], thresholds: Thresholds) -> Convention | None:
    best: Convention | None = None
    for term in _candidates(token, vocab, skeletons):
        conv = _convention(thresholds, term, token, vocab)
        # A variant the repository already writes is part of its vocabulary, and a spelled-out
        # word where the repository abbreviates is still clear: both are for dashboards only,
        # never a pull-request comment.
        if conv.level == STRICT and (vocab.get(token, 0) or (token not in EXPANSIONS and token in ABBREVIATIONS)):
            conv = msgspec.structs.replace(conv, level=LOOSE)
        if conv.support and (best is None or (conv.share, conv.support) > (best.share, best.support)):
            best = conv
    return best


def check(fc: FileCheck) -> None:
    model = fc.index.model
    vocab = model.vocabulary
    if not vocab:
        return
    memo = _memo(fc)
    skeletons, tokens = memo.skeletons, memo.tokens
    seen: set[str] = set()
    for ident in fc.facts.identifiers:
        name = ident.name
        if name in seen or ident.role not in NAME_ROLES:
            continue
        seen.add(name)
        if not fc.touches(ident.line, ident.line):
            continue
        for i, token in enumerate(words(name)):
            if token in tokens:
                best = tokens[token]
            else:
                best = tokens[token] = _judge(token, vocab, skeletons, model.thresholds)
            if best is None or not fc.wants(best):
                continue
            fixed = replace_word(name, i, best.choice)
            fc.emit(
                best,
                ident.line,
                f"`{name}` says `{token}` where the repository says `{best.choice}` "
                f"({best.support} names, `{token}` in {best.count - best.support}); rename to `{fixed}`",
                severity=WARNING,
                suggestion=fixed,
                key=name,
                detail={"name": name, "word": token, "term": best.choice},
            )
            break

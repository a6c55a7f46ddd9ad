"""Vocabulary family: the repository's own words for things (``user_id``, not ``usr_id``).

The learner counts, for every word, how many distinct names use it. A name is flagged when one of
its words is a variant of a term and the repository overwhelmingly spells that term otherwise. A
variant is a known abbreviation from the table or, for a short form the repository has never
written, one derived from the repository's own words: the term's consonant skeleton, a prefix
(``tok`` -> ``token``), the word with letters dropped (``tgt`` -> ``target``, ``txn`` ->
``transaction``), or the plural of a short form (``errs`` -> ``errors``, ``vals`` -> ``values``)
when the repository writes the plural word. A derived short form must not be an ordinary word
(``COMMON_WORDS``) and must point at exactly one word the repository writes (its inflections
aside: ``tok`` reads ``token`` although ``tokens`` and ``tokenize`` also start so).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import msgspec

from services.analyzer.engine.abbreviations import (
    ABBREVIATIONS,
    COMMON_WORDS,
    EXPANSIONS,
    RESERVED,
    drops_letters,
    plural,
    prefix_of,
    skeleton,
    spellings,
    stem_of,
)
from services.analyzer.engine.conventions import REPOSITORY, Convention, Scope, make
from services.analyzer.engine.file_check import FileCheck
from services.analyzer.engine.findings import WARNING
from services.analyzer.engine.learn_inputs import LearnInput
from services.analyzer.engine.naming import acronyms_of
from services.analyzer.engine.thresholds import LOOSE, OFF, STRICT, Thresholds
from services.source.facts import FileFacts
from services.source.naming import replace_word, words

FAMILY = "vocabulary"
RULE = "vocabulary.term"
NAME_ROLES = frozenset(
    {"function", "method", "class", "constant", "variable", "parameter", "attribute", "field", "test_function"}
)
_STRAY_SHORT_FORMS = 20  # 1 in 20 (5%): the share a singular short form may have and stay a stray
_MIN_SKELETON_WORD = 5  # short words ("user" aside) make skeletons that collide with real words


def count_words(inp: LearnInput) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for f in inp.files:
        counts.update(file_words(f))
    return vocabulary_of(counts)


def file_words(f: FileFacts) -> Counter[str]:
    """Word -> the file's distinct names using it (a repository's counts are their sums)."""
    counts: Counter[str] = Counter()
    for name in {i.name for i in f.identifiers if i.role in NAME_ROLES}:
        counts.update(set(words(name)))
    return counts


def vocabulary_of(counts: Counter[str]) -> dict[str, int]:
    # sorted: the model (and what iterates it) is the same every run, whatever order files came in
    return dict(sorted((w, n) for w, n in counts.items() if n > 0))


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


def _initials(vocab: dict[str, int]) -> dict[str, list[tuple[str, str]]]:
    """First letter -> (spelling, word) for the words long enough to have a short form that the
    repository writes more than once (a one-off is no competing reading of a short form)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for word, n in vocab.items():
        if n >= 2 and len(word) >= 5 and word.isalpha():
            for spelling in spellings(word):
                out.setdefault(spelling[0], []).append((spelling, word))
    return out


def _family(words_: set[str]) -> str | None:
    """The one word behind ``words_`` (its inflections and derivations aside), or None."""
    if not words_:
        return None
    base = min(words_, key=lambda w: (len(w), w))
    return base if all(w.startswith(base) for w in words_) else None


def _expand(short: str, vocab: dict[str, int], initials: dict[str, list[tuple[str, str]]]) -> str | None:
    """The one repository word ``short`` abbreviates: prefixes first, then dropped letters.

    A short form that is the stem of a repository word (``inspect`` of inspector, ``hist`` of
    history) or the first part of a compound the repository writes (``back`` of ``background``
    next to ``ground``) is a word of its own, not a short form.
    """
    if short in COMMON_WORDS or short in ABBREVIATIONS:
        return None
    pool = initials.get(short[0], ())
    respelled = {w for sp, w in pool if sp == short and sp != w}  # xform: transform written short
    if respelled:
        return _family(respelled)
    prefixed = {w for sp, w in pool if prefix_of(short, sp)}
    if any(stem_of(short, w) for w in prefixed):
        return None
    if any(vocab.get(w[len(short) :], 0) >= 2 for w in prefixed if len(w) - len(short) >= 3):
        return None
    if prefixed:
        return _family(prefixed)
    return _family({w for sp, w in pool if drops_letters(short, sp)})


def _derive(token: str, vocab: dict[str, int], initials: dict[str, list[tuple[str, str]]]) -> tuple[str, bool] | None:
    """The repository word an unseen short form stands for, and whether that is only worth a
    loose finding (the plural of a short form the repository itself writes: ``evts`` by ``evt``)."""
    if len(token) < 3 or not token.isalpha() or vocab.get(token, 0) or token in COMMON_WORDS:
        return None
    if token in EXPANSIONS or token in ABBREVIATIONS:
        return None
    single = token[:-1]
    singulars: tuple[str | None, ...] = ()
    if len(token) >= 4 and token.endswith("s") and not single.endswith("s"):
        singulars = EXPANSIONS.get(single) or (_expand(single, vocab, initials) if len(single) >= 3 else None,)
    # ``vers`` is ``version`` cut short before it is ``ver`` + s: one version, not versions.
    if singulars and not any(w and w.startswith(token) for w in singulars):
        # Plural short form = singular short form + s, when the repository writes the plural.
        plurals = {plural(w): w for w in singulars if w}
        found = [(p, w) for p, w in plurals.items() if p in vocab]
        if len(found) == 1:
            term, word = found[0]
            # Where the repository itself writes the singular short form (``err`` beside
            # ``error``) as more than a stray exception, its plural is only worth a loose finding.
            short, full = vocab.get(single, 0), vocab.get(word, 0)
            return term, short * _STRAY_SHORT_FORMS > short + full
        if single in EXPANSIONS:
            return None  # a known short form's plural is read as nothing else (``fns``)
    expanded = _expand(token, vocab, initials)
    return (expanded, False) if expanded else None


def _candidates(token: str, vocab: dict[str, int], memo: _Memo) -> list[str]:
    out = list(EXPANSIONS.get(token, ()))
    out.extend(ABBREVIATIONS.get(token, ()))
    if vocab.get(token, 0) == 0:
        if memo.initials is None:
            memo.initials = _initials(vocab)
        # ``cls`` is the skeleton of ``close`` and Python's name for a class: a short form with a
        # reading of its own (COMMON_WORDS) is read as nothing else, by its letters either.
        term = memo.skeletons.get(token) if token not in COMMON_WORDS else None
        if term is not None and term not in out:
            out.append(term)
            memo.derived.add(token)
        if not out:
            derived = _derive(token, vocab, memo.initials)
            if derived is not None:
                out.append(derived[0])
                memo.derived.add(token)
                if derived[1]:
                    memo.loose.add(token)
    return out


@dataclass
class _Memo:
    skeletons: dict[str, str]
    tokens: dict[str, Convention | None] = field(default_factory=dict)
    initials: dict[str, list[tuple[str, str]]] | None = None  # built on the first unknown token
    loose: set[str] = field(default_factory=set)  # derived short forms worth a loose finding only
    derived: set[str] = field(default_factory=set)  # short forms read from letters, not from the table
    # Directory names of the repository: ``ZOD_SRC`` names the ``src/`` directory, spelled as it is.
    directories: frozenset[str] = frozenset()


def _memo(fc: FileCheck) -> _Memo:
    """Per loaded model: the skeleton index, and token -> verdict (tokens repeat across files)."""
    idx = fc.index
    memo = idx.extra.get(FAMILY)
    if not isinstance(memo, _Memo):
        model = idx.model
        dirs = {part.lower() for path in model.modules.values() for part in path.split("/")[:-1]}
        memo = _Memo(
            _skeletons(model.vocabulary, model.thresholds.bar(RULE).loose.min_count), directories=frozenset(dirs)
        )
        idx.extra[FAMILY] = memo
    return memo


def _judge(token: str, vocab: dict[str, int], memo: _Memo, thresholds: Thresholds) -> Convention | None:
    best: Convention | None = None
    candidates = _candidates(token, vocab, memo)
    # ``res`` beside both ``result`` and ``response``: the reader cannot tell which is meant, so
    # no rename is certain enough for a comment.
    written = [term for term in candidates if vocab.get(term, 0) >= 2]
    # ``fn`` is a function as often as a file name, whichever of the two the repository happens to
    # write: the table's own readings count, not only the written ones.
    readings = [*written, *EXPANSIONS.get(token, ())]
    # ``cfg`` for ``config`` or ``configuration`` is one word either way.
    ambiguous = any(not (a.startswith(b) or b.startswith(a)) for a in readings for b in readings)
    for term in candidates:
        conv = _convention(thresholds, term, token, vocab)
        # A variant the repository already writes is part of its vocabulary, and a spelled-out
        # word where the repository abbreviates is still clear: both are for dashboards only,
        # never a pull-request comment.
        if conv.level == STRICT and (
            vocab.get(token, 0)
            or (token not in EXPANSIONS and token in ABBREVIATIONS)
            or token in memo.loose
            or ambiguous
            or token in memo.directories
        ):
            conv = msgspec.structs.replace(conv, level=LOOSE)
        if conv.support and (best is None or (conv.share, conv.support) > (best.share, best.support)):
            best = conv
    return best


def bound_names(fc: FileCheck) -> frozenset[str]:
    """Every name the file binds or imports (a rename to one of them would shadow it)."""
    cached: frozenset[str] | None = fc.__dict__.get("_bound_names")
    if cached is None:
        names = {i.name for i in fc.facts.identifiers}
        for imp in fc.facts.imports:
            names.update(n for n in imp.names if n and n != "*")
            names.add(imp.module.rsplit("/", 1)[-1].rsplit(".", 1)[-1])
        # Import aliases (`import * as checks`, `import numpy as np`) are not in the facts.
        for match in _ALIAS.finditer(fc.text):
            names.add(match.group(1))
        cached = fc.__dict__["_bound_names"] = frozenset(names)
    return cached


_ALIAS = re.compile(r"\bas\s+([A-Za-z_$][\w$]*)")


def _read_otherwise(fc: FileCheck, token: str, conv: Convention) -> bool:
    """Whether the file's own names give a short form read from its letters another reading than
    the repository's word: ``con`` beside ``_all_connections`` is a connection, not ``context``;
    ``pkg_pth: Path`` a path, not ``python``. The change writes the word it means, which the
    repository's vocabulary (learned before the change) does not have yet."""
    cached: frozenset[str] | None = fc.__dict__.get("_own_words")
    if cached is None:
        cached = fc.__dict__["_own_words"] = frozenset(w for name in bound_names(fc) for w in words(name))
    term = conv.choice
    for word in cached:
        if len(word) < 3 or word == token or not word.isalpha() or _family({word, term}) is not None:
            continue
        if prefix_of(token, word) or drops_letters(token, word) or skeleton(word) == token:
            return True
    return False


# --- short forms a linter the repository runs reports (declared.py) ----------------------------

# What xo's rule (eslint-plugin-unicorn's prevent-abbreviations) checks: variables, functions,
# classes and parameters; object properties, class members and imported names are not.
_DECLARED_ROLES = frozenset({"function", "class", "constant", "variable", "parameter"})
# unicorn's words: a cut before every character but a lowercase letter and after every non-letter
# (``searchParams`` -> ``search``, ``Params``; ``prev_value`` -> ``prev``, ``_``, ``value``).
_UNICORN_WORDS = re.compile(r"(?=[^a-z])|(?<=[^a-zA-Z])")


@dataclass(frozen=True)
class _Declared:
    conv: Convention
    replacements: dict[str, tuple[str, ...]]
    allowed: frozenset[str]  # short forms the repository's options take out of the rule
    names: frozenset[str]  # whole names its allowList lets through


def _declared(fc: FileCheck) -> _Declared | None:
    """The short-form rule a linter the repository runs holds this file to, if any."""
    conv = fc.find(RULE)
    if conv is None or conv.source != "declared" or not fc.wants(conv):
        return None
    cache: dict[str, _Declared] = fc.index.extra.setdefault(f"{FAMILY}.declared", {})
    found = cache.get(conv.id)
    if found is None:
        table = {}
        for line in str(conv.params.get("replacements", "")).splitlines():
            short, *replacements = line.split()
            table[short] = tuple(replacements)
        found = cache[conv.id] = _Declared(
            conv,
            table,
            frozenset(str(conv.params.get("allowed", "")).split()),
            frozenset(str(conv.params.get("allow_names", "")).split()),
        )
    return found


def _upper_first(word: str) -> str:
    return word[:1].upper() + word[1:]


def _lower_first(word: str) -> str:
    return word[:1].lower() + word[1:]


def _word_replacements(word: str, rule: _Declared) -> tuple[str, ...]:
    """The rule's replacements for one word, cased as the word is (unicorn's getWordReplacements)."""
    if word == word.upper() or word in rule.names:
        return ()  # constants (`ERR_CODE`) and non-letters
    found = (
        rule.replacements.get(_lower_first(word))
        or rule.replacements.get(word)
        or rule.replacements.get(_upper_first(word))
    )
    if not found:
        return ()
    recase = _upper_first if word[:1].isupper() else _lower_first
    return tuple(sorted(recase(r) for r in found))


def _name_replacements(name: str, rule: _Declared) -> tuple[list[tuple[str, tuple[str, ...]]], list[str]]:
    """The words of ``name`` the rule reports with their replacements, and the renamed names it
    suggests (unicorn's getNameReplacements: the whole name first, then word by word)."""
    if name == name.upper() or name in rule.names:
        return [], []
    whole = _word_replacements(name, rule)
    if whole:
        return [(name, whole)], list(whole)
    parts = [w for w in _UNICORN_WORDS.split(name) if w]
    hits: list[tuple[str, tuple[str, ...]]] = []
    samples = [""]
    for part in parts:
        found = _word_replacements(part, rule)
        if found:
            hits.append((part, found))
        samples = [s + r for s in samples for r in (found or (part,))][:3]
    return hits, samples if hits else []


def _required_at(fc: FileCheck, name: str, line: int) -> bool:
    """``const str = require('string')``: a default import by another spelling, which xo leaves alone."""
    text = fc.lines[line - 1] if 0 < line <= len(fc.lines) else ""
    return re.search(rf"(?<![\w$]){re.escape(name)}\s*=\s*require\s*\(", text) is not None


def _check_declared(fc: FileCheck, rule: _Declared, name: str, line: int) -> bool:
    """Report ``name`` as the declaring linter would; whether it did."""
    if _required_at(fc, name, line):
        return False
    hits, samples = _name_replacements(name, rule)
    if not hits:
        return False
    conv = rule.conv
    eslint_rule = conv.params.get("eslint_rule", "")
    said = ", ".join(f"`{word}` by `{'` or `'.join(found)}`" for word, found in hits)
    fixed = samples[0] if len(samples) == 1 else None
    if fixed is not None and (fixed in RESERVED.get(fc.language, ()) or fixed in bound_names(fc)):
        fixed = None  # the rename would shadow a name the file binds: the finding stands, the fix does not
    rename = f"rename to `{fixed}`" if fixed else "rename to " + " or ".join(f"`{s}`" for s in samples)
    return fc.emit(
        conv,
        line,
        f"`{name}`: xo's `{eslint_rule}` replaces {said}; {rename} ({conv.description})",
        severity=WARNING,
        suggestion=fixed,
        key=name,
        detail={"name": name, "word": hits[0][0], "term": hits[0][1][0], "declared_by": eslint_rule},
    )


def check(fc: FileCheck) -> None:
    model = fc.index.model
    vocab = model.vocabulary
    rule = _declared(fc)
    if not vocab and rule is None:
        return
    memo = _memo(fc)
    tokens = memo.tokens
    seen: set[str] = set()
    for ident in fc.facts.identifiers:
        name = ident.name
        if name in seen or ident.role not in NAME_ROLES:
            continue
        seen.add(name)
        if not fc.touches(ident.line, ident.line):
            continue
        if rule is not None and ident.role in _DECLARED_ROLES and _check_declared(fc, rule, name, ident.line):
            continue  # the linter's finding, not the learned judgement
        if not vocab:
            continue
        for i, token in enumerate(words(name)):
            if rule is not None and token in rule.allowed:
                continue  # a short form the repository's linter options allow by name
            if token in tokens:
                best = tokens[token]
            else:
                best = tokens[token] = _judge(token, vocab, memo, model.thresholds)
            if best is not None and best.level == STRICT and token in memo.derived and _read_otherwise(fc, token, best):
                best = msgspec.structs.replace(best, level=LOOSE)
            if best is None or not fc.wants(best):
                continue
            fixed = replace_word(name, i, best.choice, acronyms_of(fc))
            if fixed in RESERVED.get(fc.language, ()) or fixed in bound_names(fc):
                # `ret` for return, `fmt` for format, `chks` beside `import * as checks`: the
                # short form avoids a clash the rename would make.
                continue
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

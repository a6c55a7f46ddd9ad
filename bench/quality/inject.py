"""Plant one known violation in a held-out file's text, per family, where the repository has a
clear convention to violate (see ``groundtruth``). Each injection returns the new text, the lines
it touched, and the rule family a reviewer should flag there.

Nothing here comes from the engine: the abbreviations and libraries are the benchmark's own
(``terms``), and where a literal, a block, a docstring, an ``except`` or a ``return`` is comes
from the benchmark's own reading of the text (``scan``).
"""

from __future__ import annotations

import posixpath
import random
import re
from dataclasses import dataclass

from bench.quality import scan, terms
from bench.quality.groundtruth import GT_SHARE, NAME_ROLES, Truth, own
from bench.quality.reader import Facts, case_style, convert, replace_word, words

_FOREIGN = {"snake_case": "camelCase", "camelCase": "snake_case", "PascalCase": "snake_case", "UPPER_CASE": "camelCase"}
_HOOK = re.compile(r"^_*[a-z][a-z0-9]*_[A-Z]|^(setUp|tearDown)")


@dataclass
class Injection:
    # naming | vocabulary | indent | quotes | line-length | library | layering | docstring | annotations
    # | print | bare-except
    kind: str
    family: str  # the engine family expected to flag it
    rule: str  # expected rule prefix
    text: str
    lines: set[int]
    original: str = ""  # for renamed identifiers: the name a good suggestion restores
    planted: tuple[str, str] = ("", "")  # vocabulary: (word, abbreviation); library: (job, module)


def _lines_with(text: str, pattern: re.Pattern[str]) -> set[int]:
    return {text.count("\n", 0, m.start()) + 1 for m in pattern.finditer(text)}


def _rename(text: str, old: str, new: str) -> tuple[str, set[int]] | None:
    if re.search(rf"(?<![\w$]){re.escape(new)}(?![\w$])", text):
        return None
    pattern = re.compile(rf"(?<![\w$]){re.escape(old)}(?![\w$])")
    lines = _lines_with(text, pattern)
    return pattern.sub(new, text), lines


def naming(f: Facts, text: str, t: Truth, rng: random.Random) -> Injection | None:
    options = []
    for ident in f.identifiers:
        if ident.role not in NAME_ROLES or len(words(ident.name)) < 2 or _HOOK.match(ident.name):
            continue
        style = case_style(ident.name)
        dominant = t.dominant_style(f.language, ident.role)
        if dominant is None or style != dominant or style not in _FOREIGN:
            continue
        options.append(ident)
    rng.shuffle(options)
    for ident in options[:5]:
        new = convert(ident.name, _FOREIGN[case_style(ident.name)])
        done = _rename(text, ident.name, new)
        if done and new != ident.name:
            # The extractor may file the renamed name under another role (an UPPER constant
            # renamed to camelCase becomes a variable), so any case rule counts.
            return Injection("naming", "naming", "naming.case", done[0], done[1], ident.name)
    return None


def vocabulary(f: Facts, text: str, t: Truth, rng: random.Random) -> Injection | None:
    options = []
    for ident in {i.name: i for i in f.identifiers if i.role in NAME_ROLES}.values():
        for index, word in enumerate(words(ident.name)):
            if t.vocab[word] < 8:
                continue
            for variant in terms.variants(word):
                if len(variant) > 1 and t.vocab[variant] == 0 and variant != word:
                    options.append((ident.name, index, variant))
    rng.shuffle(options)
    for name, index, variant in options[:5]:
        new = replace_word(name, index, variant)
        done = _rename(text, name, new) if new != name else None
        if done:
            word = words(name)[index]
            return Injection("vocabulary", "vocabulary", "vocabulary.term", done[0], done[1], name, (word, variant))
    return None


def quotes(f: Facts, text: str, t: Truth, rng: random.Random) -> Injection | None:
    preferred = t.dominant(t.quotes.get(f.language, {}), 100)  # type: ignore[arg-type]
    if preferred is None:
        return None
    want, other = ('"', "'") if preferred == "double" else ("'", '"')
    lines = text.split("\n")
    options = [
        lit
        for lit in own(f, text).layout.literals
        if lit.quote == want and lit.body and not set(lit.body) & {"'", '"', "\\"}
    ]
    if not options:
        return None
    lit = rng.choice(options)
    line = lines[lit.line - 1]
    lines[lit.line - 1] = line[: lit.start] + other + lit.body + other + line[lit.end :]
    return Injection("quotes", "formatting", "formatting.quotes", "\n".join(lines), {lit.line})


def indent(f: Facts, text: str, t: Truth, rng: random.Random) -> Injection | None:
    width = t.dominant(t.widths.get(f.language, {}), 10)  # type: ignore[arg-type]
    if not isinstance(width, int) or width < 2:
        return None
    opener = ":" if f.language == "python" else "{"
    lines = text.split("\n")
    info = own(f, text).layout
    if not info.ok:
        return None
    starts = []
    for i, line in enumerate(lines[:-1]):
        code = line.rstrip()
        nxt = lines[i + 1]
        if i + 1 in info.interior or i + 2 in info.interior or not code.endswith(opener) or not nxt.strip():
            continue
        k = len(line) - len(line.lstrip(" "))
        if "\t" in line[:k] or (i + 1) in info.comment_col:
            continue
        if len(nxt) - len(nxt.lstrip(" ")) == k + width:
            starts.append((i, k))
    if not starts:
        return None
    i, k = rng.choice(starts)
    shift = (2 if width == 4 else 4) - width  # a 4-space repo gets a 2-space block and vice versa
    j = i + 1
    touched: set[int] = set()
    while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip(" ")) > k):
        current = len(lines[j]) - len(lines[j].lstrip(" "))
        if lines[j].strip() and (j + 1) not in info.interior and current >= k + width:
            lines[j] = " " * (current + shift) + lines[j].lstrip(" ")
            touched.add(j + 1)
        j += 1
    return Injection("indent", "formatting", "formatting.indent", "\n".join(lines), touched)


def _insert_after_imports(f: Facts, text: str, new_line: str) -> tuple[str, int] | None:
    lines = text.split("\n")
    first_def = min((d.line for d in f.definitions), default=len(lines))
    last = 0
    for imp in f.imports:
        if imp.line < first_def and imp.line - 1 < len(lines) and not lines[imp.line - 1][:1].isspace():
            last = max(last, imp.line)
    if not last:
        return None
    end = last - 1
    depth = 0
    while end < len(lines):
        depth += lines[end].count("(") + lines[end].count("{") - lines[end].count(")") - lines[end].count("}")
        if depth <= 0 and not lines[end].rstrip().endswith("\\"):
            break
        end += 1
    lines.insert(end + 1, new_line)
    return "\n".join(lines), end + 2


def library(f: Facts, text: str, t: Truth, rng: random.Random) -> Injection | None:
    table = terms.libraries(f.language)
    options = []
    for (lang, job), counts in t.jobs.items():
        if lang != f.language:
            continue
        dominant = t.dominant(counts, 3)
        if dominant is None:
            continue
        for label, prefixes in table[job].items():
            # A library the repository itself contains (stdlib-net holds ``json``) is not foreign.
            own_code = prefixes[0].split(".")[0].split("/")[0] in t.own
            if label != dominant and counts[label] == 0 and not own_code:
                options.append((job, prefixes[0]))
    if not options:
        return None
    job, module = rng.choice(sorted(options))
    if f.language == "python":
        line = f"import {module}"
    else:
        q = "'" if text.count("'") >= text.count('"') else '"'
        line = f"import foreignLib from {q}{module}{q};"
    done = _insert_after_imports(f, text, line)
    if done is None:
        return None
    # The benchmark's jobs are not the engine's: any library finding on that line detects it.
    return Injection("library", "dependencies", "dependencies.library.", done[0], {done[1]}, planted=(job, module))


def layering_edge(f: Facts, text: str, t: Truth, rng: random.Random) -> Injection | None:
    uppers = t.one_way.get(t.domain(f.path), [])
    if scan.is_test_path(f.path) or not uppers:
        return None
    upper = rng.choice(sorted(uppers))
    targets = t.domain_files.get(upper, [])
    if not targets:
        return None
    target = rng.choice(targets)
    if f.language == "python":
        if target.language != "python":
            return None
        line = f"import {scan.python_module(target.path)}"
    else:
        rel = posixpath.relpath(posixpath.splitext(target.path)[0], posixpath.dirname(f.path))
        q = "'" if text.count("'") >= text.count('"') else '"'
        line = f"import layerBreaker from {q}{rel if rel.startswith('.') else './' + rel}{q};"
    done = _insert_after_imports(f, text, line)
    if done is None:
        return None
    return Injection("layering", "dependencies", "dependencies.layering", done[0], {done[1]})


def docs(f: Facts, text: str, t: Truth, rng: random.Random) -> Injection | None:
    mine = own(f, text)
    if mine.js is not None:
        return _jsdoc(f, text, t, rng, mine.js)
    py = mine.py
    if py is None or not py.ok:
        return None
    options = []
    for s in py.public:
        doc_ok = t.dominant(t.docs.get((f.language, s.kind), {}), 20) is True  # type: ignore[arg-type]
        typed_ok = t.dominant(t.typed.get((f.language, s.kind), {}), 20) is True  # type: ignore[arg-type]
        if doc_ok and s.documented:
            options.append(("docstring", s))
        if typed_ok and s.annotated and s.returns:
            options.append(("annotations", s))
    rng.shuffle(options)
    lines = text.split("\n")
    for kind, s in options[:5]:
        if kind == "annotations":
            line, col, end_line, end_col = s.returns  # type: ignore[misc]
            source = lines[line - 1]
            arrow = source.rfind("->", 0, col)
            if end_line != line or arrow < 0:
                continue
            lines[line - 1] = source[:arrow].rstrip() + source[end_col:]
            rule = f"typing.annotations.{s.kind}"
        else:
            first, last = s.doc
            opening, closing = lines[first - 1].lstrip(), lines[last - 1].rstrip()
            if first <= s.line or not re.match(r"[rRuU]?['\"]", opening) or not closing.endswith(("'", '"')):
                continue
            pad = lines[first - 1][: len(lines[first - 1]) - len(opening)]
            lines[first - 1 : last] = [pad + "pass"] if s.alone else []
            rule = f"documentation.docstring.{s.kind}"
        header = set(range(s.first, max(s.first, s.body - 1) + 1))
        return Injection(kind, "typing" if kind == "annotations" else "documentation", rule, "\n".join(lines), header)
    return None


def _jsdoc(f: Facts, text: str, t: Truth, rng: random.Random, js: scan.JsSummary) -> Injection | None:
    """The JSDoc block of an exported declaration removed, where the repository documents them."""
    if not js.ok or scan.is_test_path(f.path):
        return None
    options = [
        p
        for p in js.public
        if p.documented and t.dominant(t.docs.get((f.language, p.kind), {}), 20) is True  # type: ignore[arg-type]
    ]
    if not options:
        return None
    pub = rng.choice(options)
    same = [p for p in js.public if (p.kind, p.name) == (pub.kind, pub.name)]
    if sum(p.documented for p in same) != 1:
        return None  # documented twice: removing one block leaves it documented
    first, last = pub.doc
    lines = text.split("\n")
    del lines[first - 1 : last]
    removed = last - first + 1
    touched = {p.line - removed if p.line > last else p.line for p in same}  # every overload
    return Injection("docstring", "documentation", f"documentation.docstring.{pub.kind}", "\n".join(lines), touched)


def idiom(f: Facts, text: str, t: Truth, rng: random.Random, quote: str) -> Injection | None:
    mine = own(f, text)
    if mine.js is not None:
        return _console(f, text, t, rng, quote, mine.js)
    py = mine.py
    if py is None or not py.ok:
        return None
    lines = text.split("\n")
    options: list[tuple[str, int]] = []
    if t.dominant(t.bare_except.get("python", {}), 30) is False:  # type: ignore[arg-type]
        options.extend(("bare", line) for line in py.handlers)
    if t.dominant(t.prints.get("python", {}), 30) is False:  # type: ignore[arg-type]
        options.extend(("print", line) for line in py.returns)
    if not options:
        return None
    what, line = rng.choice(options)
    i = line - 1
    if what == "bare":
        lines[i] = re.sub(r"except\s+[\w.]+\s*:", "except:", lines[i])
        return Injection("bare-except", "idioms", "idioms.bare_except", "\n".join(lines), {line})
    pad = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    lines.insert(i, f"{pad}print({quote}debug{quote})")
    return Injection("print", "idioms", "idioms.print", "\n".join(lines), {line})


def _console(f: Facts, text: str, t: Truth, rng: random.Random, quote: str, js: scan.JsSummary) -> Injection | None:
    """``console.log(...)`` before a ``return`` of a library file, where the library never logs so."""
    if not js.ok or scan.is_test_path(f.path) or scan.is_program(f.path) or not js.returns:
        return None
    if t.dominant(t.prints.get(f.language, {}), 30) is not False:  # type: ignore[arg-type]
        return None
    lines = text.split("\n")
    line = rng.choice(js.returns)
    pad = lines[line - 1][: len(lines[line - 1]) - len(lines[line - 1].lstrip())]
    lines.insert(line - 1, f"{pad}console.log({quote}debug{quote});")
    return Injection("print", "idioms", "idioms.print", "\n".join(lines), {line})


_FILLER = " and then some more words to make it longer"


def line_length(f: Facts, text: str, t: Truth, rng: random.Random) -> Injection | None:
    """A one-line string literal lengthened so its line runs 10-30 characters past the limit the
    repository keeps (see ``Truth.line_limit``)."""
    limit = t.line_limit(f.language)
    if limit is None:
        return None
    lines = text.split("\n")
    options = [
        lit
        for lit in own(f, text).layout.literals
        if len(lit.body) >= 3 and " " in lit.body and len(lines[lit.line - 1]) <= limit - 5 and "\\" not in lit.body
    ]
    if not options:
        return None
    lit = rng.choice(options)
    line = lines[lit.line - 1]
    grow = limit - len(line) + rng.randint(10, 30)
    filler = (_FILLER * (grow // len(_FILLER) + 1))[:grow]
    at = lit.end - 1  # before the closing quote
    lines[lit.line - 1] = line[:at] + filler + line[at:]
    return Injection("line-length", "formatting", "formatting.line_length", "\n".join(lines), {lit.line})


def all_injections(f: Facts, text: str, t: Truth, seed: str) -> list[Injection]:
    rng = random.Random(f"{seed}:{f.path}")
    quote = '"' if t.dominant(t.quotes.get(f.language, {}), 1) != "single" else "'"  # type: ignore[arg-type]
    found = [
        naming(f, text, t, rng),
        vocabulary(f, text, t, rng),
        indent(f, text, t, rng),
        quotes(f, text, t, rng),
        line_length(f, text, t, rng),
        library(f, text, t, rng),
        layering_edge(f, text, t, rng),
        docs(f, text, t, rng),
        idiom(f, text, t, rng, quote),
    ]
    return [i for i in found if i is not None]


__all__ = ["GT_SHARE", "Injection", "all_injections"]

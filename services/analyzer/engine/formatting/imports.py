"""Formatting family, import layout: whether the file's imports come grouped stdlib, third-party, local.

Only the imports above the first function or class count: imports inside functions are placed
by need, not by layout. Like isort and ruff, a file is checked block by block: imports under
``if TYPE_CHECKING:``, a version test or a ``try`` form blocks of their own, ordered apart from
the ones above them. (Learning sees the facts only, without the text that tells the blocks apart,
so it counts such a file as interleaved: it learns "ordered" from fewer files, never more.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import msgspec

from services.analyzer.engine.conventions import Convention, Scope, from_counts
from services.analyzer.engine.file_check import FileCheck, ModelIndex
from services.analyzer.engine.findings import INFO
from services.analyzer.engine.learn_inputs import (
    Build,
    FileTallies,
    LearnInput,
    Tally,
    blocks_of,
    merge,
    scoped_conventions,
)
from services.source.facts import FileFacts, Import

FAMILY = "formatting"
RULE = "formatting.imports.order"
RANK = {"stdlib": 0, "third_party": 1, "local": 2}
_LABEL = {0: "standard-library", 1: "third-party", 2: "local"}
LANGUAGES = frozenset({"python"})


def top_imports(f: FileFacts) -> list[Import]:
    first_def = min(
        (s.start_line for s in f.symbols if s.kind in ("function", "class", "method")),
        default=1 << 30,
    )
    return sorted((i for i in f.imports if i.line < first_def and i.group in RANK), key=lambda i: i.line)


_PYTHON_SOURCES = (".py", ".pyi")


def first_party(index: ModelIndex) -> frozenset[str]:
    """The top-level Python packages and modules of a ``src/`` layout, as isort's and ruff's default
    source paths place them: an import of one is the project's own, whether or not the file under
    review was resolved against the tree (a test importing ``virtualenv`` from ``src/virtualenv/``).
    A package at the root is left to the resolution: a project that sets isort's ``src_paths`` to
    ``src`` alone makes it third party (cbor2's tests put ``import cbor2`` beside ``pytest``, as
    its isort wants); where the sorter's configuration says so, ``_as_declared`` decides instead."""
    cached = index.extra.get("first_party")
    if cached is None:
        modules = index.model.modules
        cached = frozenset(
            m.split(".", 1)[0]
            for m, path in modules.items()
            if path.endswith(_PYTHON_SOURCES) and path.startswith("src/")
        )
        index.extra["first_party"] = cached
    return cached


def _as_grouped(imports: list[Import], own: frozenset[str]) -> list[Import]:
    return [
        msgspec.structs.replace(i, group="local")
        if i.group == "third_party" and i.module.split(".", 1)[0] in own
        else i
        for i in imports
    ]


def _rooted(index: ModelIndex, roots: tuple[str, ...]) -> frozenset[str]:
    """The top-level Python packages and modules found directly in the source roots ``roots``
    ("." the repository root), as isort's ``src_paths`` and ruff's ``src`` find them."""
    key = "first_party_roots:" + "\n".join(roots)
    cached = index.extra.get(key)
    if cached is None:
        found: set[str] = set()
        for path in index.model.modules.values():
            if not path.endswith(_PYTHON_SOURCES):
                continue
            for root in roots:
                rest = path if root == "." else path[len(root) + 1 :] if path.startswith(root + "/") else ""
                if rest:  # a package (its directory) or a module file of the root
                    found.add(rest.split("/", 1)[0] if "/" in rest else rest.rsplit(".", 1)[0])
        cached = frozenset(found)
        index.extra[key] = cached
    return cached


def _as_declared(imports: list[Import], path: str, conv: Convention, index: ModelIndex) -> list[Import] | None:
    """``imports`` grouped as the import sorter's own configuration says (``first_party``, and
    ``source_roots`` when it names them: then an absolute import is first party only when it
    names a declared module, one found in a root, or the file's own top-level package, as ruff's
    ``detect-same-package`` does; isort files the rest with the third party). None: nothing declared."""
    named = frozenset(str(conv.params.get("first_party", "")).split())
    roots = tuple(str(conv.params.get("source_roots", "")).split())
    if not named and not roots:
        return None
    own = named | (_rooted(index, roots) if roots else first_party(index))
    # The file's own top-level package: the first directory below the root it lies in.
    within = [path[len(r) + 1 :] for r in roots if r != "." and path.startswith(r + "/")]
    rest = within[0] if within else path
    mine = rest.split("/", 1)[0] if "/" in rest else ""
    out: list[Import] = []
    for i in imports:
        top = i.module.split(".", 1)[0]
        if i.is_relative or i.group == "stdlib":
            out.append(i)
        elif top in own or (not roots and i.group == "local") or top == mine:
            out.append(i if i.group == "local" else msgspec.structs.replace(i, group="local"))
        else:
            out.append(i if i.group == "third_party" else msgspec.structs.replace(i, group="third_party"))
    return out


def _out_of_order(imports: list[Import]) -> tuple[Import, int] | None:
    """The first import placed after one of a later group, with that group's rank."""
    highest = -1
    for imp in imports:
        rank = RANK[imp.group]
        if rank < highest:
            return imp, highest
        highest = max(highest, rank)
    return None


def blocks(imports: list[Import], lines: list[str]) -> list[list[Import]]:
    """``imports`` (in line order) split where isort would: a change of indentation or a statement
    between two imports. A parenthesized import's continuation lines sit deeper or close with
    ``)``, so they do not split."""
    out: list[list[Import]] = []
    prev: Import | None = None
    prev_indent = -1
    for imp in imports:
        text = lines[imp.line - 1] if 0 < imp.line <= len(lines) else ""
        indent = len(text) - len(text.lstrip(" \t"))
        if prev is None or indent != prev_indent or _code_between(lines, prev.line, imp.line, indent):
            out.append([])
        out[-1].append(imp)
        prev, prev_indent = imp, indent
    return out


def _code_between(lines: list[str], after: int, before: int, indent: int) -> bool:
    for no in range(after + 1, before):
        text = lines[no - 1]
        body = text.lstrip(" \t")
        if not body.strip() or body.startswith(("#", ")", "import ", "from ")):
            continue
        if len(text) - len(body) <= indent:
            return True
    return False


def _build(inp: LearnInput) -> Build:
    def build(language: str, scope: Scope, counts: Counter[str]) -> Convention | None:
        return from_counts(
            FAMILY,
            RULE,
            scope,
            counts,
            inp.thresholds,
            language=language,
            subject="files importing from several groups",
            predicate=lambda choice: (
                "keep them in order standard library, third-party, local"
                if choice == "ordered"
                else "interleave import groups"
            ),
        )

    return build


def observe(f: FileFacts, domain: str) -> FileTallies | None:
    """Whether one file keeps its import groups in order (``learn`` adds the files in order)."""
    if f.language not in LANGUAGES:
        return None
    imports = top_imports(f)
    if len({i.group for i in imports}) < 2:
        return None
    tallies = FileTallies(f.language, f.path, domain)
    tallies.add(RULE, "ordered" if _out_of_order(imports) is None else "interleaved")
    return tallies


def learn(inp: LearnInput, observed: Sequence[FileTallies | None] | None = None) -> list[Convention]:
    """``observed``: ``observe`` of each of ``inp.files``, when already known."""
    if observed is None:
        observed = [observe(f, inp.domains.get(f.path, "")) for f in inp.files]
    tally = merge({RULE: Tally()}, observed, blocks_of(observed))[RULE]
    return scoped_conventions(tally, _build(inp), inp, RULE)


def check(fc: FileCheck) -> None:
    if fc.language not in LANGUAGES:
        return
    conv = fc.find(RULE)
    if conv is None or conv.choice != "ordered" or not fc.wants(conv):
        return
    top = top_imports(fc.facts)
    imports = _as_declared(top, fc.path, conv, fc.index) or _as_grouped(top, first_party(fc.index))
    for block in blocks(imports, fc.lines):
        found = _out_of_order(block)
        if found is None:
            continue
        imp, after = found
        what = _LABEL[RANK[imp.group]]
        fc.emit(
            conv,
            imp.line,
            f"{what} import `{imp.module}` comes after {_LABEL[after]} imports, but {conv.description}",
            severity=INFO,
            key=imp.module,
        )
        return

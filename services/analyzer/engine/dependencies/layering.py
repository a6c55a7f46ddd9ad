"""Dependencies family, layering: the direction of imports between domains.

From the import network: when files of domain A import domain B and no file of B imports A, B
sits below A, and a new import from B into A inverts the layering. Pairs of sizeable domains
with no edge at all are recorded too ("isolation"), but only at the loose level: absence of an
edge is weaker evidence than a direction.

A nested domain falls under its ancestor's one-way rule: when `fastapi` -> `starlette` is strict
and nothing anywhere under `starlette` imports anything under `fastapi`, then `starlette`
importing `fastapi/middleware` inverts the layering too (and so does `starlette/middleware`
importing `fastapi`), although that exact pair was never seen.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict

import msgspec

from services.analyzer.engine.conventions import DOMAIN, Convention, Scope, make
from services.analyzer.engine.file_check import FileCheck
from services.analyzer.engine.findings import WARNING
from services.analyzer.engine.learn_inputs import LearnInput
from services.analyzer.engine.thresholds import OFF, STRICT
from services.source.facts import FileFacts, Import

FAMILY = "dependencies"
RULE = "dependencies.layering"
ISOLATION = "dependencies.isolation"
_MAX_ISOLATION_DOMAINS = 40  # keeps the quadratic pair list small
_JS = frozenset({"javascript", "typescript", "tsx", "jsx"})
_JS_EXTENSIONS = frozenset({".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"})


def resolve(f: FileFacts, imp: Import, modules: dict[str, str]) -> str:
    """The repository file an import points to, using the extractor's answer when it has one."""
    if imp.resolved_path:
        return imp.resolved_path
    if not modules:
        return ""
    if f.language in _JS:
        return _resolve_js(f, imp, modules)
    if f.language != "python":
        return ""
    name = imp.module
    if name.startswith("."):
        level = len(name) - len(name.lstrip("."))
        package = f.module.split(".") if f.module else []
        if not f.path.endswith("__init__.py"):
            package = package[:-1]
        if level > 1:
            package = package[: len(package) - (level - 1)]
        rest = name[level:]
        name = ".".join([*package, rest] if rest else package)
    for n in imp.names:
        hit = modules.get(f"{name}.{n}") if n and n != "*" else None
        if hit:
            return hit
    while name:
        hit = modules.get(name)
        if hit:
            return hit
        name = name.rpartition(".")[0]
    return ""


def _resolve_js(f: FileFacts, imp: Import, modules: dict[str, str]) -> str:
    """Relative JS/TS imports by path stem ("./core/Axios" -> lib/core/Axios.js, a directory -> index)."""
    spec = imp.module.split("?", 1)[0]
    if not spec.startswith("."):
        return ""
    base = posixpath.normpath(posixpath.join(posixpath.dirname(f.path), spec))
    stem, ext = posixpath.splitext(base)
    if ext in _JS_EXTENSIONS:
        base = stem
    return modules.get(base) or modules.get(f"{base}/index") or ""


def module_map(files: list[FileFacts]) -> dict[str, str]:
    """Module name -> path: dotted names for Python, path stems for JavaScript/TypeScript."""
    return {f.module: f.path for f in files if f.module and (f.language == "python" or f.language in _JS)}


def edges(inp: LearnInput, modules: dict[str, str]) -> dict[tuple[str, str], set[str]]:
    """(importing domain, imported domain) -> importing files, tests left out."""
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for f in inp.files:
        src = inp.domains.get(f.path, "")
        if not src or f.is_test:
            continue
        for imp in f.imports:
            target = resolve(f, imp, modules)
            dst = inp.domains.get(target, "") if target else ""
            if dst and dst != src:
                out[(src, dst)].add(f.path)
    return out


def _within(domain: str, root: str) -> bool:
    return domain == root or domain.startswith(root + "/")


def _reverse_below(graph: dict[tuple[str, str], set[str]], upper: str, lower: str) -> int:
    """Files anywhere under ``lower`` importing anything under ``upper`` (contrary evidence)."""
    files: set[str] = set()
    for (src, dst), importers in graph.items():
        if _within(src, lower) and _within(dst, upper) and not _nested(src, dst):
            files |= importers
    return len(files)


def learn(inp: LearnInput, modules: dict[str, str]) -> list[Convention]:
    graph = edges(inp, modules)
    out: list[Convention] = []
    for (upper, lower), files in graph.items():
        reverse = len(graph.get((lower, upper), ()))
        forward = len(files)
        # A package and its own subpackage import each other as a matter of course (the
        # package's __init__ re-exports), so nesting says nothing about layers.
        if forward <= reverse or _nested(upper, lower):
            continue
        conv = make(
            FAMILY,
            RULE,
            Scope(DOMAIN, lower),
            "one-way",
            forward,
            forward + reverse,
            inp.thresholds,
            subject=f"files importing between `{upper}` and `{lower}`",
            predicate=f"point from `{upper}` to `{lower}`",
            key=f"{lower}->{upper}",
            examples=sorted(files)[:5],
            params={
                "from": upper,
                "to": lower,
                "forward": forward,
                "reverse": reverse,
                "reverse_below": reverse or _reverse_below(graph, upper, lower),
            },
        )
        if conv.level != OFF:
            back = f"{reverse} import" if reverse else "none imports"
            text = f"{forward} files in `{upper}` import `{lower}` and {back} the other way"
            out.append(msgspec.structs.replace(conv, description=text))
    sizes: dict[str, int] = defaultdict(int)
    for f in inp.files:
        dom = inp.domains.get(f.path, "")
        if dom and not f.is_test:
            sizes[dom] += 1
    active = {d for pair in graph for d in pair}
    big = sorted((d for d in sizes if d in active), key=lambda d: -sizes[d])[:_MAX_ISOLATION_DOMAINS]
    for i, a in enumerate(big):
        for b in big[i + 1 :]:
            if (a, b) in graph or (b, a) in graph or _nested(a, b):
                continue
            n = min(sizes[a], sizes[b])
            conv = make(
                FAMILY,
                ISOLATION,
                Scope(DOMAIN, a),
                "isolated",
                n,
                n,
                inp.thresholds,
                subject="files in the smaller domain",
                predicate=f"of `{a}` and `{b}` never import each other",
                key=f"{a}|{b}",
                params={"a": a, "b": b, "files_a": sizes[a], "files_b": sizes[b]},
            )
            if conv.level != OFF:
                text = f"`{a}` ({sizes[a]} files) and `{b}` ({sizes[b]} files) never import each other"
                out.append(msgspec.structs.replace(conv, description=text))
    return out


def _parent_package(path: str, target: str) -> bool:
    """A module importing a package that contains it (``pkg/sub/mod.py`` importing
    ``pkg/__init__.py``): a subpackage reaching its parent's public names, not a layer below
    calling one above."""
    base = posixpath.basename(target)
    if base not in ("__init__.py", "index.js", "index.ts", "index.mjs"):
        return False
    package = posixpath.dirname(target)
    return not package or path.startswith(package + "/")


def _nested(a: str, b: str) -> bool:
    return a.startswith(b + "/") or b.startswith(a + "/")


def _pairs(fc: FileCheck) -> tuple[dict[tuple[str, str], Convention], dict[tuple[str, str], Convention]]:
    """(importing domain, imported domain) -> the convention that edge breaks, exactly; and the
    strict one-way rules that also hold for every domain nested below either side."""
    cached = fc.index.extra.get(RULE)
    if cached is None:
        exact: dict[tuple[str, str], Convention] = {}
        nested: dict[tuple[str, str], Convention] = {}
        for conv in fc.index.model.conventions:
            if conv.rule == RULE:
                pair = (str(conv.params["to"]), str(conv.params["from"]))
                exact[pair] = conv
                # Old models lack the subtree count: they generalize nothing.
                if conv.level == STRICT and conv.params.get("reverse_below", -1) == 0:
                    nested[pair] = conv
            elif conv.rule == ISOLATION:
                a, b = str(conv.params["a"]), str(conv.params["b"])
                exact.setdefault((a, b), conv)
                exact.setdefault((b, a), conv)
        cached = fc.index.extra[RULE] = (exact, nested)
    return cached


def _outer(domain: str) -> list[str]:
    """The domain and the directories containing it, deepest first."""
    out = [domain]
    while "/" in domain:
        domain = domain.rpartition("/")[0]
        out.append(domain)
    return out


def _ancestor_rule(nested: dict[tuple[str, str], Convention], src: str, dst: str) -> tuple[Convention | None, str, str]:
    """The deepest strict one-way rule between domains containing ``src`` and ``dst``."""
    if not nested:
        return None, "", ""
    for s in _outer(src):
        for d in _outer(dst):
            if (s, d) == (src, dst) or _nested(s, d):
                continue
            conv = nested.get((s, d))
            if conv is not None:
                return conv, s, d
    return None, "", ""


def check(fc: FileCheck) -> None:
    if fc.facts.is_test:
        return
    pairs, nested = _pairs(fc)
    if not pairs:
        return
    src = fc.index.domain_of(fc.path)
    if not src:
        return
    modules = fc.index.model.modules
    memo: dict[tuple[str, tuple[str, ...], str], str] = fc.index.extra.setdefault("resolved", {})
    for imp in fc.facts.imports:
        key = (imp.module, imp.names, fc.facts.module if imp.is_relative else "")
        target = memo.get(key)
        if target is None or imp.resolved_path:
            target = memo[key] = resolve(fc.facts, imp, modules)
        if not target or target == fc.path or _parent_package(fc.path, target):
            continue
        dst = fc.index.domain_of(target)
        if not dst or dst == src or _nested(src, dst):
            continue
        conv = pairs.get((src, dst))
        what = f"`{src}` imports `{dst}` ({posixpath.basename(target)})"
        if conv is None or conv.rule == ISOLATION:
            # A direction between the enclosing domains is stronger than a mere absence here.
            outer, outer_src, outer_dst = _ancestor_rule(nested, src, dst)
            if outer is not None:
                conv = outer
                inside = [f"`{a}` is part of `{b}`" for a, b in ((src, outer_src), (dst, outer_dst)) if a != b]
                what = f"{what}; {' and '.join(inside)}"
        if conv is None or not fc.wants(conv):
            continue
        if conv.rule == RULE:
            msg = f"{what}, but {conv.description}: this inverts the layering"
        else:
            msg = f"{what}, but {conv.description}"
        fc.emit(conv, imp.line, msg, severity=WARNING, key=imp.module, detail={"from": src, "to": dst})

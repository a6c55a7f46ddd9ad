"""Facts of one source file: the single entry point of the source-understanding library."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from tree_sitter import Node

from services.source import (
    lang_c,
    lang_csharp,
    lang_go,
    lang_java,
    lang_js,
    lang_kotlin,
    lang_php,
    lang_python,
    lang_ruby,
    lang_rust,
)
from services.source.common import Ctx
from services.source.facts import FileFacts, Import, Statement
from services.source.formatting import compute
from services.source.languages import get_parser, language_for
from services.source.paths import (
    is_generated,
    is_test_path,
    is_vendored,
    module_name,
    split_ext,
    tested_stem,
)

_EXTRACTORS: dict[str, Callable[[Ctx, str], None]] = {
    "python": lang_python.extract,
    "javascript": lang_js.extract,
    "typescript": lang_js.extract,
    "tsx": lang_js.extract,
    "go": lang_go.extract,
    "java": lang_java.extract,
    "kotlin": lang_kotlin.extract,
    "csharp": lang_csharp.extract,
    "rust": lang_rust.extract,
    "ruby": lang_ruby.extract,
    "php": lang_php.extract,
    "c": lang_c.extract,
    "cpp": lang_c.extract,
}
_GO_MODULE = re.compile(rb"^\s*module\s+\"?([^\s\"]+)", re.M)
_BOM = b"\xef\xbb\xbf"
_CODE_EXTENSIONS = frozenset(
    {".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".mts", ".cts", ".rb", ".php", ".h", ".hpp", ".c", ".cc"}
)


def extract(path: str, data: bytes, *, max_bytes: int = 1_000_000, blob_sha: str = "") -> FileFacts:
    """Everything the indexer stores and the analyzer checks about one file.

    Files that cannot or should not be learned from come back with ``skipped`` set and only
    size/lines filled: oversized, binary, vendored, unsupported_language, invalid_encoding,
    generated (checked in that order, cheapest and most decisive first).
    """
    size = len(data)
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    facts = FileFacts(path=path, language="", size=size, lines=lines, blob_sha=blob_sha)
    if size > max_bytes:
        facts.skipped = "oversized"
        facts.language = language_for(path)
        return facts
    if b"\0" in data[:8192]:
        facts.skipped = "binary"
        return facts
    language = facts.language = language_for(path, data[:8192])
    if is_vendored(path):
        facts.skipped = "vendored"
    elif not language:
        facts.skipped = "unsupported_language"
    if facts.skipped:
        return facts
    if data.startswith(_BOM):
        data = data[3:]  # offsets then match what the parser sees; size keeps the original
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        facts.skipped = "invalid_encoding"
        return facts
    if is_generated(path, data, language, lines):
        facts.skipped = "generated"
        return facts

    facts.is_test = is_test_path(path, language) and not _library_tests_module(path, language, data)
    facts.module = module_name(path, language)
    if language == "gomod":
        match = _GO_MODULE.search(data)
        facts.module = match.group(1).decode() if match else ""
    double = single = 0
    extractor = _EXTRACTORS.get(language)
    if extractor is not None:
        tree = get_parser(language).parse(data)
        ctx = _run(extractor, facts, data, tree.root_node)
        if facts.is_test and _collects_nothing(facts):
            facts.is_test = False
            ctx = _run(extractor, facts, data, tree.root_node)
        double, single = ctx.quote_double, ctx.quote_single
    if data.startswith(b"#!"):
        facts.statements = (Statement("shebang", 1), *facts.statements)
    if facts.is_test:
        facts.tests_for = tests_for(path, language, facts.module, facts.imports)
    facts.formatting = compute(text, data, double, single)
    return facts


def _run(extractor: Callable[[Ctx, str], None], facts: FileFacts, data: bytes, root: Node) -> Ctx:
    ctx = Ctx(facts.path, facts.language, data, root, is_test_file=facts.is_test)
    extractor(ctx, facts.module)
    facts.symbols = tuple(sorted(ctx.symbols, key=lambda s: (s.start_line, s.end_line)))
    facts.identifiers = tuple(sorted(ctx.identifiers, key=lambda i: i.line))
    facts.imports = tuple(sorted(ctx.imports, key=lambda i: i.line))
    facts.statements = tuple(sorted(ctx.statements, key=lambda s: s.line))
    return ctx


def _collects_nothing(facts: FileFacts) -> bool:
    """A Python module named like a test (``test_*.py``) inside a package, outside any test
    directory, that defines nothing a runner collects (no module-level ``test*`` function, no
    ``test*`` method of a class): a library module for tests, imported rather than run
    (Python-Markdown's public ``markdown/test_tools.py``, helpers for extension authors)."""
    parts = facts.path.split("/")
    stem = split_ext(parts[-1])[0]
    if facts.language != "python" or not stem.startswith("test_") or {"tests", "test"} & set(parts[:-1]):
        return False
    classes = {s.name for s in facts.symbols if s.kind == "class" and not s.parent}
    return not any(
        s.is_test and ((s.kind == "function" and not s.parent) or (s.kind == "method" and s.parent in classes))
        for s in facts.symbols
    )


# What makes a ``tests.py`` a test module for a runner: pytest does not collect ``tests.py`` by
# default and unittest's discovery needs TestCase classes, so one that imports neither framework
# and defines no Test class is a library module (jinja's template tests: ``test_odd(value)``).
_TEST_FRAMEWORK = re.compile(
    rb"^\s*(?:import|from)\s+(?:unittest|pytest|django\.test|hypothesis)\b|^class\s+Test", re.M
)


def _library_tests_module(path: str, language: str, data: bytes) -> bool:
    parts = path.split("/")
    if language != "python" or parts[-1] != "tests.py" or {"tests", "test"} & set(parts[:-1]):
        return False
    return _TEST_FRAMEWORK.search(data) is None


def tests_for(path: str, language: str, module: str, imports: tuple[Import, ...]) -> tuple[str, ...]:
    """What a test file exercises: the stem its name carries, plus the ``module`` of every
    local import that can be told without the rest of the repository (Python relative and
    same-package imports, relative paths elsewhere). ``resolve_imports`` adds the others.
    """
    found: list[str] = []
    stem = tested_stem(path, language)
    if stem:
        found.append(stem)
    for imp in imports:
        if imp.group != "local":
            continue
        if language == "python":
            targets = _python_targets(path, module, imp)
        elif imp.is_relative and "/" in imp.module:
            base = posixpath.normpath(posixpath.join(posixpath.dirname(path), imp.module))
            base_stem, ext = split_ext(base)
            targets = [base_stem if ext in _CODE_EXTENSIONS else base]
        else:
            targets = []
        for target in targets:
            # Helpers, fixtures and conftest are imported by tests but are not what they test.
            as_path = target.replace(".", "/") + ".py" if language == "python" else f"{target}.x"
            if target and target not in found and not is_test_path(as_path, language):
                found.append(target)
    return tuple(found)


def _python_targets(path: str, module: str, imp: Import) -> list[str]:
    if not imp.is_relative:
        return [imp.module]
    dots = len(imp.module) - len(imp.module.lstrip("."))
    package = module.split(".") if path.endswith("__init__.py") else module.split(".")[:-1]
    if dots - 1 > len(package):
        return []
    base = package[: len(package) - (dots - 1)]
    rest = imp.module[dots:]
    if rest:
        return [".".join([*base, rest])]
    return [".".join([*base, name]) for name in imp.names if name and name != "*"]

"""Structure family: where tests live, how they are named, and whether modules get one.

File-level checks look at a test file's name and place; the change-level check asks, for a module
added by a change, whether the change also adds its test when the repository tests its modules.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterable

from services.analyzer.engine.conventions import Convention, Scope, from_counts
from services.analyzer.engine.file_check import FileCheck
from services.analyzer.engine.findings import INFO
from services.analyzer.engine.learn_inputs import Build, LearnInput, Tally, is_example, scoped_conventions
from services.source.facts import FileFacts

FAMILY = "structure"
NAMING = "structure.tests.naming"
PLACEMENT = "structure.tests.placement"
COVERAGE = "structure.tests.coverage"

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".java": "java",
    ".rb": "ruby",
    ".rs": "rust",
    ".kt": "kotlin",
}
TEST_DIRS = frozenset({"tests", "test", "__tests__", "spec", "specs", "testing"})
_NOT_MODULES = frozenset(
    {"__init__", "__main__", "conftest", "setup", "index", "main", "mod", "lib", "types", "constants", "version"}
)
_TEXT = {
    NAMING: ("test files", "are named"),
    PLACEMENT: ("test files", "live"),
    COVERAGE: ("modules", "are"),
}
_PLACES = {"separate": "in a separate tests directory", "colocated": "next to the code they test"}


def language_of(path: str) -> str:
    return EXTENSIONS.get(posixpath.splitext(path)[1], "")


def test_pattern(path: str) -> str:
    """How a test file's name marks it: ``test_*``, ``*_test``, ``*.test.*``, ``*.spec.*``, ..."""
    base = posixpath.basename(path)
    stem = posixpath.splitext(base)[0]
    if ".test." in base:
        return "*.test.*"
    if ".spec." in base:
        return "*.spec.*"
    if stem.startswith("test_"):
        return "test_*"
    if stem.endswith("_test"):
        return "*_test"
    if stem.endswith(("Test", "Tests")) and stem[:1].isupper():
        return "*Test"
    if stem.startswith("Test") and stem[4:5].isupper():
        return "Test*"
    if stem in ("tests", "test"):
        return "tests"
    if "/__tests__/" in f"/{path}":
        return "__tests__/*"
    return "other"


def looks_like_test(path: str) -> bool:
    return test_pattern(path) != "other" or bool(TEST_DIRS & set(path.split("/")[:-1]))


def tested_stem(path: str) -> str:
    """The module a test file is named after: test_parser.py -> parser."""
    base = posixpath.basename(path)
    stem = base.split(".", 1)[0]
    for prefix in ("test_", "Test"):
        if stem.startswith(prefix) and len(stem) > len(prefix):
            stem = stem[len(prefix) :]
    for suffix in ("_test", "Tests", "Test"):
        if stem.endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
    return stem.lower()


# A test runner's entry points in JavaScript/TypeScript (Jest, Mocha, Vitest, node:test, AVA).
_TEST_CALL = re.compile(r"\b(?:describe|it|test|suite)(?:\.\w+)*\s*\(")


# Names a tool requires of a file under tests/ (pytest's conftest.py, a package's __init__.py):
# not the author's choice of how to name a test file.
_DICTATED_NAMES = frozenset({"conftest.py", "__init__.py", "__main__.py", "setup.py", "noxfile.py"})


def holds_tests(f: FileFacts, text: str | None = None) -> bool:
    """Whether a file under a test directory defines tests. One that does not (``__init__.py``,
    ``helpers.py``, a fixture the tests load) supports them and is named as a module, so its name
    says nothing about how test files are named. JavaScript tests are calls the facts do not
    record: without the text (learning), such a file counts as holding tests."""
    if posixpath.basename(f.path) in _DICTATED_NAMES:
        return False
    if any(s.is_test for s in f.symbols):
        return True
    if f.language == "python":
        return False
    return text is None or bool(_TEST_CALL.search(text))


def placement(path: str) -> str:
    return "separate" if TEST_DIRS & set(path.split("/")[:-1]) else "colocated"


def example_test(path: str) -> bool:
    """A test of an example or demo rather than of the library: under an examples/demo tree that
    no test directory encloses. Such a directory is a small project of its own (gunicorn's
    ``examples/<name>/`` ships its app, its Dockerfile and its ``test_*.py`` side by side, while
    the library's tests live under ``tests/``), so it neither teaches the library's test layout
    nor is held to it. ``tests/examples/test_*.py`` tests the library's examples from its suite:
    the library's own."""
    dirs = path.split("/")[:-1]
    for d in dirs:
        if d in TEST_DIRS:
            return False
        if is_example(d):
            return True
    return False


# Directories of programs and documentation, not of the library whose modules get tests.
_NOT_LIBRARY_DIRS = frozenset(
    {"docs", "doc", "examples", "example", "scripts", "tools", "bin", "benchmarks", "demo", "demos", "playground"}
)


def is_module(path: str) -> bool:
    """A module a test is expected for: public (PEP 8: a leading underscore marks an internal
    module, tested through the public ones) library code, not a program, example or doc page."""
    stem = posixpath.basename(path).split(".", 1)[0]
    return (
        bool(language_of(path))
        and stem not in _NOT_MODULES
        and not stem.startswith("_")
        and not _NOT_LIBRARY_DIRS & set(path.split("/")[:-1])
        and not looks_like_test(path)
    )


def _build(rule: str, inp: LearnInput) -> Build:
    subject, verb = _TEXT[rule]

    def predicate(choice: str) -> str:
        return f"{verb} {_PLACES.get(choice, f'`{choice}`') if rule != COVERAGE else choice}"

    def build(language: str, scope: Scope, counts: Counter[str]) -> Convention | None:
        return from_counts(
            FAMILY, rule, scope, counts, inp.thresholds, language=language, subject=subject, predicate=predicate
        )

    return build


def learn(inp: LearnInput) -> list[Convention]:
    tallies = {rule: Tally() for rule in _TEXT}
    covered: dict[str, set[str]] = {}
    for f in inp.files:
        if not f.is_test or not f.language:
            continue
        dom = inp.domains.get(f.path, "")
        holds = holds_tests(f)
        if f.language != "go" and holds:  # the language fixes Go's *_test.go names
            tallies[NAMING].add(f.language, f.path, dom, test_pattern(f.path))
        if (holds or f.language == "go") and not example_test(f.path):
            tallies[PLACEMENT].add(f.language, "", dom, placement(f.path))
        # Tested = a test file named after the module, what the change-level check asks of a new
        # module; a module a test merely imports would make a habit the check cannot hold to.
        covered.setdefault(f.language, set()).add(tested_stem(f.path))
    for f in inp.files:
        tested = covered.get(f.language)
        if f.is_test or tested is None or not is_module(f.path):
            continue
        stem = posixpath.basename(f.path).split(".", 1)[0].lower()
        value = "tested" if stem in tested or f.module.rsplit(".", 1)[-1].lower() in tested else "untested"
        tallies[COVERAGE].add(f.language, f.path, inp.domains.get(f.path, ""), value)
    out: list[Convention] = []
    for rule, tally in tallies.items():
        out.extend(scoped_conventions(tally, _build(rule, inp), inp, rule))
    return out


def check(fc: FileCheck) -> None:
    if not fc.facts.is_test:
        return
    naming = fc.find(NAMING)
    pattern = test_pattern(fc.path)
    if (
        naming is not None
        and fc.wants(naming)
        and pattern != naming.choice
        and not (naming.choice == "__tests__/*" and "/__tests__/" in f"/{fc.path}")
        and fc.language != "go"
        and holds_tests(fc.facts, fc.text)
    ):
        fc.emit(
            naming,
            1,
            f"test file is named `{pattern}`, but {naming.description}",
            severity=INFO,
            key=pattern,
        )
    place = fc.find(PLACEMENT)
    # A file holding no tests is not a test placed anywhere: pytest finds a conftest.py by its
    # directory (babel's root one configures doctests), and helpers live where they are imported.
    if (
        place is not None
        and fc.wants(place)
        and placement(fc.path) != place.choice
        and not example_test(fc.path)
        and (fc.language == "go" or holds_tests(fc.facts, fc.text))
    ):
        # Keyed by the path, what the finding is about: a change that leaves the file where it
        # was (gunicorn's release prepending a license header to line 1) finds it at its base.
        fc.emit(
            place,
            1,
            f"test file lives {_PLACES[placement(fc.path)]}, but {place.description}",
            severity=INFO,
            key=fc.path,
        )


def untested_modules(added: Iterable[str], changed: Iterable[str]) -> list[str]:
    """Modules added by a change that come without a test named after them."""
    paths = set(added) | set(changed)
    tests = {tested_stem(p) for p in paths if looks_like_test(p)}
    return [
        p for p in sorted(set(added)) if is_module(p) and posixpath.basename(p).split(".", 1)[0].lower() not in tests
    ]

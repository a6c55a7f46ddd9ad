"""False alarms seen on repositories the engine had never seen, one class per test, each on code
shaped like the code that raised it. Every test also checks that the rule is alive (a real
deviation next to the false alarm is still reported), so a test cannot pass by silencing a rule.
"""

from __future__ import annotations

import textwrap

import msgspec

from services.analyzer.engine import CheckPrefs, ConventionModel, Finding, check, learn
from services.analyzer.engine.conventions import DIRECTORY, LANGUAGE, REPOSITORY, Scope, make
from services.analyzer.engine.file_check import FileCheck, index_of
from services.analyzer.engine.findings import INFO
from services.analyzer.engine.thresholds import Thresholds
from services.source.extract import extract
from services.source.facts import FileFacts
from services.source.imports import resolve_imports
from tests.analyzer.engine_factories import HELD_RAISED, py_file

LOOSE = CheckPrefs(level="loose")


def _module(i: int, imports: str = "import logging\n", extra: str = "") -> str:
    return (
        f'"""Records of kind {i}."""\n\nfrom __future__ import annotations\n\n{imports}\n'
        "log = logging.getLogger(__name__)\n\n\n"
        f"class Record{i}:\n"
        f'    """One record of kind {i}."""\n\n'
        "    def __init__(self, name: str) -> None:\n"
        "        self.name = name\n\n"
        "    def load_items(self, limit: int) -> list[str]:\n"
        '        """The first items."""\n'
        "        try:\n"
        "            return fetch_items(self.name, limit)\n"
        "        except KeyError:\n"
        '            log.warning("no items for %s", self.name)\n'
        "            return []\n\n\n"
        f"def parse_record_{i}(text: str) -> Record{i}:\n"
        '    """Parse one record."""\n'
        f"    return Record{i}(text.strip())\n" + extra
    )


def _learn(files: dict[str, str], thresholds: Thresholds | None = None) -> ConventionModel:
    facts = [extract(path, textwrap.dedent(text).encode()) for path, text in files.items()]
    return learn(resolve_imports(facts), thresholds=thresholds)


def _review(model: ConventionModel, path: str, text: str, prefs: CheckPrefs | None = None) -> list[Finding]:
    text = textwrap.dedent(text).lstrip("\n")
    return check(extract(path, text.encode()), text, model, prefs=prefs)


def _repository(n: int = 30, imports: str = "import logging\n") -> dict[str, str]:
    return {f"acme/records/kind{i}.py": _module(i, imports) for i in range(n)}


def _found(findings: list[Finding], prefix: str) -> list[tuple[str, int]]:
    return [(f.rule, f.start_line) for f in findings if f.rule.startswith(prefix)]


def test_a_pragma_in_the_parameter_list_does_not_unannotate_a_method() -> None:
    model = _learn(_repository())
    findings = _review(
        model,
        "acme/records/special.py",
        '''
        """Special records."""


        class Special:
            """A record with a twist."""

            def load_items(  # type: ignore[override]
                self,
                limit: int,
            ) -> list[str]:
                """The first items."""
                return []

            def count_items(self, limit):
                """How many there are."""
                return limit
        ''',
    )

    assert _found(findings, "typing.annotations") == [("typing.annotations.method", 14)]


def test_typing_only_definitions_are_not_asked_for_docstrings() -> None:
    model = _learn(_repository(), HELD_RAISED)
    findings = _review(
        model,
        "acme/records/typed.py",
        '''
        """Typed helpers."""

        from __future__ import annotations

        from typing import TYPE_CHECKING, Protocol, overload

        if TYPE_CHECKING:
            from acme.records.kind1 import Record1

            def parse_any(text: str) -> Record1: ...


        class SupportsRead(Protocol):
            def read(self, size: int) -> bytes: ...


        class _ProxyBase:
            """Shared behaviour."""


        class Reader:
            """Reads records."""

            @overload
            def get(self, key: int) -> int: ...
            @overload
            def get(self, key: str) -> str: ...
            def get(self, key):
                """The value under ``key``."""
                return key


        def undocumented(text: str) -> str:
            return text
        ''',
    )

    assert _found(findings, "documentation") == [("documentation.docstring.function", 33)]
    # The overloads annotate their implementation.
    assert _found(findings, "typing.annotations") == []


def test_typescript_overload_signatures_document_and_type_their_implementation() -> None:
    module = "/** Parse kind {i}. */\nexport function parseKind{i}(text: string): number {{\n  return 1;\n}}\n"
    model = _learn({f"src/operators/kind{i}.ts": module.format(i=i) for i in range(30)}, HELD_RAISED)
    findings = _review(
        model,
        "src/operators/zipAll.ts",
        """
        import { zip } from './zip';

        /**
         * Collects all inner sources and combines their values by index.
         */
        export function zipAll<T>(): Operator<T, T[]>;
        export function zipAll<T, R>(project: (...values: T[]) => R): Operator<T, R>;

        export function zipAll<T, R>(project?: (...values: T[]) => R) {
          return zip(project);
        }

        export function undocumented(text: string): number {
          return text.length;
        }
        """,
    )

    assert _found(findings, "documentation") + _found(findings, "typing") == [("documentation.docstring.function", 13)]


def test_handlers_that_record_and_reraise_are_not_bare_broad_or_swallowed() -> None:
    model = _learn(_repository(), HELD_RAISED)
    findings = _review(
        model,
        "acme/records/sync.py",
        '''
        """Synchronisation."""

        import logging

        log = logging.getLogger(__name__)


        def push(batch: list[str]) -> None:
            """Send a batch."""
            try:
                send(batch)
            except Exception:
                log.exception("push failed")
                raise
            try:
                send(batch)
            except:
                rollback(batch)
                raise
            try:
                send(batch)
            except Exception as exc:
                raise SyncError(str(exc)) from exc
            try:
                send(batch)
            except Exception:
                pass
        ''',
    )

    # One cause, one finding (issue #24): the silence, not also the breadth of the clause.
    assert _found(findings, "idioms") == [("idioms.swallowed_exception", 26)]


def test_own_package_and_standard_library_are_not_competing_libraries() -> None:
    # The requests repository: its package uses urllib3, its tests import requests (itself).
    files = {f"src/requests/part{i}.py": _module(i, "import logging\nimport urllib3\n") for i in range(12)}
    files["src/requests/__init__.py"] = '"""HTTP for humans."""\n\nfrom requests.part1 import Record1\n'
    test = "import pytest\nimport requests\n\n\ndef test_get_{i}() -> None:\n    assert requests\n"
    files |= {f"tests/test_part{i}.py": test.format(i=i) for i in range(12)}
    model = _learn(files)
    test_file = """
        import pytest
        import requests
        from unittest import mock
        from urllib.request import pathname2url


        def test_local_file() -> None:
            with mock.patch("requests.get"):
                assert requests.get(pathname2url("/tmp/x"))
        """
    # Sent with its content, a file is not resolved against the repository: `requests` there is
    # the package under test, and `unittest.mock` and `urllib.request` come with Python.
    library = _review(model, "tests/test_files.py", test_file)
    assert _found(library, "dependencies.library") == []
    # A competing third-party client is still a question.
    other = _review(model, "src/requests/extra.py", "import aiohttp\n\n\nvalue = aiohttp\n")
    assert _found(other, "dependencies.library.http_client") == [("dependencies.library.http_client", 1)]


def test_a_standard_library_framework_still_competes_with_the_settled_one() -> None:
    # A pytest suite and a click application: unittest and argparse add no dependency, but a
    # TestCase class or an argparse parser is a second way of writing the tests or the command line.
    files = {f"acme/cli/cmd{i}.py": _module(i, "import click\nimport logging\n") for i in range(12)}
    test = "import pytest\nfrom acme.cli import cmd{i}\n\n\ndef test_cmd_{i}() -> None:\n    assert cmd{i}\n"
    files |= {f"tests/test_cmd{i}.py": test.format(i=i) for i in range(12)}
    model = _learn(files, HELD_RAISED)
    test_file = """
        import unittest
        from unittest import mock

        from acme.cli import cmd1


        class TestCmd(unittest.TestCase):
            def test_run(self) -> None:
                with mock.patch("acme.cli.cmd1.Record1"):
                    self.assertTrue(cmd1)
        """
    script = """
        import argparse
        import json


        def parse(argv: list[str]) -> argparse.Namespace:
            parser = argparse.ArgumentParser()
            parser.add_argument("--config", type=json.loads)
            return parser.parse_args(argv)
        """

    assert _found(_review(model, "tests/test_run.py", test_file), "dependencies.library") == [
        ("dependencies.library.testing", 1)
    ]
    assert _found(_review(model, "acme/cli/options.py", script), "dependencies.library") == [
        ("dependencies.library.cli", 1)
    ]


def test_methods_named_by_a_foreign_base_class_keep_their_names() -> None:
    model = _learn(_repository(), HELD_RAISED)
    findings = _review(
        model,
        "acme/records/feeds.py",
        '''
        """Feed parsing."""

        import logging
        from xml.sax.handler import ContentHandler


        class FeedHandler(ContentHandler):
            """Collects entries."""

            def startElement(self, name: str, attrs: dict[str, str]) -> None:
                """An element opens."""


        class EntryHandler(FeedHandler):
            """Collects one entry."""

            def endDocument(self) -> None:
                """The document ends."""


        class StampFormatter(logging.Formatter):
            """Time stamps in UTC."""

            def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
                """The record's time."""
                return ""


        class Local:
            """Our own class."""

            def loadItems(self) -> None:
                """Ours to name."""
        ''',
    )

    assert _found(findings, "naming.case.method") == [("naming.case.method", 32)]


def test_a_weak_directory_does_not_demote_the_repository_convention_it_agrees_with() -> None:
    files = [py_file(f"app/m{i}.py", classes=[(f"Item{i}", 1), (f"Entry{i}", 10)]) for i in range(620)]
    files.append(py_file("app/odd.py", classes=[("legacy_item", 1)]))
    files += [py_file(f"app/widgets/w{i}.py", classes=[(f"Widget{i}", 1)]) for i in range(16)]
    files.append(py_file("app/widgets/old.py", classes=[("old_widget", 1)]))
    model = learn(files, thresholds=HELD_RAISED)

    new = check(py_file("app/widgets/new.py", classes=[("new_widget", 1)]), "x = 1\n", model)

    assert [(f.rule, f.level, f.evidence.scope.kind if f.evidence else "") for f in new] == [
        ("naming.case.class", "strict", LANGUAGE)
    ]


def test_loose_findings_do_not_push_strict_ones_out_of_the_per_rule_cap() -> None:
    def term(variant: str, share_of_20: int) -> object:
        return make(
            "vocabulary",
            "vocabulary.term",
            Scope(REPOSITORY),
            variant.upper(),
            share_of_20,
            20,
            HELD_RAISED,
            key=variant,
        )

    loose, strict = term("cfg", 18), term("msg", 20)
    assert (loose.level, strict.level) == ("loose", "strict")  # type: ignore[attr-defined]
    model = ConventionModel(conventions=[loose, strict], files=1)  # type: ignore[list-item]
    facts: FileFacts = py_file("app/x.py", lines=20)
    fc = FileCheck(facts, "x = 1\n" * 20, index_of(model), LOOSE, None)
    for line in (1, 2, 3, 4):
        fc.emit(loose, line, "cfg", severity=INFO, key=f"cfg{line}")  # type: ignore[arg-type]
    fc.emit(strict, 9, "msg", severity=INFO, key="msg")  # type: ignore[arg-type]

    kept = fc.finish()

    assert [(f.start_line, f.level) for f in kept] == [(1, "loose"), (2, "loose"), (9, "strict")]
    assert kept[-1].message.endswith("(2 more in this file)")


def test_support_files_in_a_test_directory_are_not_misnamed_tests() -> None:
    files = _repository(24)
    for i in range(24):
        files[f"tests/test_kind{i}.py"] = (
            f"from acme.records.kind{i} import parse_record_{i}\n\n\n"
            f"def test_parse_record_{i}() -> None:\n    assert parse_record_{i}(' a ').name == 'a'\n"
        )
    model = _learn(files, HELD_RAISED)
    helpers = """\
        from acme.records.kind1 import Record1


        def make_record(name: str = "a") -> Record1:
            return Record1(name)
        """
    checks = """\
        from tests.helpers import make_record


        def test_make_record() -> None:
            assert make_record().name == "a"
        """

    assert _found(_review(model, "tests/__init__.py", ""), "structure") == []
    assert _found(_review(model, "tests/helpers.py", helpers), "structure") == []
    assert _found(_review(model, "tests/record_checks.py", checks), "structure") == [("structure.tests.naming", 1)]


def test_quotes_inside_a_regular_expression_literal_are_not_strings() -> None:
    conv = make("formatting", "formatting.quotes", Scope(LANGUAGE, "javascript"), "single", 980, 1000, HELD_RAISED)
    model = ConventionModel(conventions=[conv], files=40)
    text = textwrap.dedent(
        """\
        it('responds with the repository', (done) => {
          request(app)
            .get('/api/repos')
            .expect('ETag', /^(?:W\\/)?"[^"]+"$/)
            .expect(/"name":"express"/)
            .expect(200, done);
          const charset = /;\\s*charset\\s*=\\s*(?:"([^"]+)"|([^;,\\s]+))/i.exec(type);
          const half = total / 2 / count;
          res.set('Set-Cookie', ["type=ninja"]);
        });
        """
    )

    findings = check(extract("test/acceptance/web-service.js", text.encode()), text, model)

    assert _found(findings, "formatting.quotes") == [("formatting.quotes", 9)]


def test_a_new_module_is_asked_for_a_test_only_where_public_modules_have_tests_named_after_them() -> None:
    from services.analyzer.engine import check_change

    named = _repository(12)
    for i in range(12):
        named[f"tests/test_kind{i}.py"] = (
            f"from acme.records.kind{i} import parse_record_{i}\n\n\ndef test_{i}():\n    pass\n"
        )
    for helper in ("_compat", "_frames", "_utils"):  # internal modules, tested through the public ones
        named[f"acme/records/{helper}.py"] = "import sys\n\nPY311 = sys.version_info >= (3, 11)\n"
    named["docs/conf.py"] = "project = 'acme'\n"
    imported = _repository(12)
    imported["tests/test_records.py"] = (
        "".join(f"from acme.records.kind{i} import parse_record_{i}\n" for i in range(12))
        + "\n\ndef test_all():\n    pass\n"
    )

    def untested(files: dict[str, str], path: str) -> list[str]:
        found = check_change([], [path], _learn(files, HELD_RAISED))
        return [f.path for f in found if f.rule == "structure.tests.coverage"]

    assert untested(named, "acme/records/kind99.py") == ["acme/records/kind99.py"]
    assert untested(named, "acme/records/_helpers.py") == []
    assert untested(named, "docs/extensions.py") == []
    assert untested(imported, "acme/records/kind99.py") == []  # its tests are not named after modules


def test_a_test_name_may_quote_the_code_it_tests() -> None:
    files = _repository(12)
    for i in range(12):
        files[f"tests/test_kind{i}.py"] = "".join(
            f"def test_parse_record_{i}_{case}() -> None:\n    assert True\n\n\n"
            for case in ("empty", "spaces", "unicode")
        )
    model = _learn(files)
    text = """\
        def test_quote_None() -> None:
            assert True


        def test_returns_Record1() -> None:
            assert True


        def testParsesRecord() -> None:
            assert True
        """

    assert _found(_review(model, "tests/test_quoting.py", text), "naming") == [("naming.case.test_function", 9)]


def test_a_file_the_declaring_tool_excludes_is_not_held_to_the_habit_learned_for_that_rule() -> None:
    # loguru's model: ruff (I001 selected) excludes tests/exceptions/source/*, whose fixtures put
    # `from loguru import logger` first because the rendered traceback is the expected output; the
    # declaration replaced the learned import order in loguru/ and docs/ only, and the habit learned
    # over all python files (135 of 140) kept governing the fixtures.
    learned = make(
        "formatting",
        "formatting.imports.order",
        Scope(LANGUAGE, "python"),
        "ordered",
        135,
        140,
        HELD_RAISED,
        language="python",
    )
    declared = msgspec.structs.replace(
        learned,
        id="formatting.imports.order@directory:loguru[python]",
        scope=Scope(DIRECTORY, "loguru"),
        source="declared",
        params={"exempt": "tests/exceptions/source/*"},
    )
    model = ConventionModel(conventions=[learned, declared], files=140)
    fixture = "from loguru import logger\n\nimport sys\n\nlogger.add(sys.stderr)\n"

    def found(path: str) -> list[str]:
        return [f.rule for f in check(extract(path, fixture.encode()), fixture, model)]

    assert found("tests/exceptions/source/others/recursion_error.py") == []
    assert found("tests/test_add_sinks.py") == ["formatting.imports.order"]

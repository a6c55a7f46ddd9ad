"""False alarms of real changes on the fresh repositories (issue #24, docs/review.md "Out-of-sample
check on fresh repositories"): JSDoc attachment, file roles, names a framework shapes, thin
evidence. One class per test, on code shaped like the code that showed it; each test also checks
that the rule is alive next to the false alarm."""

from __future__ import annotations

from services.analyzer.engine import CheckPrefs
from services.source.extract import extract
from tests.analyzer.engine_factories import client_repository, found_rules, learn_sources, review_source


def _reporter(i: int) -> str:
    return (
        '"use strict";\n\n'
        'var Base = require("./base");\n\n'
        f"class Reporter{i} extends Base {{\n"
        "  constructor(runner, options) {\n"
        "    super(runner, options);\n"
        "  }\n\n"
        "  /**\n"
        "   * Print the summary.\n"
        "   */\n"
        "  summarize() {\n"
        "    this.epilogue();\n"
        "  }\n\n"
        "  /**\n"
        "   * Count the passes.\n"
        "   */\n"
        "  countPasses() {\n"
        "    return this.stats.passes;\n"
        "  }\n"
        "}\n\n"
        f"module.exports = Reporter{i};\n"
    )


def test_a_jsdoc_block_a_blank_line_above_documents_its_method_and_private_constructor_need_none() -> None:
    # mocha c3f32ce: reporters turned from util.inherits prototypes into classes; nyan.js keeps
    # each method's `/** ... @private */` block one blank line above the method, and the class's
    # `constructor` (documented by the class, as __init__ is) has no block of its own.
    model = learn_sources({f"lib/reporters/reporter{i}.js": _reporter(i) for i in range(40)})
    text = """\
    "use strict";

    var Base = require("./base");

    class NyanCat extends Base {
      constructor(runner, options) {
        super(runner, options);
        this.tick = 0;
      }

      /**
       * Draw the nyan cat
       *
       * @private
       */

      draw() {
        this.appendRainbow();
      }

      /**
       * @private
       */
      drawScoreboard() {
        return this.stats;
      }

      rainbowify(str) {
        return str;
      }
    }

    module.exports = NyanCat;
    """
    assert found_rules(review_source(model, "lib/reporters/nyan.js", text), "documentation") == [
        ("documentation.docstring.method", 28)
    ]
    facts = extract("lib/reporters/nyan.js", text.replace("\n    ", "\n").encode())
    methods = {s.name: s for s in facts.symbols if s.kind == "method"}
    assert (methods["draw"].has_docstring, methods["draw"].visibility) == (True, "private")
    assert methods["drawScoreboard"].visibility == "private"
    assert (methods["rainbowify"].has_docstring, methods["rainbowify"].visibility) == (False, "public")


def _tests_dir(n: int = 12) -> dict[str, str]:
    test = "def test_send_{0}():\n    assert True\n\n\ndef test_build_{0}():\n    assert True\n"
    return {f"tests/test_client{i}.py": test.format(i) for i in range(n)}


def test_a_root_conftest_and_a_public_test_tools_module_are_not_misplaced_tests() -> None:
    # babel's root conftest.py (collect_ignore, doctest setup) and Python-Markdown's public
    # markdown/test_tools.py (a TestCase base and helpers for extension authors, imported by
    # its tests), in repositories whose tests live in tests/.
    files = {**client_repository(), **_tests_dir()}
    model = learn_sources(files)
    conftest = """\
    from pathlib import Path

    import pytest

    collect_ignore = ["setup.py"]


    @pytest.fixture(autouse=True)
    def setup_doctest(doctest_namespace):
        doctest_namespace["Path"] = Path
    """
    assert found_rules(review_source(model, "conftest.py", conftest), "structure") == []
    tools = """\
    import unittest

    from . import markdown


    class TestCase(unittest.TestCase):
        def assertMarkdownRenders(self, source, expected, **kwargs):
            self.assertMultiLineEqual(markdown(source, **kwargs), expected)


    class LegacyTestMeta(type):
        def __new__(cls, name, bases, dct):
            def generate_test(infile, outfile):
                def test(self):
                    self.assertEqual(infile, outfile)

                return test

            return type.__new__(cls, name, bases, dct)
    """
    assert not extract("acme/test_tools.py", tools.encode()).is_test
    assert found_rules(review_source(model, "acme/test_tools.py", tools), "structure") == []
    # A test module beside the code is still told where tests live here.
    beside = "def test_render():\n    assert True\n"
    assert extract("acme/test_render.py", beside.encode()).is_test
    assert found_rules(review_source(model, "acme/test_render.py", beside), "structure") == [
        ("structure.tests.placement", 1)
    ]


def test_a_build_script_importing_the_build_system_brings_no_new_dependency() -> None:
    # mistune's setup.py: `from setuptools import setup`, in a library that never imports setuptools.
    model = learn_sources(client_repository(40))
    setup = 'from setuptools import setup\n\nsetup(name="acme", packages=["acme"])\n'
    assert found_rules(review_source(model, "setup.py", setup), "dependencies") == []
    # mistune's root serve-doc.py, a docs server no import can name, runs livereload for its author.
    serve = 'from livereload import Server, shell\n\napp = Server()\napp.serve(root="build/_html")\n'
    assert found_rules(review_source(model, "serve-doc.py", serve), "dependencies") == []
    assert found_rules(review_source(model, "serve_doc.py", serve), "dependencies") == [("dependencies.library.new", 1)]
    assert found_rules(review_source(model, "acme/clients/build.py", setup), "dependencies") == [
        ("dependencies.library.new", 1)
    ]


def test_root_scripts_and_benchmarks_print_their_output() -> None:
    # dateutil's executable updatezinfo.py at the root prints while it finds its import; got's
    # benchmark/server.ts logs what it measures.
    model = learn_sources(client_repository(40))
    script = """\
    #!/usr/bin/env python
    import os

    try:
        import acme
    except ImportError:
        print("acme not installed locally, adding src to Python path")
        import sys

        sys.path.append(os.path.join(os.path.dirname(__file__), "src"))
    """
    assert found_rules(review_source(model, "updatezinfo.py", script), "idioms") == []
    assert found_rules(review_source(model, "benchmark/server.py", script), "idioms") == []
    # The same lines in the library, or in a root module that is not an executable, are a print left in.
    assert found_rules(review_source(model, "acme/clients/update.py", script), "idioms") == [("idioms.print", 7)]
    assert found_rules(review_source(model, "update.py", script.split("\n", 1)[1]), "idioms") == [("idioms.print", 6)]


def _unittest_module(i: int) -> str:
    return (
        "import unittest\n\n\n"
        f"class Easter{i}Test(unittest.TestCase):\n"
        f"    def testEasterWestern{i}(self):\n        self.assertTrue(True)\n\n"
        f"    def testEasterOrthodox{i}(self):\n        self.assertTrue(True)\n\n\n"
        f"def test_easter_julian_{i}():\n    assert True\n"
    )


def test_unittest_method_names_do_not_make_a_habit_for_test_functions() -> None:
    # dateutil: ~1,000 camelCase unittest methods (testEasterWestern, the style of the TestCase
    # API they inherit) beside pytest-style module functions; a new pytest file's
    # `test_year_only` was asked to become `testYearOnly`.
    files = {f"dateutil/test/test_easter{i}.py": _unittest_module(i) for i in range(30)}
    model = learn_sources(files)
    pytest_style = "import pytest\n\n\n@pytest.mark.parametrize('dt', [1])\ndef test_year_only(dt):\n    assert dt\n"
    assert found_rules(review_source(model, "dateutil/test/test_isoparser.py", pytest_style), "naming") == []
    camel = pytest_style.replace("test_year_only", "testYearOnly")
    assert found_rules(review_source(model, "dateutil/test/test_isoparser.py", camel), "naming") == [
        ("naming.case.test_function", 5)
    ]


def test_one_two_word_parameter_among_one_word_ones_is_no_camel_case_habit() -> None:
    # Python-Markdown's tests/: `assertStartsWith(self, expectedPrefix, text, msg=None)` is the
    # directory's only two-word parameter among one-word ones (source, expected, options); the new
    # formatter option `lang_str` was asked to become `langStr`.
    files = dict(client_repository(30))
    files["tests/test_extensions.py"] = (
        "import unittest\n\n\nclass TestCaseWithAssertStartsWith(unittest.TestCase):\n"
        "    def assertStartsWith(self, expectedPrefix, text, msg=None):\n"
        "        self.assertTrue(text.startswith(expectedPrefix), msg)\n"
    )
    for i in range(24):
        files[f"tests/test_syntax/test_block{i}.py"] = (
            "import unittest\n\n\n"
            f"class TestBlock{i}(unittest.TestCase):\n"
            f"    def check_{i}(self, source, expected, options):\n"
            "        self.assertEqual(source, expected, options)\n"
        )
    model = learn_sources(files)
    text = (
        "import unittest\n\n\nclass TestCodeHilite(unittest.TestCase):\n"
        "    def test_custom_formatter(self):\n"
        "        class CustomAddLangHtmlFormatter(object):\n"
        "            def __init__(self, lang_str='', **options):\n"
        "                self.lang_str = lang_str\n"
    )
    assert (
        found_rules(review_source(model, "tests/test_syntax/test_code_hilite.py", text), "naming.case.parameter") == []
    )
    camel = text.replace("lang_str", "langStr")
    assert found_rules(
        review_source(model, "tests/test_syntax/test_code_hilite.py", camel), "naming.case.parameter"
    ) == [("naming.case.parameter", 7)]


def test_three_example_files_of_three_in_a_mixed_repository_are_no_testing_habit() -> None:
    # pyparsing: its tests mix unittest (7 files) and pytest (5); examples/ holds 3 unittest files
    # of 3. "3 of 3 files in `examples/` use unittest" made a new example's pytest test strict.
    files = dict(client_repository(30))
    for i in range(7):
        files[f"tests/test_unit{i}.py"] = "import unittest\n\n\nclass TestUnit(unittest.TestCase):\n    pass\n"
    for i in range(5):
        files[f"tests/test_util{i}.py"] = "import pytest\n\n\ndef test_util():\n    assert pytest\n"
    for i in range(3):
        files[f"examples/test_grammar{i}.py"] = "import unittest\n\n\nclass TestGrammar(unittest.TestCase):\n    pass\n"
    model = learn_sources(files)
    new_test = "import pytest\n\n\ndef test_tiny():\n    assert pytest\n"
    assert found_rules(review_source(model, "examples/tiny/tests/test_tiny.py", new_test), "dependencies") == []
    # A directory surely apart from the repository around it keeps its own habit.
    for i in range(7):
        files[f"tests/test_unit{i}.py"] = "import pytest\n\n\ndef test_unit():\n    assert pytest\n"
    for i in range(3, 20):
        files[f"examples/test_grammar{i}.py"] = "import unittest\n\n\nclass TestGrammar(unittest.TestCase):\n    pass\n"
    model = learn_sources(files)
    assert found_rules(review_source(model, "examples/tiny/tests/test_tiny.py", new_test), "dependencies") == [
        ("dependencies.library.testing", 1)
    ]


def test_a_name_spelling_the_label_its_value_is_given_keeps_the_label_case() -> None:
    # pyparsing's examples/tiny: grammar productions renamed after their set_name() labels
    # ("cleanup for better diagramming"), in a repository of snake_case module variables.
    files = {
        f"examples/grammar{i}.py": (
            "import pyparsing as pp\n\n"
            f'integer_value{i} = pp.Word(pp.nums).set_name("integer")\n'
            f'quoted_text{i} = pp.QuotedString(\'"\').set_name("string")\n'
        )
        for i in range(30)
    }
    model = learn_sources(files)
    text = """\
    import pyparsing as pp

    Declaration_Statement = pp.Group(
        pp.Word(pp.alphas) + pp.Word(pp.alphanums)
    ).set_name("Declaration_Statement")
    Read_Statement = pp.Group(pp.Keyword("read") + pp.Word(pp.alphas)).set_name("statement")
    """
    # Capitalised, the name that does not spell its label is a finding at the loose level (naming.py).
    loose = CheckPrefs(level="loose")
    assert found_rules(review_source(model, "examples/tiny/tiny_parser.py", text, loose), "naming") == [
        ("naming.case.variable", 6)
    ]


def _example_app(i: int) -> str:
    return f'"""Example app {i}."""\n\n\ndef app(environ, start_response):\n    return [b"hello {i}"]\n'


def test_an_example_directory_with_its_own_tests_is_not_held_to_the_librarys_layout() -> None:
    # gunicorn's examples/<name>/ directories are small projects: an app, a gunicorn_conf.py, a
    # Dockerfile and their own test_*.py side by side, while the library's tests live in tests/.
    files = {**client_repository(), **_tests_dir()}
    beside = "def test_app_answers():\n    assert True\n\n\ndef test_app_streams():\n    assert True\n"
    for name in ("dirty_demo", "streaming_chat", "embedding_service"):
        files[f"examples/{name}/__init__.py"] = ""
        files[f"examples/{name}/app.py"] = _example_app(1)
        files[f"examples/{name}/test_app.py"] = beside
        files[f"examples/{name}/test_protocol.py"] = beside
    # One example keeps its tests in a tests/ of its own (gunicorn's celery_alternative).
    files["examples/queue_demo/tasks.py"] = _example_app(2)
    files["examples/queue_demo/tests/test_tasks.py"] = beside
    model = learn_sources(files)
    place = [c for c in model.conventions if c.rule == "structure.tests.placement" and c.scope.kind == "language"]
    # The examples' tests neither teach the layout nor thin it: only the library's 12 count.
    assert [(c.choice, c.count) for c in place] == [("separate", 12)]
    for path in ("examples/dirty_demo/test_stash_integration.py", "examples/http2_demo/test_http2.py"):
        assert found_rules(review_source(model, path, beside), "structure") == []
    # The library's own test of its examples stays in its suite, and a test beside the library's
    # code is still told where tests live here.
    assert found_rules(review_source(model, "tests/examples/test_examples_run.py", beside), "structure") == []
    assert found_rules(review_source(model, "acme/test_render.py", beside), "structure") == [
        ("structure.tests.placement", 1)
    ]

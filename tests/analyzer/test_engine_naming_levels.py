"""The strict level of the naming case rules (function, method, variable, class) needs a name that
starts with a lowercase letter: a capitalised or ALL_CAPS name breaking the habit is a deliberate
name often enough (a factory named like its class, a mode sentinel, a version in a class name) that
it stays a finding at the loose level only, while a lowercase-first name in the wrong case (camelCase
among snake_case names, a test class in camelCase among PascalCase ones) stays strict. A name the
module imports and binds again (a fallback where the import fails) is the import's, not a finding."""

from __future__ import annotations

from services.analyzer.engine import CheckPrefs, ConventionModel, Finding, check, learn
from services.source.facts import FileFacts
from tests.analyzer.engine_factories import HELD_RAISED, client_repository, learn_sources, py_file, review_source

LOOSE_PREFS = CheckPrefs(level="loose")


def _repository() -> dict[str, str]:
    """Client modules with snake_case functions, methods, classes in PascalCase, and snake_case locals."""
    files = client_repository()
    for i in range(20):
        files[f"acme/clients/retry{i}.py"] = (
            f'"""Retries {i}."""\n\n\ndef retry_call_{i}(call):\n    """Retry."""\n'
            "    retry_count = 3\n    last_error = None\n    return call(retry_count, last_error)\n"
        )
    return files


Found = list[tuple[str, int, str]]


def _naming(findings: list[Finding]) -> Found:
    return [(f.rule, f.start_line, f.level) for f in findings if f.rule.startswith("naming.")]


def _both(
    model: ConventionModel, path: str, text: str
) -> tuple[list[tuple[str, int, str]], list[tuple[str, int, str]]]:
    strict = _naming(review_source(model, path, text))
    loose = _naming(review_source(model, path, text, prefs=LOOSE_PREFS))
    return strict, loose


def test_a_factory_named_like_the_class_it_stands_for_is_loose_a_camel_case_helper_strict() -> None:
    # A lock factory named like threading's RLock, beside a new camelCase helper in a snake_case module.
    model = learn_sources(_repository())
    text = '''
        """Locks."""

        import threading


        def PLock(*args, **kwargs):
            """A lock that can be taken again by the thread holding it."""
            return threading.RLock(*args, **kwargs)


        def isText(value):
            """Whether value is text."""
            return isinstance(value, str)
        '''
    strict, loose = _both(model, "acme/clients/locks.py", text)
    assert strict == [("naming.case.function", 11, "strict")]
    assert loose == [("naming.case.function", 6, "loose"), ("naming.case.function", 11, "strict")]


def test_a_mode_function_that_doubles_as_a_sentinel_is_loose() -> None:
    # Mode dispatchers spelled in capitals because the value stored as the current mode is the function.
    model = learn_sources(_repository())
    text = '''
        """Modes."""


        def MERGE(target, spec, scope):
            """Merge mode; also the sentinel for it."""
            return target


        class Pipeline:
            """Runs specs."""

            def SPLIT(self, target):
                """Split mode."""
                return target

            def runStep(self, target):
                """Run one step."""
                return target


        default_mode = MERGE
        stepTotal = 4
        '''
    strict, loose = _both(model, "acme/clients/modes.py", text)
    assert strict == [
        ("naming.case.method", 16, "strict"),
        ("naming.case.variable", 22, "strict"),
    ]
    assert ("naming.case.function", 4, "loose") in loose
    assert ("naming.case.method", 12, "loose") in loose


def test_a_version_suffixed_typed_dict_is_loose_a_lower_first_test_class_strict() -> None:
    model = learn_sources(_repository())
    text = '''
        """Process arguments per Python version."""

        from typing import TypedDict


        class SpawnArgs(TypedDict, total=False):
            """Arguments every platform takes."""

            cwd: str


        class SpawnArgs3_9(SpawnArgs, total=False):
            """What 3.9 adds."""

            group: int


        class testStripMarkup:
            """A new test class among PascalCase ones."""
        '''
    strict, loose = _both(model, "acme/clients/spawn.py", text)
    assert strict == [("naming.case.class", 18, "strict")]
    assert loose == [("naming.case.class", 12, "loose"), ("naming.case.class", 18, "strict")]


def test_a_fallback_binding_keeps_the_name_it_imports() -> None:
    # A private pandas class imported where it exists and bound to None where it does not; a
    # function imported or defined in its stead. The repository's own camelCase variable stays a finding.
    model = learn_sources(_repository())
    text = '''
        """Optional integrations."""

        try:
            from frames.window import _Window_and_Span
        except ImportError:
            _Window_and_Span = None

        try:
            from fastpath import quoteText
        except ImportError:

            def quoteText(text):
                """Quote text."""
                return text


        retryCount = 3
        '''
    strict, loose = _both(model, "acme/clients/optional.py", text)
    assert strict == [("naming.case.variable", 17, "strict")]
    assert loose == strict


def test_a_files_naming_habit_is_strict_when_one_of_its_names_starts_lowercase() -> None:
    files = [py_file(f"app/m{i}.py", functions=[(f"load_item_{i}", 1), (f"save_item_{i}", 10)]) for i in range(15)]
    model = learn(files, thresholds=HELD_RAISED)
    legacy = py_file("app/legacy.py", functions=[("GetOption", 1), ("SetOption", 10), ("Load", 20), ("save", 30)])
    mixed = py_file("app/mixed.py", functions=[("GetOption", 1), ("setOption", 10), ("Load", 20), ("save", 30)])

    def naming(facts: FileFacts, prefs: CheckPrefs | None = None) -> list[tuple[int, str, str | None]]:
        found = check(facts, "x = 1\n" * 40, model, prefs=prefs)
        return [(f.start_line, f.level, f.suggestion) for f in found if f.rule == "naming.case.function"]

    assert naming(legacy) == []
    assert naming(legacy, LOOSE_PREFS) == [(1, "loose", "get_option")]
    assert naming(mixed) == [(10, "strict", "set_option")]

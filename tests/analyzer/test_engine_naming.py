"""Case styles, word splitting and rendering of identifiers."""

from __future__ import annotations

import pytest

from services.source.naming import case_style, compatible, convert, render, replace_word, split_words


@pytest.mark.parametrize(
    ("name", "style"),
    [
        ("get_user", "snake_case"),
        ("_private_helper", "snake_case"),
        ("getUser", "camelCase"),
        ("getHTTPResponse", "camelCase"),
        ("HTTPServer", "PascalCase"),
        ("XMLHttpRequest", "PascalCase"),
        ("MAX_SIZE", "UPPER_CASE"),
        ("URL", "UPPER"),
        ("user", "flat"),
        ("utf8", "flat"),
        ("my-component", "kebab-case"),
        ("visit_FunctionDef", "mixed"),
        ("__init__", "dunder"),
        ("_", ""),
        ("__x", "flat"),
    ],
)
def test_case_style(name: str, style: str) -> None:
    assert case_style(name) == style


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("HTTPServer", ["http", "server"]),
        ("getHTTPResponse", ["get", "http", "response"]),
        ("utf8Decode", ["utf8", "decode"]),
        ("base64_encode", ["base64", "encode"]),
        ("getV2Data", ["get", "v2", "data"]),
        ("__init__", ["init"]),
        ("my-file.name", ["my", "file", "name"]),
    ],
)
def test_split_words(name: str, words: list[str]) -> None:
    assert split_words(name) == words


def test_render_and_convert_round_trip() -> None:
    assert render(["http", "server"], "PascalCase") == "HttpServer"
    assert render(["get", "user", "id"], "camelCase") == "getUserId"
    assert render(["max", "size"], "UPPER_CASE") == "MAX_SIZE"
    assert render(["my", "file"], "kebab-case") == "my-file"
    assert convert("_getUserName", "snake_case") == "_get_user_name"
    assert convert("utf8Decode", "snake_case") == "utf8_decode"
    assert convert("get_user_id", "camelCase") == "getUserId"


def test_flat_names_fit_both_lowercase_styles() -> None:
    assert compatible("flat", "snake_case")
    assert compatible("flat", "camelCase")
    assert not compatible("camelCase", "snake_case")
    assert compatible("UPPER", "UPPER_CASE")


def test_replace_word_keeps_the_names_style() -> None:
    assert replace_word("usr_id", 0, "user") == "user_id"
    assert replace_word("usrId", 0, "user") == "userId"
    assert replace_word("MAX_USR", 1, "user") == "MAX_USER"
    assert replace_word("_usr", 0, "user") == "_user"


def test_directory_conventions_cite_examples_from_their_own_directory() -> None:
    from services.analyzer.engine import learn
    from tests.analyzer.engine_factories import py_file

    # No repository-wide style, so each directory gets a convention of its own.
    files = [py_file(f"lib/m{i}.py", functions=[(f"lib_step_{i}", 1)]) for i in range(30)]
    files += [py_file(f"web/m{i}.py", functions=[(f"webHandler{i}", 1)]) for i in range(30)]
    files += [py_file(f"core/m{i}.py", functions=[(f"core_step_{i}", 1)]) for i in range(30)]
    model = learn(files)
    by_dir = {c.scope.value: c for c in model.conventions if c.rule == "naming.case.function"}
    assert by_dir["core"].choice == "snake_case"
    assert by_dir["web"].choice == "camelCase"
    for directory, prefix in (("core", "core_step_"), ("web", "webHandler"), ("lib", "lib_step_")):
        assert by_dir[directory].examples
        assert all(name.startswith(prefix) for name in by_dir[directory].examples), by_dir[directory]


def test_render_spells_a_repositorys_acronyms_in_capitals() -> None:
    acronyms = frozenset({"http", "url"})
    assert convert("http_server", "PascalCase", acronyms) == "HTTPServer"
    assert convert("parse_url_now", "camelCase", acronyms) == "parseURLNow"
    assert convert("http_server", "camelCase", acronyms) == "httpServer"  # a camelCase name starts lower
    assert replace_word("getHttpUrl", 2, "url", acronyms) == "getHTTPURL"


def test_suggestions_follow_the_acronyms_the_repository_writes() -> None:
    from services.analyzer.engine import check, learn
    from tests.analyzer.engine_factories import HELD_RAISED, py_file

    classes = ["HTTPClient", "HTTPError", "URLParser", "BaseURL", "Url"]  # URL twice in capitals, once not
    files = [py_file(f"app/m{i}.py", classes=[(f"{name}{i}", 1) for name in classes]) for i in range(8)]
    model = learn(files, thresholds=HELD_RAISED)
    assert set(model.acronyms) >= {"http", "url"}

    found = check(py_file("app/new.py", classes=[("http_url_reader", 1)]), "x = 1\n", model)

    assert [f.suggestion for f in found if f.rule == "naming.case.class"] == ["HTTPURLReader"]


def test_a_file_with_a_naming_habit_of_its_own_gets_one_finding_for_it() -> None:
    from services.analyzer.engine import CheckPrefs, check, learn
    from tests.analyzer.engine_factories import HELD_RAISED, py_file

    files = [py_file(f"app/m{i}.py", functions=[(f"load_item_{i}", 1), (f"save_item_{i}", 10)]) for i in range(15)]
    model = learn(files, thresholds=HELD_RAISED)
    legacy = py_file("app/legacy.py", functions=[("GetOption", 1), ("SetOption", 10), ("Load", 20), ("save", 30)])
    one_off = py_file("app/new.py", functions=[("getOption", 1), ("set_option", 10), ("load", 20), ("save", 30)])

    # Capitalised names breaking the habit are findings at the loose level only (naming.py).
    loose = CheckPrefs(level="loose")
    habit = [f for f in check(legacy, "x = 1\n" * 40, model, prefs=loose) if f.rule == "naming.case.function"]
    single = [f for f in check(one_off, "x = 1\n" * 40, model) if f.rule == "naming.case.function"]

    assert len(habit) == 1
    assert habit[0].start_line == 1
    assert "this file names 3 of 4 functions so" in habit[0].message
    assert habit[0].suggestion == "get_option"
    assert habit[0].level == "loose"
    assert [f.suggestion for f in single] == ["get_option"]


def test_only_a_directory_really_less_consistent_silences_the_repository() -> None:
    from services.analyzer.engine import check, learn
    from tests.analyzer.engine_factories import HELD_RAISED, py_file

    files = [py_file(f"app/m{i}.py", functions=[(f"load_item_{i}", 1), (f"save_item_{i}", 10)]) for i in range(100)]
    # One exception among 12 names: within chance of the repository's 99.5%.
    files += [py_file(f"app/small/s{i}.py", functions=[(f"small_step_{i}", 1)]) for i in range(11)]
    files.append(py_file("app/small/odd.py", functions=[("oddStep", 1)]))
    # Half of 12: a directory with a habit of its own.
    files += [
        py_file(f"app/mixed/x{i}.py", functions=[(f"mixedStep{i}" if i % 2 else f"mixed_{i}", 1)]) for i in range(12)
    ]
    model = learn(files, thresholds=HELD_RAISED)
    scopes = {c.scope.value for c in model.conventions if c.rule == "naming.case.function"}

    assert "app/mixed" in scopes
    assert "app/small" not in scopes
    small = check(py_file("app/small/new.py", functions=[("newStep", 1)]), "x = 1\n", model)
    mixed = check(py_file("app/mixed/new.py", functions=[("newStep", 1)]), "x = 1\n", model)
    assert [f.rule for f in small] == ["naming.case.function"]
    assert mixed == []

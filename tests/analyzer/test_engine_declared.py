"""Conventions the repository declares in its tools' configuration files."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from services.analyzer.engine import CheckPrefs, Convention, ConventionModel, check, learn
from services.analyzer.engine.toolconfig import CONFIG_NAMES, ESLINT_FILES, INI_FILES, MYPY_FILES, PRETTIER_FILES, read
from services.analyzer.engine.toolconfig import LENGTH as LINE_LENGTH
from services.analyzer.preferences import effective
from services.analyzer.review import Target, review, with_change_exclusions
from services.analyzer.state import LoadedRepo
from services.source.extract import extract
from services.source.facts import FileFacts
from services.source.imports import resolve_imports
from tests.analyzer.engine_factories import HELD_RAISED
from tests.analyzer.service_corpus import NOUNS, PACKAGES, module_source

LONG_STRING = 'ERROR_HELP = "' + "see the operations guide, section on retries and timeouts; " * 4 + '"\n'
WORKFLOW = (
    "name: ci\non: [push, pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
    "      - uses: actions/checkout@v4\n"
    "      - run: python -m pytest -q -p no:cacheprovider tests --timeout 300 --maxfail 1 -o junit_family=xunit2 "
    "--junitxml reports/junit.xml\n"
)


def facts_of(path: str, text: str) -> FileFacts:
    return extract(path, text.encode())


def python_repo(*, long_lines: bool) -> list[FileFacts]:
    """45 real modules; with ``long_lines`` each keeps a 230-character string (black leaves those)."""
    files = [
        facts_of(
            f"app/{package}/{noun}.py",
            module_source(package, noun, p * 20 + n) + ("\n" + LONG_STRING if long_lines else ""),
        )
        for p, package in enumerate(PACKAGES)
        for n, noun in enumerate(NOUNS)
    ]
    files.append(facts_of(".github/workflows/ci.yml", WORKFLOW))
    return files


def conv(model: ConventionModel, rule: str, language: str = "python") -> Convention:
    [found] = [c for c in model.conventions if c.rule == rule and c.language == language and c.scope.kind == "language"]
    return found


def long_line_findings(model: ConventionModel, path: str, text: str) -> list[tuple[int, str]]:
    return [(f.start_line, f.message) for f in check(facts_of(path, text), text, model) if f.rule == LINE_LENGTH]


def module_with(line: str) -> str:
    return module_source("accounts", "audit", 90) + "\n" + line + "\n"


def test_a_black_repository_with_very_long_lines_gets_blacks_line_length() -> None:
    files = python_repo(long_lines=True)
    learned_only = learn(files)
    declared = learn(files, tool_configs={"pyproject.toml": '[tool.black]\ntarget-version = ["py311"]\n'})
    long_code = "TOTAL = " + " + ".join(f"count_{n}" for n in range(12))
    text = module_with(long_code)

    assert conv(learned_only, LINE_LENGTH).level == "off"  # nothing learned: every file has one
    assert long_line_findings(learned_only, "app/reports/audit.py", text) == []
    length = conv(declared, LINE_LENGTH)
    assert (length.choice, length.level, length.source) == ("88", "strict", "declared")
    assert length.description.startswith("declared in pyproject.toml: [tool.black] (default line-length 88)")
    assert length.params["agreement"] == "overrides"
    [(line, message)] = long_line_findings(declared, "app/reports/audit.py", text)
    assert line == text.count("\n")
    assert message.startswith(f"line is {len(long_code)} characters, but declared in pyproject.toml: [tool.black]")


def test_a_formatters_limit_spares_the_strings_and_comments_it_cannot_split() -> None:
    # Every file keeps a 230-character string black left alone: no limit binds such lines here.
    model = learn(python_repo(long_lines=True), tool_configs={"pyproject.toml": "[tool.black]\n"})
    comment = "# " + "the retry budget is shared by every worker of the pool, see the guide " * 2
    docstring = '    """' + "Return the invoice totals per account, grouped by the billing period. " * 2 + '"""'
    text = module_with(LONG_STRING.strip()) + comment + "\n\n\ndef totals():\n" + docstring + "\n    return {}\n"

    assert conv(model, LINE_LENGTH).params["content_limit"] == 0
    assert long_line_findings(model, "app/reports/audit.py", text) == []


def test_a_formatters_limit_holds_strings_to_the_length_the_files_keep() -> None:
    # The files keep 88 but for a 95-character message in a few: strings may run to 99, not past it.
    message = '    "' + "x" * 87 + '",'
    files = [
        facts_of(
            f.path,
            module_source(f.path.split("/")[1], f.path.split("/")[2][:-3], n)
            + ("\nM = (\n" + message + "\n)\n" if n % 20 == 0 else ""),
        )
        for n, f in enumerate(python_repo(long_lines=False)[:-1])
    ]
    model = learn(files, tool_configs={"pyproject.toml": "[tool.ruff]\n\n[tool.ruff.format]\n"})
    within = module_with('HINT = "' + "y" * 80 + '"')  # 89 characters
    beyond = module_with('HINT = "' + "y" * 100 + '"')  # 109 characters

    assert conv(model, LINE_LENGTH).params["content_limit"] == 99
    assert long_line_findings(model, "app/reports/audit.py", within) == []
    # No tool enforces the 99: the learned line-length habit has not earned the strict level on
    # real changes (earned.py), so the string is a loose finding, not a pull-request comment.
    assert long_line_findings(model, "app/reports/audit.py", beyond) == []
    loose = check(facts_of("app/reports/audit.py", beyond), beyond, model, prefs=CheckPrefs(level="loose"))
    [found] = [f for f in loose if f.rule == LINE_LENGTH]
    assert found.level == "loose"
    assert found.message.startswith("line is 109 characters, longer than the 99 the repository's files keep")
    # A repository that raises the rule in .codereview.yml gets it at the strict level again.
    raised = learn(
        files,
        tool_configs={"pyproject.toml": "[tool.ruff]\n\n[tool.ruff.format]\n"},
        config="thresholds:\n  formatting.line_length: {strict: {min_share: 0.95, min_count: 10}}\n",
    )
    assert [n for n, _ in long_line_findings(raised, "app/reports/audit.py", beyond)] == [found.start_line]


def test_a_linter_reports_long_strings_where_a_formatter_would_not() -> None:
    files = python_repo(long_lines=True)
    text = module_with(LONG_STRING.strip())
    black_and_flake8 = {
        "pyproject.toml": "[tool.black]\n",
        "setup.cfg": "[flake8]\nmax-line-length = 88\n",
    }
    ruff_e501 = {"pyproject.toml": '[tool.ruff.lint]\nselect = ["E501"]\n\n[tool.ruff.format]\n'}
    eslint = {
        ".eslintrc.json": '{"rules": {"max-len": ["error", {"code": 100, "ignoreStrings": true, '
        '"ignoreTemplateLiterals": true, "ignoreComments": true}]}}'
    }

    for configs in (black_and_flake8, ruff_e501):
        model = learn(files, tool_configs=configs)
        assert "content_limit" not in conv(model, LINE_LENGTH).params
        assert len(long_line_findings(model, "app/reports/audit.py", text)) == 1
    [setting] = [s for t in read(eslint).tools for s in t.settings if s.rule == LINE_LENGTH]
    assert (setting.choice, setting.code_only) == ("100", True)


def test_a_line_of_one_word_is_long_only_where_the_linter_reports_it() -> None:
    # packaging's test data under ruff's E501 (88): a wheel file name alone on its line, and a
    # pytest node id in noxfile.py; ruff spares a line with no space in it: nothing shortens it.
    files = python_repo(long_lines=False)
    wheel = '            "pyvirtualcam-0.13.0-cp310-cp310-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",'
    text = module_with("WHEELS = [\n" + wheel + "\n]") + "TOTAL = " + " + ".join(f"count_{n}" for n in range(12)) + "\n"
    code_line = text.count("\n")
    ruff = learn(files, tool_configs={"pyproject.toml": '[tool.ruff.lint]\nselect = ["E501"]\n'})
    assert [n for n, _ in long_line_findings(ruff, "app/reports/audit.py", text)] == [code_line]
    # pycodestyle (flake8) reports such a word outside a multi-line string or a comment.
    flake8 = learn(files, tool_configs={"setup.cfg": "[flake8]\nmax-line-length = 88\n"})
    assert [n for n, _ in long_line_findings(flake8, "app/reports/audit.py", text)] == [code_line - 2, code_line]


def test_a_declared_setting_the_code_keeps_agrees_with_the_learned_one() -> None:
    model = learn(python_repo(long_lines=False), tool_configs={"pyproject.toml": "[tool.black]\nline-length = 79\n"})

    length = conv(model, LINE_LENGTH)
    assert (length.choice, length.params["agreement"], length.params["learned"]) == ("79", "agrees", "79")
    assert length.description.startswith("declared in pyproject.toml: [tool.black] line-length = 79; the code agrees")
    assert conv(model, "formatting.quotes").params["agreement"] == "agrees"


def test_the_most_lenient_linter_limit_governs_and_editorconfig_only_counts_alone() -> None:
    files = python_repo(long_lines=False)
    configs = {
        "pyproject.toml": "[tool.black]\nline-length = 88\n",
        "setup.cfg": "[metadata]\nname = app\n\n[flake8]\nmax-line-length = 100\nextend-ignore = E203\n",
        ".editorconfig": "root = true\n\n[*]\nmax_line_length = 72\n",
    }
    both = learn(files, tool_configs=configs)
    editor_only = learn(files, tool_configs={".editorconfig": configs[".editorconfig"]})

    assert conv(both, LINE_LENGTH).choice == "100"
    assert "setup.cfg [flake8] max-line-length = 100" in conv(both, LINE_LENGTH).description
    assert long_line_findings(both, "app/reports/audit.py", module_with("X = " + "1 + " * 23 + "1")) == []
    assert conv(editor_only, LINE_LENGTH).choice == "72"


def test_flake8_ignoring_e501_and_ruff_without_e501_declare_no_line_length() -> None:
    files = python_repo(long_lines=False)
    flake8_off = learn(files, tool_configs={"tox.ini": "[tox]\nenvlist = py311\n\n[flake8]\nignore = E501,W503\n"})
    ruff_lint_only = learn(files, tool_configs={"pyproject.toml": '[tool.ruff.lint]\nselect = ["F", "B"]\n'})
    ruff_e = learn(files, tool_configs={"pyproject.toml": '[tool.ruff.lint]\nselect = ["E", "F", "I"]\n'})

    assert conv(flake8_off, LINE_LENGTH).source == "learned"
    assert conv(ruff_lint_only, LINE_LENGTH).source == "learned"
    assert conv(ruff_e, LINE_LENGTH).choice == "88"
    assert conv(ruff_e, "formatting.imports.order").source == "declared"


def test_ruffs_pycodestyle_limit_is_the_length_e501_reports() -> None:
    # pytest-xdist: ruff format at the default 88, E selected, and E501 reporting past 120 only
    # ("in order to be able to format for 88 char in ruff format"); a 100-character comment is fine.
    files = python_repo(long_lines=False)
    pyproject = (
        '[tool.ruff.format]\ndocstring-code-format = true\n\n[tool.ruff.lint]\nselect = ["E", "F", "W"]\n\n'
        "[tool.ruff.lint.pycodestyle]\nmax-line-length = 120\n"
    )
    model = learn(files, tool_configs={"pyproject.toml": pyproject})

    assert conv(model, LINE_LENGTH).choice == "120"
    assert "max-line-length = 120" in conv(model, LINE_LENGTH).description
    assert long_line_findings(model, "app/reports/audit.py", module_with("# " + "word " * 19 + "end")) == []
    assert len(long_line_findings(model, "app/reports/audit.py", module_with("# " + "word " * 25 + "end"))) == 1


def test_blacks_limit_spares_a_line_it_keeps_whole_for_its_type_ignore() -> None:
    # trio: [tool.black] at its default 88, ruff with E501 ignored; black leaves a call argument
    # ending in `# type: ignore[...]` on one line however long, and no linter reports it.
    files = python_repo(long_lines=False)
    pyproject = '[tool.black]\ntarget-version = ["py39"]\n\n[tool.ruff.lint]\nextend-ignore = ["E501"]\n'
    argument = '            creation_flags=subprocess.CREATE_NEW_PROCESS_GROUP if sys.platform == "win32" else 0,'
    call = "def spawn():\n    return run_process(\n        [sys.executable],\n" + argument + "{}\n    )"
    kept = module_with(call.format("  # type: ignore[attr-defined,unused-ignore]"))
    unformatted = module_with(call.format("  # platform flag only on windows, see the subprocess docs"))
    assert len(kept.splitlines()[-2]) > 120

    black = learn(files, tool_configs={"pyproject.toml": pyproject})
    assert conv(black, LINE_LENGTH).params["type_ignore_whole"] is True
    assert long_line_findings(black, "app/reports/audit.py", kept) == []
    assert len(long_line_findings(black, "app/reports/audit.py", unformatted)) == 1
    # flake8 reports every line past its limit, the formatter's whole lines too.
    linted = learn(files, tool_configs={"pyproject.toml": pyproject, "setup.cfg": "[flake8]\nmax-line-length = 88\n"})
    assert "type_ignore_whole" not in conv(linted, LINE_LENGTH).params
    assert len(long_line_findings(linted, "app/reports/audit.py", kept)) == 1
    # ruff format measures the line without its pragma and splits the code all the same.
    ruff_format = learn(files, tool_configs={"pyproject.toml": "[tool.ruff]\n\n[tool.ruff.format]\n"})
    assert len(long_line_findings(ruff_format, "app/reports/audit.py", kept)) == 1


def test_a_line_long_only_for_a_ty_ignore_pragma_is_not_long() -> None:
    # virtualenv: ruff at 120 with every rule (E501 too); a call that fits, followed by
    # `# ty: ignore[...]` (Astral's type checker): E501 measures the line without the pragma.
    files = python_repo(long_lines=False)
    pyproject = '[tool.ruff]\nline-length = 120\nlint.select = ["ALL"]\nlint.ignore = ["ANN", "D10"]\n'
    model = learn(files, tool_configs={"pyproject.toml": pyproject})
    code = "    site_packages = sysconfig.get_path('purelib', vars={'base': base, 'platbase': base}) or prefix"
    pragma = module_with("def locate(base, prefix):\n" + code + "  # ty: ignore[invalid-argument-type]\n")
    comment = module_with("def locate(base, prefix):\n" + code + "  # the platform base is the prefix too\n")
    assert max(len(line) for line in pragma.splitlines()) > 120

    assert long_line_findings(model, "app/reports/audit.py", pragma) == []
    assert len(long_line_findings(model, "app/reports/audit.py", comment)) == 1


def test_ruffs_own_file_declares_as_its_pyproject_table_would_and_wins_beside_it() -> None:
    # A project configuring ruff in ruff.toml (the table at the top level) declares the same as
    # [tool.ruff]; beside a pyproject.toml, ruff reads ruff.toml and ignores the pyproject's table.
    files = python_repo(long_lines=False)
    ruff_toml = 'line-length = 100\n\n[lint]\nselect = ["E", "F", "I"]\n\n[format]\nquote-style = "single"\n'
    stale = "[tool.ruff]\nline-length = 79\n"
    model = learn(files, tool_configs={"ruff.toml": ruff_toml, "pyproject.toml": stale})

    assert conv(model, LINE_LENGTH).choice == "100"
    assert "ruff.toml: line-length = 100" in conv(model, LINE_LENGTH).description
    assert conv(model, "formatting.quotes").choice == "single"
    assert long_line_findings(model, "app/reports/audit.py", module_with("# " + "word " * 18 + "end")) == []
    assert len(long_line_findings(model, "app/reports/audit.py", module_with("# " + "word " * 21 + "end"))) == 1


# pytest-mock after its move to ruff: pre-commit runs ruff and ruff format; the [flake8] section
# left in tox.ini is read by nothing.
STALE_FLAKE8_TOX = """\
[tox]
envlist = py{39,310,311}, norewrite

[testenv]
deps =
    coverage
commands =
    coverage run --append -m pytest tests

[flake8]
max-line-length = 88
"""
RUFF_HOOKS = """\
repos:
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.6.9
    hooks:
      - id: {lint}
        args: [--fix]
      - id: ruff-format
  - repo: https://github.com/pre-commit/mirrors-mypy
    rev: v1.11.2
    hooks:
      - id: mypy
"""
FLAKE8_HOOK_TOO = "  - repo: https://github.com/PyCQA/flake8\n    rev: 7.1.1\n    hooks:\n      - id: flake8\n"


def test_a_flake8_section_is_no_limit_where_ruffs_linter_runs_instead() -> None:
    def tools(configs: dict[str, str]) -> list[str]:
        return [t.tool for t in read(configs).tools]

    moved = read({"tox.ini": STALE_FLAKE8_TOX, ".pre-commit-config.yaml": RUFF_HOOKS.format(lint="ruff")})
    # What holds instead is ruff format's, at its defaults (the ruff-format hook, no ruff table).
    assert [t.tool for t in moved.tools] == ["ruff"]
    assert moved.notes == ["tox.ini: flake8 is not run (ruff's linter runs instead); not declared"]
    assert tools(
        {
            "setup.cfg": "[flake8]\nmax-line-length = 88\n",
            ".pre-commit-config.yaml": RUFF_HOOKS.format(lint="ruff-check"),
        }
    ) == ["ruff"]
    # flake8 still run beside ruff, by a hook or a tox environment, keeps its limit.
    assert tools(
        {"tox.ini": STALE_FLAKE8_TOX, ".pre-commit-config.yaml": RUFF_HOOKS.format(lint="ruff") + FLAKE8_HOOK_TOO}
    ) == ["flake8", "ruff"]
    tox_flake8 = STALE_FLAKE8_TOX + "\n[testenv:lint]\ncommands = {envpython} -m flake8 src tests\n"
    assert tools({"tox.ini": tox_flake8, ".pre-commit-config.yaml": RUFF_HOOKS.format(lint="ruff")}) == [
        "flake8",
        "ruff",
    ]
    # Before the move (black the only hook), nothing says flake8 was dropped: the section stands.
    assert tools({"tox.ini": STALE_FLAKE8_TOX, ".pre-commit-config.yaml": BLACK_HOOK_ONLY}) == ["flake8", "black"]

    files = python_repo(long_lines=False)
    model = learn(
        files, tool_configs={"tox.ini": STALE_FLAKE8_TOX, ".pre-commit-config.yaml": RUFF_HOOKS.format(lint="ruff")}
    )
    length = conv(model, LINE_LENGTH)
    assert (length.choice, length.params["declared_in"]) == ("88", ".pre-commit-config.yaml")
    assert length.description.startswith(
        "declared in .pre-commit-config.yaml: (default line-length 88, hook ruff-format)"
    )


BLACK_HOOK_ONLY = "repos:\n  - repo: https://github.com/psf/black\n    rev: 22.3.0\n    hooks:\n      - id: black\n"


def test_a_flake8_table_ignoring_e501_in_a_toml_array_declares_no_length() -> None:
    # pytest-xdist: [tool.flake8] ignores E501 ("let black worry about them") in a TOML array,
    # beside tox.ini's [flake8] at 120; a 105-character help string passes both.
    pyproject = (
        '[tool.black]\n\n[tool.flake8]\n# formatting is black\'s job\nignore = ["E501", "W503", "E203"]\n'
        "max-line-length = 100\n"
    )
    tox = "[tox]\nenvlist = py39\n\n[flake8]\nmax-line-length = 120\nignore = E203,W503\n"
    configs = read({"pyproject.toml": pyproject})
    assert [(t.tool, [s.rule for s in t.settings if s.rule == LINE_LENGTH]) for t in configs.tools] == [
        ("black", [LINE_LENGTH])
    ]

    model = learn(python_repo(long_lines=False), tool_configs={"pyproject.toml": pyproject, "tox.ini": tox})
    assert (conv(model, LINE_LENGTH).choice, conv(model, LINE_LENGTH).params["declared_in"]) == ("120", "tox.ini")
    help_text = (
        '    help="With auto, count the physical cores; when they cannot be told apart, count the logical ones",'
    )
    assert long_line_findings(model, "app/reports/audit.py", module_with("OPTION = dict(\n" + help_text + "\n)")) == []


def test_per_file_ignores_exempt_their_files() -> None:
    files = python_repo(long_lines=False)
    files += [facts_of(f"tests/test_{noun}.py", module_source("tests", noun, 1)) for noun in NOUNS]
    pyproject = '[tool.ruff]\nline-length = 79\n\n[tool.ruff.lint.per-file-ignores]\n"tests/*" = ["E501"]\n'
    model = learn(files, tool_configs={"pyproject.toml": pyproject})
    text = module_with("X = " + "1 + " * 20 + "1")

    assert len(long_line_findings(model, "app/reports/audit.py", text)) == 1
    assert [c.scope.value for c in model.conventions if c.rule == LINE_LENGTH and c.source == "declared"] == ["python"]
    assert conv(model, LINE_LENGTH).count == 45  # the tests are not counted as declared


def test_a_ci_workflow_is_not_judged_by_a_line_length_declared_for_code() -> None:
    configs = {
        "pyproject.toml": "[tool.black]\nline-length = 79\n",
        ".editorconfig": "root = true\n\n[*]\nmax_line_length = 79\nindent_style = space\n\n[*.yml]\nindent_size = 2\n",
        ".codereview.yml": "",
    }
    model = learn(
        python_repo(long_lines=False),
        tool_configs=configs,
        config="version: 1\nconventions:\n  formatting.line_length: '79'\n",
    )

    found = check(facts_of(".github/workflows/ci.yml", WORKFLOW), WORKFLOW, model)
    assert [f.rule for f in found if f.rule == LINE_LENGTH] == []
    assert conv(model, "formatting.indent.width", "yaml").choice == "2"


def test_codereview_yml_wins_over_a_declared_setting() -> None:
    model = learn(
        python_repo(long_lines=False),
        tool_configs={"pyproject.toml": "[tool.black]\n"},
        config="version: 1\nconventions:\n  formatting.line_length: '120'\n",
    )

    assert (conv(model, LINE_LENGTH).choice, conv(model, LINE_LENGTH).source) == ("120", "config")


def test_a_nested_project_declares_its_own_directory() -> None:
    files = python_repo(long_lines=False)
    files += [facts_of(f"tools/lint/{noun}.py", module_source("lint", noun, 3)) for noun in NOUNS]
    model = learn(
        files,
        tool_configs={
            "pyproject.toml": "[tool.black]\nline-length = 79\n",
            "tools/lint/pyproject.toml": "[tool.black]\nline-length = 120\n",
        },
    )
    text = module_with("X = " + "1 + " * 23 + "1")  # 96 characters

    scopes = {(c.scope.kind, c.scope.value, c.choice) for c in model.conventions if c.rule == LINE_LENGTH}
    assert {("directory", "tools", "120"), ("language", "python", "79")} <= scopes
    assert long_line_findings(model, "tools/lint/new.py", text) == []
    assert len(long_line_findings(model, "app/reports/new.py", text)) == 1


# --- each tool's file, parsed by its own format ---------------------------------------------


def settings(texts: Mapping[str, str]) -> dict[tuple[str, str], str]:
    configs = read(texts)
    return {(t.tool, s.rule.removeprefix("formatting.")): s.choice for t in configs.tools for s in t.settings}


def test_prettier_in_yaml_json_and_package_json_with_defaults() -> None:
    yaml_rc = settings({".prettierrc.yaml": "printWidth: 100\nsingleQuote: true\ntrailingComma: all\n"})
    json_rc = settings({".prettierrc": '{"useTabs": true, "semi": false}'})
    package = settings({"package.json": '{"name": "web", "prettier": {"tabWidth": 4}}'})

    assert (yaml_rc[("prettier", "line_length")], yaml_rc[("prettier", "quotes")]) == ("100", "single")
    assert yaml_rc[("prettier", "indent.width")] == "2"  # Prettier's default
    assert (json_rc[("prettier", "indent.unit")], json_rc[("prettier", "line_length")]) == ("tab", "80")
    assert ("prettier", "indent.width") not in json_rc
    assert (package[("prettier", "indent.width")], package[("prettier", "quotes")]) == ("4", "double")


def test_biome_json_and_jsonc_with_its_own_defaults() -> None:
    # A Biome project: comments and trailing commas in biome.jsonc,
    # the javascript section overriding the general formatter; Biome indents with tabs by default.
    jsonc = settings(
        {
            "biome.jsonc": (
                '{\n  // formatter settings\n  "$schema": "https://biomejs.dev/schemas/1.9.4/schema.json",\n'
                '  "formatter": { "indentStyle": "space", "lineWidth": 120, },\n'
                '  /* quotes */ "javascript": { "formatter": { "quoteStyle": "single" } },\n}\n'
            )
        }
    )
    default = settings({"biome.json": '{"linter": {"enabled": true}}'})
    off = read({"biome.json": '{"formatter": {"enabled": false}}'})

    assert (jsonc[("biome", "line_length")], jsonc[("biome", "indent.unit")]) == ("120", "space")
    assert (jsonc[("biome", "indent.width")], jsonc[("biome", "quotes")]) == ("2", "single")
    assert (default[("biome", "indent.unit")], default[("biome", "line_length")]) == ("tab", "80")
    assert default[("biome", "quotes")] == "double"
    assert off.tools == []
    assert off.notes == []


def test_eslint_rules_in_json_and_yaml() -> None:
    found = settings(
        {
            ".eslintrc.json": '{"rules": {"max-len": ["error", {"code": 120, "ignoreUrls": true}],'
            ' "indent": ["error", 2], "quotes": ["warn", "single"], "eol-last": "off"}}',
            "web/.eslintrc.yml": "rules:\n  '@stylistic/indent': [error, tab]\n  linebreak-style: [error, unix]\n",
        }
    )

    assert found[("eslint", "line_length")] == "120"
    assert found[("eslint", "quotes")] == "single"
    assert ("eslint", "final_newline") not in found
    assert found[("eslint", "line_endings")] == "lf"


def test_rustfmt_and_clang_format() -> None:
    rust = settings({"rustfmt.toml": 'edition = "2021"\nmax_width = 120\n'})
    clang = settings(
        {".clang-format": "---\nBasedOnStyle: Google\nIndentWidth: 4\n---\nLanguage: Java\nColumnLimit: 100\n"}
    )

    assert (rust[("rustfmt", "line_length")], rust[("rustfmt", "indent.width")]) == ("120", "4")
    assert (clang[("clang-format", "line_length")], clang[("clang-format", "indent.width")]) == ("80", "4")
    assert clang[("clang-format:java", "line_length")] == "100"


def test_unreadable_files_are_noted_not_fatal() -> None:
    configs = read({"pyproject.toml": "[tool.black\nline-length = 88\n", ".prettierrc": '"@acme/prettier-config"\n'})

    assert configs.tools == []
    assert [n.split(":")[0] for n in configs.notes] == [".prettierrc", "pyproject.toml"]


def test_every_file_read_is_one_the_indexer_serves() -> None:
    assert {"pyproject.toml", ".editorconfig", *INI_FILES, *MYPY_FILES, *PRETTIER_FILES, *ESLINT_FILES} <= CONFIG_NAMES


RUFF_ISORT = '[tool.ruff]\nextend-exclude = ["tests/fixtures/*"]\n\n[tool.ruff.lint]\nselect = ["E", "I"]\n'
TYPED_IMPORTS = """\
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import httpx

from .models import Invoice

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .ledger import Ledger

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def totals(ledger: Ledger) -> Iterator[Invoice]:
    return iter(ledger.invoices(httpx, tomllib))
"""


def import_findings(model: ConventionModel, path: str, text: str) -> list[tuple[int, str]]:
    return [(f.start_line, f.message) for f in check(facts_of(path, text), text, model) if f.rule.endswith("order")]


def test_imports_under_type_checking_or_a_version_test_are_a_block_of_their_own() -> None:
    model = learn(python_repo(long_lines=False), tool_configs={"pyproject.toml": RUFF_ISORT})
    interleaved = TYPED_IMPORTS.replace("import httpx\n\nfrom .models", "from .models").replace(
        "import Invoice\n", "import Invoice\nimport httpx\n"
    )

    assert conv(model, "formatting.imports.order").source == "declared"
    assert import_findings(model, "app/reports/totals.py", TYPED_IMPORTS) == []
    [(line, message)] = import_findings(model, "app/reports/totals.py", interleaved)
    assert (line, message.split(",")[0]) == (7, "third-party import `httpx` comes after local imports")


def test_files_the_tool_excludes_are_not_held_to_its_settings() -> None:
    model = learn(python_repo(long_lines=False), tool_configs={"pyproject.toml": RUFF_ISORT})
    fixture = "from .models import Invoice\nimport sys\n\nX = [" + ", ".join(["Invoice"] * 20) + ", sys]\n"

    assert import_findings(model, "tests/fixtures/traceback.py", fixture) == []
    assert long_line_findings(model, "tests/fixtures/traceback.py", fixture) == []
    assert len(import_findings(model, "app/reports/traceback.py", fixture)) == 1
    assert len(long_line_findings(model, "app/reports/traceback.py", fixture)) == 1


# virtualenv's shape: a src layout (src/<package>/), tests at the root importing the package. ruff's
# isort places the package first-party (a source root), with the tests' own helpers, so a test's
# `from tests.types import ...` then `from <package>.create import ...` is in order.
SRC_LAYOUT_CONFTEST = """\
from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from shipyard.billing.invoice import Invoice

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_mock import MockerFixture

    from tests.types import MakeLedger
    from shipyard.billing.ledger import Ledger


@pytest.fixture
def ledger(tmp_path: Path, make_ledger: MakeLedger, mocker: MockerFixture) -> Ledger:
    return make_ledger(tmp_path, Invoice)
"""


def test_the_repositorys_own_src_layout_package_is_first_party_in_its_tests() -> None:
    files = [
        facts_of(f"src/shipyard/{package}/{noun}.py", module_source(package, noun, p * 20 + n))
        for p, package in enumerate(PACKAGES)
        for n, noun in enumerate(NOUNS)
    ]
    files.append(facts_of("tests/types.py", "from __future__ import annotations\n\nMakeLedger = object\n"))
    model = learn(files, tool_configs={"pyproject.toml": RUFF_ISORT})
    conftest = "tests/unit/billing/conftest.py"
    ledger = "    from shipyard.billing.ledger"
    after_local = SRC_LAYOUT_CONFTEST.replace(ledger, "    import httpx\n" + ledger)

    assert conv(model, "formatting.imports.order").source == "declared"
    assert import_findings(model, conftest, SRC_LAYOUT_CONFTEST) == []
    [(line, message)] = import_findings(model, conftest, after_local)
    assert (line, message.split(",")[0]) == (15, "third-party import `httpx` comes after local imports")


def test_a_package_at_the_root_is_left_to_the_resolution_of_its_imports() -> None:
    # cbor2: its package sits at the root and its isort reads `src_paths = ["src"]`, so isort files
    # `cbor2` with the third-party imports; a test's `from cbor2 import ...` then `import pytest` is
    # in order (isort wrote it).
    files = [
        facts_of(f"shipyard/{package}/{noun}.py", module_source(package, noun, p * 20 + n))
        for p, package in enumerate(PACKAGES)
        for n, noun in enumerate(NOUNS)
    ]
    isort = '[tool.isort]\nprofile = "black"\nsrc_paths = ["src"]\n'
    model = learn(files, tool_configs={"pyproject.toml": isort})
    conftest = (
        "from shipyard.billing.ledger import Ledger\nimport pytest\n\n\n"
        "@pytest.fixture\ndef ledger() -> Ledger:\n    return Ledger()\n"
    )

    assert import_findings(model, "tests/conftest.py", conftest) == []
    # Without `src_paths`, the sorters' own default roots (the root and `src/`) hold: kombu's and
    # cleo's root packages and test directories are first party, as isort and ruff file them.
    for config in ('[tool.isort]\nprofile = "black"\n', RUFF_ISORT):
        model = learn(files, tool_configs={"pyproject.toml": config})
        [(line, message)] = import_findings(model, "tests/conftest.py", conftest)
        assert (line, message.split(",")[0]) == (2, "third-party import `pytest` comes after local imports")
        in_order = "import pytest\n\nfrom shipyard.billing.ledger import Ledger\n"
        assert import_findings(model, "tests/conftest.py", in_order) == []


# --- how the tools are run, not only how they are configured ------------------------------------

# babel's pyproject.toml: ruff is its linter (E501 ignored), and its format table only preserves.
BABEL_RUFF = """\
[tool.ruff]
target-version = "py38"
line-length = 95

[tool.ruff.format]
quote-style = "preserve"

[tool.ruff.lint]
select = ["B", "C", "E", "F", "I", "UP"]
ignore = ["C901", "E501", "E731", "E741"]
"""


def test_a_format_table_that_only_preserves_and_a_length_e501_ignores_declare_nothing() -> None:
    babel = settings({"pyproject.toml": BABEL_RUFF})
    formatted = settings({"pyproject.toml": BABEL_RUFF.replace('"preserve"', '"single"')})
    linted = settings({"pyproject.toml": BABEL_RUFF.replace('"E501", ', "")})

    assert ("ruff", "line_length") not in babel
    assert ("ruff", "quotes") not in babel
    assert ("ruff", "indent.width") not in babel
    assert babel[("ruff", "imports.order")] == "ordered"  # its lint rules still hold
    assert (formatted[("ruff", "line_length")], formatted[("ruff", "quotes")]) == ("95", "single")
    assert linted[("ruff", "line_length")] == "95"


DATEUTIL_BLACK = '[tool.black]\nline-length = 80\ntarget-version = ["py37"]\n'
DARKER_HOOK = """\
repos:
  - repo: https://github.com/akaihola/darker
    rev: 1.7.2
    hooks:
    -   id: darker
  - repo: https://github.com/pre-commit/pre-commit-hooks
    rev: v4.5.0
    hooks:
      - id: trailing-whitespace
"""
BLACK_HOOK = "  - repo: https://github.com/psf/black\n    rev: 24.1.0\n    hooks:\n      - id: black\n"


def test_black_run_through_darker_declares_nothing_for_the_code() -> None:
    darker = read({"pyproject.toml": DATEUTIL_BLACK, ".pre-commit-config.yaml": DARKER_HOOK})
    darker_table = read({"pyproject.toml": DATEUTIL_BLACK + "\n[tool.darker]\nrevision = 'master'\n"})
    both = read({"pyproject.toml": DATEUTIL_BLACK, ".pre-commit-config.yaml": DARKER_HOOK + BLACK_HOOK})

    assert [t.tool for t in darker.tools] == []
    assert darker.notes == ["pyproject.toml: black runs through darker (changed lines only); not declared"]
    assert [t.tool for t in darker_table.tools] == []
    assert [t.tool for t in both.tools] == ["black"]


# Python-Markdown's tox.ini: flake8 runs on the package and its tests, not on scripts/.
MARKDOWN_TOX = """\
[tox]
envlist = py{38, 39, 310}, flake8

[testenv]
commands =
    coverage run --source=markdown -m unittest discover {toxinidir}/tests

[testenv:flake8]
deps = flake8
commands = flake8 {toxinidir}/app {toxinidir}/tests
skip_install = true

[flake8]
max-line-length = 119
"""


def test_a_linter_holds_only_the_paths_its_invocations_name() -> None:
    files = python_repo(long_lines=False)
    files.append(facts_of("scripts/griffe_extensions.py", module_source("scripts", "hook", 3)))
    model = learn(files, tool_configs={"tox.ini": MARKDOWN_TOX})
    everywhere = learn(files, tool_configs={"tox.ini": MARKDOWN_TOX.replace(" {toxinidir}/app {toxinidir}/tests", "")})
    signature = "    def on_function_instance(self, node: ast.AST | ObjectNode, func: Function, agent: Visitor, " + (
        "loader: ModulesCollection, **kwargs: Any) -> None: ..."
    )
    text = module_with("class Hooks:\n" + signature)

    assert conv(model, LINE_LENGTH).choice == "119"
    assert long_line_findings(model, "scripts/griffe_extensions.py", text) == []
    assert len(long_line_findings(model, "app/reports/hooks.py", text)) == 1
    assert len(long_line_findings(everywhere, "scripts/griffe_extensions.py", text)) == 1
    hooked = read({".flake8": "[flake8]\nmax-line-length = 100\n", ".pre-commit-config.yaml": FLAKE8_HOOK})
    assert [t.scope for t in hooked.tools] == [("^(src|tests)/",)]


FLAKE8_HOOK = (
    "repos:\n  - repo: https://github.com/PyCQA/flake8\n    hooks:\n      - id: flake8\n        files: ^(src|tests)/\n"
)


def js_module(i: int, quote: str) -> str:
    q = quote
    return (
        f"{q}use strict{q};\n\nconst path = require({q}node:path{q});\n\n"
        f"module.exports = function load{i}(name) {{\n  return path.join({q}lib{q}, name, {q}index.js{q});\n}};\n"
    )


def test_files_prettier_ignores_are_not_judged_by_its_rules() -> None:
    # mocha: Prettier (at its defaults) formats the code in double quotes; its .prettierignore
    # keeps test/*/fixtures/** out, and those fixtures still hold their old single quotes.
    files = [facts_of(f"lib/cli/part{i}.js", js_module(i, '"')) for i in range(40)]
    files += [facts_of(f"test/integration/fixtures/case{i}.fixture.js", js_module(i, "'")) for i in range(40)]
    ignore = "/.karma/\n/coverage\n# generated\n/test/*/fixtures/**\n"
    new_fixture = js_module(99, '"')
    path = "test/integration/fixtures/plugins/global-setup-throws.fixture.js"

    def quotes(model: ConventionModel, where: str, text: str) -> list[int]:
        return [f.start_line for f in check(facts_of(where, text), text, model) if f.rule == "formatting.quotes"]

    without = learn(files, tool_configs={".prettierrc": "{}"}, thresholds=HELD_RAISED)
    ignored = learn(files, tool_configs={".prettierrc": "{}", ".prettierignore": ignore}, thresholds=HELD_RAISED)
    old_style = js_module(98, "'")

    assert quotes(without, path, new_fixture) == []
    assert quotes(without, path, old_style) == [1, 3, 6]
    assert quotes(ignored, path, old_style) == []
    assert quotes(ignored, "lib/cli/lookup.js", old_style) == [1, 3, 6]
    # commander.js ignores everything, then re-includes its sources: nothing read as exempt.
    opt_in = learn(
        files, tool_configs={".prettierrc": "{}", ".prettierignore": "**.*\n!**.js\n!**.ts\n"}, thresholds=HELD_RAISED
    )
    assert quotes(opt_in, path, old_style) == [1, 3, 6]


# --- files the project's own linters leave alone --------------------------------------------------

# mkdocs 9cc8f24: a release of an upstream JS library copied verbatim beside the project's own code
# (a UMD wrapper, camelCase parameters, no final newline, a require of an optional node-only
# package); the project's .jshintignore (and its codespell skip) keeps those files out of linting.
LUNR_LIKE = """\
/*!
 * Search languages, `{name}` language
 * https://example.org/search-languages
 */
;
(function(root, factory) {{
  if (typeof define === 'function' && define.amd) {{
    define(factory)
  }} else if (typeof exports === 'object') {{
    module.exports = factory(require('@example/segmenter'))
  }} else {{
    factory()(root.lunr);
  }}
}}(this, function(segmenter) {{
  return function(lunr, segmenterDictJson) {{
    lunr.{code} = function() {{
      this.pipeline.reset();
    }};
  }};
}}))"""
JSHINTIGNORE = "site/themes/**/js/jquery-**.min.js\nsite/contrib/search/languages/lunr.**.js\n"
SEARCH_DIR = "site/contrib/search/languages"


def _docs_site_repo() -> list[FileFacts]:
    files = [
        facts_of(f"site/{package}/{noun}.py", module_source(package, noun, p * 20 + n))
        for p, package in enumerate(PACKAGES)
        for n, noun in enumerate(NOUNS)
    ]
    theme = "function show{i}(search_box) {{\n  search_box.focus();\n}}\n\nmodule.exports = show{i};\n"
    files += [facts_of(f"site/themes/plain/js/part{i}.js", theme.format(i=i)) for i in range(20)]
    languages = ["de", "fr", "it", "ja", "nl", "pt", "ru", "sv", "th", "tr"]
    files += [facts_of(f"{SEARCH_DIR}/lunr.{c}.js", LUNR_LIKE.format(name=c, code=c)) for c in languages]
    return files


def test_a_file_the_projects_linters_exclude_is_neither_reviewed_nor_learned_from() -> None:
    files = _docs_site_repo()
    editorconfig = "root = true\n\n[*]\ninsert_final_newline = true\n"
    plain = learn(files, tool_configs={".editorconfig": editorconfig}, thresholds=HELD_RAISED)
    excluding = learn(
        files, tool_configs={".editorconfig": editorconfig, ".jshintignore": JSHINTIGNORE}, thresholds=HELD_RAISED
    )
    copied = LUNR_LIKE.format(name="Chinese", code="zh")
    own = "function hide(search_box) {\n  search_box.blur();\n}\n\nmodule.exports = hide;"

    def rules(model: ConventionModel, path: str, text: str) -> set[str]:
        return {f.rule for f in check(facts_of(path, text), text, model)}

    assert "formatting.final_newline" in rules(plain, f"{SEARCH_DIR}/lunr.zh.js", copied)
    assert rules(excluding, f"{SEARCH_DIR}/lunr.zh.js", copied) == set()
    assert excluding.excluded == ("site/contrib/search/languages/lunr.**.js", "site/themes/**/js/jquery-**.min.js")
    assert excluding.files == plain.files - 10  # the copied release teaches nothing
    # The project's own scripts beside it are still held to the declared setting.
    assert "formatting.final_newline" in rules(excluding, "site/themes/plain/js/hide.js", own)
    assert "formatting.final_newline" in rules(excluding, f"{SEARCH_DIR}/loader.js", copied)


def test_what_the_project_says_is_not_its_own_is_read_from_each_tool() -> None:
    configs = read(
        {
            "pyproject.toml": (
                '[tool.ruff]\nextend-exclude = ["src/pkg/licenses/_spdx.py"]\n'  # its own, not linted
                '[tool.isort]\nskip_glob = ["examples/*"]\n'
                '[tool.codespell]\nskip = "*.po,./tests/data"\n'
                '[tool.mypy]\nexclude = ["tests/typing/"]\n'  # a type checker: not a linter of style
                '[tool.setuptools.packages.find]\nexclude = ["tests"]\n'  # packaging, not linting
            ),
            "setup.cfg": "[flake8]\nmax-line-length = 100\nexclude = .git,docs/conf.py\n",
            ".pylintrc": "[MAIN]\nignore = migrations\n",
            "web/.eslintignore": "dist/\n/vendor/*.js\n",
            ".eslintrc.json": '{"ignorePatterns": ["coverage/**"], "rules": {}}',
            "package.json": '{"name": "web", "eslintIgnore": ["legacy/*.js"]}',
            ".codespellrc": "[codespell]\nskip = *.svg\n",
            ".prettierignore": "CHANGELOG.md\n",  # a formatter's: exempts its rules only
        }
    )

    # Entries naming files; a directory listed (`tests/data`, `dist/`, `coverage/**`) is the
    # project's own place and keeps its habits.
    assert configs.excluded == {
        "*.po": "pyproject.toml [tool.codespell] skip",
        "web/vendor/*.js": "web/.eslintignore",
        "legacy/*.js": 'package.json "eslintIgnore"',
        "*.svg": ".codespellrc [codespell] skip",
    }


def test_a_python_linters_exclusion_of_examples_leaves_them_their_learned_habits() -> None:
    # Issue #24: ruff told to leave `examples/` alone does not make the examples someone else's
    # code: ruff's own settings do not reach them, the habits learned there still do.
    files = python_repo(long_lines=False)
    pyproject = '[tool.ruff]\nline-length = 88\nextend-exclude = ["examples/"]\n\n[tool.ruff.lint]\nselect = ["E"]\n'
    model = learn(files, tool_configs={"pyproject.toml": pyproject})
    demo = module_with("def buildReport(rows):\n    return rows")

    assert model.excluded == ()
    loose = CheckPrefs(level="loose")  # naming.case.function is held loose (earned.py)
    assert "naming.case.function" in {
        f.rule for f in check(facts_of("examples/demo.py", demo), demo, model, prefs=loose)
    }


def test_a_directory_a_javascript_linter_ignores_keeps_its_conventions() -> None:
    # yargs: its .eslintignore lists `example/` and `helpers/`, its own examples; they are not
    # someone else's code, so the conventions of the repository still hold there.
    editorconfig = "root = true\n\n[*]\ninsert_final_newline = true\n"
    ignore = "example/\nhelpers/\ntest/fixtures/**/**\n"
    model = learn(_docs_site_repo(), tool_configs={".editorconfig": editorconfig, ".eslintignore": ignore})
    demo = "function hide(search_box) {\n  search_box.blur();\n}\n\nmodule.exports = hide;"

    assert model.excluded == ()
    assert "formatting.final_newline" in {f.rule for f in check(facts_of("example/hide.js", demo), demo, model)}


def test_a_linter_pointed_away_from_the_code_does_not_disown_it() -> None:
    # A spell check run over the docs only (codespell skip = *.py): the code is still the project's.
    # A glob naming a place is kept however much it holds.
    files = python_repo(long_lines=False)
    configs = {
        "pyproject.toml": '[tool.codespell]\nskip = "*.py,*.lock,app/accounts/*.py,app/billing/*.py"\n',
        "setup.cfg": "[flake8]\nexclude = app/reports/*\n",  # a linter's exclusion disowns nothing
    }
    model = learn(files, tool_configs=configs)

    assert model.excluded == ("*.lock", "app/accounts/*.py", "app/billing/*.py")
    assert model.files == len([f for f in files if not f.skipped]) - 30


def test_a_change_that_excludes_the_copy_it_adds_is_not_reviewed_on_it() -> None:
    model = ConventionModel(conventions=[], excluded=("site/themes/**/js/jquery-**.min.js",))
    before = JSHINTIGNORE.split("\n")[0] + "\n"
    edit = Target(".jshintignore", "modified", JSHINTIGNORE.encode(), {2}, base=before.encode())
    copy = Target(f"{SEARCH_DIR}/lunr.zh.js", "added", LUNR_LIKE.format(name="Chinese", code="zh").encode())
    dropped = Target(".jshintignore", "modified", b"", set(), base=JSHINTIGNORE.encode())

    assert with_change_exclusions(model, [copy]) is model
    assert with_change_exclusions(model, [edit, copy]).ignores(copy.path)
    assert with_change_exclusions(model, [dropped]).excluded == ()


# --- annotations and docstrings a type checker or linter declares ---------------------------------


def typed_module(i: int) -> str:
    return (
        f'"""Records of kind {i}."""\n\nfrom __future__ import annotations\n\n\n'
        f"def parse_record_{i}(text: str) -> str:\n"
        '    """Parse one record."""\n'
        "    return text.strip()\n\n\n"
        f"class Store{i}:\n"
        '    """Records in memory."""\n\n'
        "    def count(self, items: list[str]) -> int:\n"
        '        """Count the items."""\n'
        "        return len(items)\n"
    )


# Old code the change touches: written before the tool was configured (or under a noqa).
OLD_HELPERS = '''\
"""Old helpers."""

from __future__ import annotations


def legacy_total(items):
    total = 0
    for item in items:
        total += item
    return total
'''
NEW_HELPER = "\n\ndef brand_new(values):\n    return sorted(values)\n"


def typed_repo(root: str, extra: Mapping[str, str] | None = None) -> list[FileFacts]:
    files = {f"{root}/kind{i}.py": typed_module(i) for i in range(30)}
    files[f"{root}/helpers.py"] = OLD_HELPERS
    files["tests/test_kinds.py"] = "def test_parse():\n    assert True\n"
    files.update(extra or {})
    return [facts_of(p, t) for p, t in files.items()]


def change_findings(model: ConventionModel, path: str, base: str | None, head: str) -> tuple[list[str], list[str]]:
    """(new, preexisting) typing and docstring findings of a change to ``path`` (added when
    ``base`` is None), as ``rule:symbol`` at the strict level."""
    if base is None:
        target = Target(path, "added", head.encode(), None)
    else:
        matcher = difflib.SequenceMatcher(a=base.split("\n"), b=head.split("\n"), autojunk=False)
        added = {n + 1 for tag, _, _, b1, b2 in matcher.get_opcodes() if tag != "equal" for n in range(b1, b2)}
        target = Target(path, "modified", head.encode(), added, base=base.encode())
    out = review(
        LoadedRepo("r", "r", "", "", 0), model, [target], effective({}), max_bytes=1_000_000, change_level=False
    )
    wanted = ("typing.", "documentation.docstring.")
    return (
        sorted(f"{f.rule}:{f.symbol}" for f in out.findings if f.rule.startswith(wanted)),
        sorted(f"{f.rule}:{f.symbol}" for f in out.preexisting if f.rule.startswith(wanted)),
    )


# How each of these projects runs its checkers: a CI workflow step (structlog, attrs), a
# pre-commit hook (anyio, packaging). A configuration nothing runs declares nothing.
LINT_WORKFLOW = """\
name: lint
on: [push]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: python -m mypy
      - run: ruff check --output-format=github .
      - run: pydocstyle src
"""
RUN = {".github/workflows/lint.yml": LINT_WORKFLOW}


# anyio's and structlog's shape: strict mypy on the package and its tests, the tests let off.
MYPY_STRICT = """\
[tool.mypy]
python_version = "3.11"
strict = true
disallow_any_generics = false
files = ["src", "tests"]

[[tool.mypy.overrides]]
module = "tests.*"
disallow_untyped_defs = false
"""


def test_mypy_strict_declares_annotations_strict_for_what_a_change_adds() -> None:
    stub = {"src/acme/fast.pyi": "def brand_new(values: list[int]) -> list[int]: ...\n"}
    model = learn(typed_repo("src/acme", stub), tool_configs={"pyproject.toml": MYPY_STRICT, **RUN})

    typed = conv(model, "typing.annotations.function")
    assert (typed.choice, typed.level, typed.source, typed.family) == ("annotated", "strict", "declared", "typing")
    assert typed.description.startswith("declared in pyproject.toml: [tool.mypy] strict = true")
    assert conv(model, "typing.annotations.method").level == "strict"
    # A new unannotated function is reported; the old one the change edits is not blamed.
    head = OLD_HELPERS.replace("(items):\n    total = 0", "(items, start=0):\n    total = start") + NEW_HELPER
    new, old = change_findings(model, "src/acme/helpers.py", OLD_HELPERS, head)
    assert "typing.annotations.function:brand_new" in new
    assert "typing.annotations.function:legacy_total" not in new
    assert "typing.annotations.function:legacy_total" in old
    # mypy is run on src and tests only: a script directory it never sees is not held to it.
    assert change_findings(model, "tools/release.py", None, '"""Release."""\n' + NEW_HELPER)[0] == []
    # A stub types its module, and `# mypy: ignore-errors` lets a module off.
    off = "# mypy: ignore-errors\n" + NEW_HELPER
    assert change_findings(model, "src/acme/compat.py", None, off)[0] == []
    assert change_findings(model, "src/acme/fast.py", None, '"""Fast."""\n' + NEW_HELPER)[0] == []


def test_mypy_ini_sections_let_modules_off() -> None:
    # more-itertools' and arrow's shape: setup.cfg's [mypy], a vendored package left unchecked.
    setup_cfg = (
        "[metadata]\nname = acme\n\n[mypy]\ndisallow_untyped_defs = True\nignore_missing_imports = True\n\n"
        "[mypy-acme.vendor.*]\nignore_errors = True\n"
    )
    model = learn(typed_repo("acme"), tool_configs={"setup.cfg": setup_cfg, **RUN})

    assert conv(model, "typing.annotations.function").description.startswith(
        "declared in setup.cfg: setup.cfg [mypy] disallow_untyped_defs = True"
    )
    assert change_findings(model, "acme/vendor/six.py", None, '"""Vendored."""\n' + NEW_HELPER)[0] == []
    # mypy does not ask for docstrings: that rule stays held at the loose level (earned.py).
    assert change_findings(model, "acme/extra.py", None, '"""Extra."""\n' + NEW_HELPER)[0] == [
        "typing.annotations.function:brand_new"
    ]


def test_a_verbose_mypy_exclude_spanning_lines_scopes_the_rule() -> None:
    # coverage.py's shape: a multi-line `(?x)` exclude with a comment. A scope is kept one regex
    # a line, so the pattern's own lines must not split it (it broke the review of every file).
    pyproject = (
        '[tool.mypy]\ndisallow_untyped_defs = true\nexclude = """(?x)(\n'
        "    ^tests/.*_plugin\\\\.py$           # not part of our test suite.\n"
        '    )"""\n'
    )
    model = learn(typed_repo("acme"), tool_configs={"pyproject.toml": pyproject, **RUN})

    assert "\n" not in str(conv(model, "typing.annotations.function").params["scope"])
    assert change_findings(model, "tests/cov_plugin.py", None, '"""Plugin."""\n' + NEW_HELPER)[0] == []
    assert change_findings(model, "acme/extra.py", None, '"""Extra."""\n' + NEW_HELPER)[0] == [
        "typing.annotations.function:brand_new"
    ]


def test_mypy_without_untyped_defs_declares_nothing_and_the_learned_rule_stays_held() -> None:
    for configs in (
        {},
        {"pyproject.toml": "[tool.mypy]\ndisallow_incomplete_defs = true\n"},
        {"pyproject.toml": "[tool.mypy]\nstrict = true\ndisallow_untyped_defs = false\n"},
        {"mypy.ini": "[mypy]\nwarn_unused_ignores = True\n", "pyproject.toml": MYPY_STRICT},
    ):
        model = learn(typed_repo("src/acme"), tool_configs=configs)
        typed = conv(model, "typing.annotations.function")
        assert (typed.source, typed.level) == ("learned", "loose"), configs
        assert change_findings(model, "src/acme/extra.py", None, '"""Extra."""\n' + NEW_HELPER)[0] == []


def test_mypys_inverse_allow_untyped_defs_turns_strict_off() -> None:
    # pyjwt: `strict = true`, loosened below it with `allow_untyped_defs = true` (a TODO).
    loosened = MYPY_STRICT.replace("strict = true\n", "strict = true\nallow_untyped_defs = true\n")
    model = learn(typed_repo("src/acme"), tool_configs={"pyproject.toml": loosened, **RUN})
    assert conv(model, "typing.annotations.function").source == "learned"
    per_module = MYPY_STRICT + '\n[[tool.mypy.overrides]]\nmodule = "acme.legacy.*"\nallow_untyped_defs = true\n'
    model = learn(typed_repo("src/acme"), tool_configs={"pyproject.toml": per_module, **RUN})
    assert change_findings(model, "src/acme/legacy/old.py", None, '"""Old."""\n' + NEW_HELPER)[0] == []


def test_a_checker_configured_but_never_run_declares_nothing() -> None:
    # cattrs: `[tool.mypy] strict = true`, and no hook, tox command, task or workflow runs mypy.
    model = learn(typed_repo("src/acme"), tool_configs={"pyproject.toml": MYPY_STRICT})
    typed = conv(model, "typing.annotations.function")
    assert (typed.source, typed.level) == ("learned", "loose")
    assert change_findings(model, "src/acme/extra.py", None, '"""Extra."""\n' + NEW_HELPER)[0] == []
    # The same mypy run by a pre-commit hook, a nox session, a make recipe or a tox command declares.
    runners = (
        {
            ".pre-commit-config.yaml": "repos:\n  - repo: https://github.com/pre-commit/mirrors-mypy\n"
            "    rev: v1.11.2\n    hooks:\n      - id: mypy\n"
        },
        {"noxfile.py": 'import nox\n\n\n@nox.session\ndef lint(session):\n    session.run("mypy", "src")\n'},
        {"Makefile": "lint:\n\tpython -m mypy src tests\n"},
        {"tox.ini": "[testenv:typing]\ncommands = mypy src\n"},
    )
    for runner in runners:
        assert read({"pyproject.toml": MYPY_STRICT, **runner}).tools[0].tool == "mypy", runner
    # Named without being run: a stubs package, an extension, a workflow comment.
    installs = (
        "jobs:\n  t:\n    steps:\n      # mypy runs elsewhere\n      - run: pip install types-mypy mypy_extensions\n"
    )
    assert read({"pyproject.toml": MYPY_STRICT, ".github/workflows/t.yml": installs}).tools == []
    # coverage.py: `select = ["ALL"]` for ruff's linter while only ruff format runs (a hook and tox):
    # neither annotations nor docstrings nor import order are declared, and the length binds code only.
    coverage = '[tool.ruff]\nline-length = 100\n\n[tool.ruff.lint]\nselect = ["ALL"]\n'
    hook = (
        "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: v0.14.4\n"
        "    hooks:\n      - id: ruff-format\n"
    )
    tox = "[testenv:quality]\ncommands =\n    ruff format --check\n    python -m pylint coverage\n"
    configs = read({"pyproject.toml": coverage, ".pre-commit-config.yaml": hook, "tox.ini": tox})
    [ruff] = configs.tools
    assert [(s.rule, s.choice, s.code_only) for s in ruff.settings if s.rule == LINE_LENGTH] == [
        (LINE_LENGTH, "100", True)
    ]
    assert not {s.rule for s in ruff.settings} & {
        "formatting.imports.order",
        "typing.annotations.function",
        "documentation.docstring.function",
    }
    assert "pyproject.toml: only ruff format is run; ruff's lint rules not declared" in configs.notes
    # `ruff check` in a workflow is the linter run: everything it selects is declared again.
    checked = read({"pyproject.toml": coverage, ".pre-commit-config.yaml": hook, "tox.ini": tox, **RUN})
    assert {"typing.annotations.function", "documentation.docstring.function"} <= {
        s.rule for s in checked.tools[0].settings
    }


# packaging's, filelock's and nox's shape: every ruff rule, a few families turned off.
RUFF_ALL_BUT_DOCSTRINGS = """\
[tool.ruff.lint]
select = ["ALL"]
ignore = [
    "A",     # shadowing is fine
    "COM",   # the formatter takes care of commas
    "D",     # we prefer our own docstring style
    "E501",
]

[tool.ruff.lint.per-file-ignores]
"tests/**" = ["ANN", "S101"]
"""
UNDOCUMENTED = '"""Extra."""\n' + NEW_HELPER


def test_ruff_selecting_all_declares_annotations_and_the_docstrings_it_does_not_ignore() -> None:
    model = learn(typed_repo("src/acme"), tool_configs={"pyproject.toml": RUFF_ALL_BUT_DOCSTRINGS, **RUN})

    typed = conv(model, "typing.annotations.method")
    assert (typed.level, typed.source) == ("strict", "declared")
    assert typed.description.startswith('declared in pyproject.toml: [tool.ruff.lint] select "ALL" (ANN001')
    # `ignore = ["D"]`: no docstring rule is declared; the learned one stays held (earned.py).
    documented = conv(model, "documentation.docstring.function")
    assert (documented.source, documented.level) == ("learned", "loose")
    assert change_findings(model, "src/acme/extra.py", None, UNDOCUMENTED)[0] == [
        "typing.annotations.function:brand_new"
    ]


def test_ruffs_most_specific_selector_decides_and_a_shorter_linter_name_is_another_linter() -> None:
    def rules(lint: str) -> set[str]:
        return {s.rule for t in read({"pyproject.toml": "[tool.ruff.lint]\n" + lint, **RUN}).tools for s in t.settings}

    typing = {"typing.annotations.function", "typing.annotations.method"}
    docs = {"documentation.docstring.function", "documentation.docstring.method"}
    assert rules('select = ["ANN"]\nignore = ["A"]\n') == typing  # flake8-builtins is not flake8-annotations
    assert rules('select = ["ALL"]\nignore = ["ANN2"]\n') & typing == set()  # returns unannotated are fine
    assert rules('select = ["ALL"]\nignore = ["D"]\nextend-select = ["D103"]\n') & docs == {
        "documentation.docstring.function"
    }
    assert rules('extend-select = ["D"]\nignore = ["D1"]\n') == set()
    assert rules('extend-select = ["D"]\n\n[tool.ruff.lint.pydocstyle]\nconvention = "google"\n') == docs
    untyped_ok = 'select = ["ANN"]\n\n[tool.ruff.lint.flake8-annotations]\nignore-fully-untyped = true\n'
    assert rules(untyped_ok) == set()


# loguru's and humanize's shape: pydocstyle's codes added to ruff's defaults, tests let off.
RUFF_DOCSTRINGS = """\
[tool.ruff]
line-length = 100

[tool.ruff.lint]
extend-select = ["D", "I"]
per-file-ignores = {"tests/*" = ["D"], "src/acme/cli.py" = ["D103"]}

[tool.ruff.lint.pydocstyle]
convention = "numpy"
"""
ENCODERS = '''\
"""Encoders."""

import json
from typing import override


class Encoder(json.JSONEncoder):
    """Encodes records."""

    def default(self, o: object) -> object:
        return str(o)


class Strict(json.JSONEncoder):
    """Encodes records strictly."""

    @override
    def default(self, o: object) -> object:
        return repr(o)
'''


def test_ruffs_docstring_codes_declare_docstrings_where_ruff_asks_for_them() -> None:
    model = learn(typed_repo("src/acme"), tool_configs={"pyproject.toml": RUFF_DOCSTRINGS, **RUN})

    documented = conv(model, "documentation.docstring.function")
    assert (documented.level, documented.source, documented.family) == ("strict", "declared", "documentation")
    assert documented.description.startswith('declared in pyproject.toml: [tool.ruff.lint] select "D" (D103)')
    assert conv(model, "typing.annotations.function").source == "learned"  # no ANN code selected
    head = OLD_HELPERS.replace("(items):\n    total = 0", "(items, start=0):\n    total = start") + NEW_HELPER
    new, old = change_findings(model, "src/acme/helpers.py", OLD_HELPERS, head)
    assert new == ["documentation.docstring.function:brand_new"]
    assert old == ["documentation.docstring.function:legacy_total"]
    # The file ruff lets off D103 (per-file-ignores) is still asked for its methods' docstrings.
    cli = UNDOCUMENTED + "\n\nclass Runner:\n    '''Runs.'''\n\n    def run(self) -> None:\n        pass\n"
    assert change_findings(model, "src/acme/cli.py", None, cli)[0] == ["documentation.docstring.method:Runner.run"]
    # pydocstyle asks nothing of a private module.
    assert change_findings(model, "src/acme/_impl.py", None, UNDOCUMENTED)[0] == []
    # An override is asked for its own docstring unless it says it overrides (ruff's D102).
    assert change_findings(model, "src/acme/encoders.py", None, ENCODERS)[0] == [
        "documentation.docstring.method:Encoder.default"
    ]
    # The learned rule (raised here) leaves an override to the docstring of the method it overrides.
    learned = learn(typed_repo("src/acme"), thresholds=HELD_RAISED)
    assert change_findings(learned, "src/acme/runner.py", None, cli)[0] == ["documentation.docstring.method:Runner.run"]
    assert change_findings(learned, "src/acme/encoders.py", None, ENCODERS)[0] == []


def test_pydocstyles_own_configuration_declares_the_docstrings_it_checks() -> None:
    def rules(configs: dict[str, str]) -> set[str]:
        return {s.rule for t in read({**configs, **RUN}).tools if t.tool == "pydocstyle" for s in t.settings}

    docs = {"documentation.docstring.function", "documentation.docstring.method"}
    assert rules({"pyproject.toml": '[tool.pydocstyle]\nconvention = "numpy"\n'}) == docs
    assert rules({"setup.cfg": "[pydocstyle]\nadd-ignore = D102,D105\n"}) == {"documentation.docstring.function"}
    assert rules({"tox.ini": "[pydocstyle]\nignore = D1\n"}) == set()
    assert rules({"setup.cfg": "[pydocstyle]\nselect = D2,D3\n"}) == set()
    model = learn(typed_repo("src/acme"), tool_configs={"setup.cfg": "[pydocstyle]\nconvention = google\n", **RUN})
    assert conv(model, "documentation.docstring.function").description.startswith(
        "declared in setup.cfg: setup.cfg [pydocstyle] convention = google (D103)"
    )
    assert change_findings(model, "src/acme/extra.py", None, UNDOCUMENTED)[0] == [
        "documentation.docstring.function:brand_new"
    ]


# --- formatters a hook or a command runs, with no configuration table of their own ----------------

# python-tabulate before its move to ruff: black from pre-commit (`args: [--safe]`) and no
# [tool.black]; flake8 from another hook, its [flake8] section in tox.ini.
TABULATE_HOOKS = """\
repos:
-   repo: https://github.com/python/black
    rev: 25.1.0
    hooks:
    -   id: black
        args: [--safe]
        language_version: python3
-   repo: https://github.com/pre-commit/pre-commit-hooks
    rev: v6.0.0
    hooks:
    -   id: trailing-whitespace
    -   id: check-yaml
-   repo: https://github.com/pycqa/flake8
    rev: 7.3.0
    hooks:
    -   id: flake8
        language_version: python3
ci:
    skip: [black]
"""
TABULATE_TOX = """\
[tox]
envlist = lint, py{310, 311, 312}

[testenv]
commands = pytest -v --doctest-modules --ignore benchmark {posargs}

[flake8]
max-line-length = 99
"""


def quote_findings(model: ConventionModel, path: str, text: str) -> list[tuple[int, str]]:
    return [
        (f.start_line, f.message) for f in check(facts_of(path, text), text, model) if f.rule == "formatting.quotes"
    ]


def test_a_black_hook_without_a_table_declares_blacks_defaults() -> None:
    files = python_repo(long_lines=False)
    hooked = learn(files, tool_configs={".pre-commit-config.yaml": TABULATE_HOOKS, "tox.ini": TABULATE_TOX})
    skipping = TABULATE_HOOKS.replace("args: [--safe]", "args: [--safe, --skip-string-normalization]")
    skipped = learn(files, tool_configs={".pre-commit-config.yaml": skipping, "tox.ini": TABULATE_TOX})
    text = module_with("TABLE_FORMAT = 'grid'")

    # Learned alone, the quote habit is held loose: no pull-request comment.
    assert quote_findings(learn(files), "app/reports/audit.py", text) == []
    quotes = conv(hooked, "formatting.quotes")
    assert (quotes.choice, quotes.level, quotes.source) == ("double", "strict", "declared")
    [(line, message)] = quote_findings(hooked, "app/reports/audit.py", text)
    assert line == text.count("\n")
    assert message.endswith(
        "declared in .pre-commit-config.yaml: hook black (black normalizes strings to double quotes)"
        "; the code agrees: 405 of 405 python string literals (100%) use double quotes"
    )
    # black keeps 88 for code, flake8 reports past 99: the more lenient limit holds.
    assert conv(hooked, LINE_LENGTH).choice == "99"
    # `--skip-string-normalization`: black leaves quotes as written, and declares none.
    assert conv(skipped, "formatting.quotes").source == "learned"
    assert quote_findings(skipped, "app/reports/audit.py", text) == []


def test_a_formatters_hook_or_command_arguments_and_paths() -> None:
    def black(texts: dict[str, str]) -> list[tuple[str, dict[str, str], tuple[str, ...]]]:
        return [
            (t.path, {s.rule.removeprefix("formatting."): s.choice for s in t.settings}, t.scope)
            for t in read(texts).tools
            if t.tool == "black"
        ]

    hook = "repos:\n  - repo: https://github.com/psf/black-pre-commit-mirror\n    hooks:\n      - id: black\n"
    [(path, got, scope)] = black({".pre-commit-config.yaml": hook + "        args: [-l, '100', -S, --preview]\n"})
    assert (path, got["line_length"], "quotes" in got, scope) == (".pre-commit-config.yaml", "100", False, ())
    [(_, got, _)] = black({".pre-commit-config.yaml": hook + "        args: [--line-length=120]\n"})
    assert (got["line_length"], got["quotes"]) == ("120", "double")
    # A [tool.black] table the hook reads stays the one entry; the hook's arguments win over it.
    table = {"pyproject.toml": "[tool.black]\nline-length = 100\n"}
    [(path, got, _)] = black({**table, ".pre-commit-config.yaml": hook})
    assert (path, got["line_length"], got["quotes"]) == ("pyproject.toml", "100", "double")
    [(path, got, _)] = black({**table, ".pre-commit-config.yaml": hook + "        args: [-S]\n"})
    assert (path, got["line_length"], "quotes" in got) == ("pyproject.toml", "100", False)
    # The hook's files and exclude (and the configuration's own) are where black runs.
    narrowed = "exclude: ^docs/\n" + hook + "        files: ^(src|tests)/\n        exclude: _version\\.py$\n"
    [(_, _, [regex])] = black({".pre-commit-config.yaml": narrowed})
    ran = [
        p for p in ("src/a.py", "tests/b.py", "docs/src/c.py", "src/_version.py", "tools/d.py") if re.match(regex, p)
    ]
    assert ran == ["src/a.py", "tests/b.py"]
    # tox's `black --check -l 100 src tests`: its paths, its width.
    tox = "[testenv:lint]\ncommands =\n    black --check -l 100 src tests\n"
    [(path, got, scope)] = black({"tox.ini": tox})
    assert (path, got["line_length"], scope) == ("tox.ini", "100", ("^src(?:/|$)", "^tests(?:/|$)"))
    # A manual-stage hook runs only when asked for.
    assert black({".pre-commit-config.yaml": hook + "        stages: [manual]\n"}) == []
    # multidict's folded verbose exclude keeps its line breaks (YAML keeps those of more-indented
    # lines): the scope must stay one regex on one line, or every review of the repository breaks.
    folded = hook + "        exclude: >-\n          (?x)\n          ^\n            tools/upgrade\\.py\n          $\n"
    [(_, _, [regex])] = black({".pre-commit-config.yaml": folded})
    assert "\n" not in regex
    assert [p for p in ("tools/upgrade.py", "src/tools/upgrade.py", "src/a.py") if re.match(regex, p)] == [
        "src/tools/upgrade.py",
        "src/a.py",
    ]


def test_a_hook_alone_declares_only_the_style_the_code_keeps() -> None:
    # pyparsing: a black hook (`rev: stable`, no [tool.black], run by no CI) while its examples keep
    # 100-column lines: the hook is not in force for the width; the double quotes the code keeps stand.
    wide = 'RETRY_NOTE = ("see the operations guide", ' + ", ".join(f"{n}" for n in range(24)) + ")\n"
    files = [
        facts_of(f.path, module_source("accounts", "audit", i) + "\n" + wide)
        for i, f in enumerate(python_repo(long_lines=False))
        if f.path.endswith(".py")
    ]
    hook = "repos:\n-   repo: https://github.com/python/black\n    rev: stable\n    hooks:\n    - id: black\n"
    model = learn(files, tool_configs={".pre-commit-config.yaml": hook})
    length = conv(model, LINE_LENGTH)
    assert (length.source, length.choice) != ("declared", "88")
    assert conv(model, "formatting.quotes").source == "declared"
    # The same width declared by a table of its own is the project's statement, whatever the code does.
    tabled = learn(files, tool_configs={".pre-commit-config.yaml": hook, "pyproject.toml": "[tool.black]\n"})
    assert (conv(tabled, LINE_LENGTH).source, conv(tabled, LINE_LENGTH).choice) == ("declared", "88")


def test_a_black_hook_left_beside_ruff_formats_single_quotes_declares_no_quotes() -> None:
    # rq: a black hook still in .pre-commit-config.yaml, while `[tool.ruff.format] quote-style =
    # "single"` is how the project formats (and its code agrees): black's double quotes are not its style.
    hook = "repos:\n  - repo: https://github.com/psf/black\n    rev: 23.1.0\n    hooks:\n      - id: black\n"
    ruff = '[tool.ruff]\nline-length = 120\n\n[tool.ruff.format]\nquote-style = "single"\n'
    configs = read({".pre-commit-config.yaml": hook, "pyproject.toml": ruff})
    black = [t for t in configs.tools if t.tool == "black"]
    assert [s.rule for t in black for s in t.settings if s.rule == "formatting.quotes"] == []
    assert any("quote-style disagree" in n for n in configs.notes)
    # ruff format at its default double quotes agrees with black: black's quotes stand.
    agreeing = read({".pre-commit-config.yaml": hook, "pyproject.toml": "[tool.ruff.format]\nline-ending = 'lf'\n"})
    assert [
        s.choice for t in agreeing.tools if t.tool == "black" for s in t.settings if s.rule == "formatting.quotes"
    ] == ["double"]


def test_a_ruff_format_hook_formats_at_ruffs_configuration_or_its_defaults() -> None:
    # python-tabulate today: [tool.ruff] line-length 99, no format table, ruff format from pre-commit.
    tabulate_ruff = '[tool.ruff]\nline-length = 99\n\n[tool.ruff.lint]\nextend-select = ["W", "B", "I", "UP"]\n'
    hooks = RUFF_HOOKS.format(lint="ruff-check")
    configured = settings({"pyproject.toml": tabulate_ruff, ".pre-commit-config.yaml": hooks})
    unconfigured = settings({".pre-commit-config.yaml": hooks})
    linted_only = settings({"pyproject.toml": tabulate_ruff})
    tox = "[testenv:lint]\ncommands =\n    ruff check\n    ruff format --check\n"

    assert (configured[("ruff", "line_length")], configured[("ruff", "quotes")]) == ("99", "double")
    assert (unconfigured[("ruff", "line_length")], unconfigured[("ruff", "quotes")]) == ("88", "double")
    assert ("ruff", "quotes") not in linted_only
    assert settings({"pyproject.toml": tabulate_ruff, "tox.ini": tox})[("ruff", "quotes")] == "double"
    [ruff] = read({"pyproject.toml": tabulate_ruff, ".pre-commit-config.yaml": hooks}).tools
    assert ruff.path == "pyproject.toml"
    quotes = next(s for s in ruff.settings if s.rule == "formatting.quotes")
    assert (
        quotes.evidence == ".pre-commit-config.yaml hook ruff-format (ruff format's defaults): quote-style = 'double'"
    )


# --- which imports the project's import sorter files as first party --------------------------------

# A package installed from a directory of another name (setup.cfg `package_dir = workflows = lib`):
# `workflows.billing` resolves to no file of the tree, so only isort's `known_first_party` says it
# is the project's own. isort files it with the tests' own helpers, alphabetically after them.
ODD_LAYOUT_TEST = """\
import pytest

from tests.factories import make_ledger
from workflows.billing.invoice import Invoice


def test_totals() -> None:
    assert make_ledger(Invoice).total() == 0
"""


def _odd_layout_repo() -> list[FileFacts]:
    files = [
        facts_of(f"lib/{package}/{noun}.py", module_source(package, noun, p * 20 + n))
        for p, package in enumerate(PACKAGES)
        for n, noun in enumerate(NOUNS)
    ]
    files.append(facts_of("lib/__init__.py", '"""Workflows."""\n'))
    files.append(facts_of("tests/factories.py", "def make_ledger(kind: type) -> object:\n    return kind()\n"))
    return files


def test_isorts_known_first_party_decides_a_package_the_tree_does_not_resolve() -> None:
    isort = (
        "[metadata]\nname = workflows\n\n[options]\npackage_dir =\n    workflows = lib\n\n[isort]\nprofile = black\n"
    )
    files = _odd_layout_repo()
    undeclared = learn(files, tool_configs={"setup.cfg": isort})
    declared = learn(files, tool_configs={"setup.cfg": isort + "known_first_party = workflows\n"})
    path = "tests/billing/test_totals.py"
    misplaced = ODD_LAYOUT_TEST.replace("import pytest\n\n", "").replace("Invoice\n", "Invoice\nimport pytest\n")

    [(line, message)] = import_findings(undeclared, path, ODD_LAYOUT_TEST)
    assert (line, message.split(",")[0]) == (
        4,
        "third-party import `workflows.billing.invoice` comes after local imports",
    )
    assert import_findings(declared, path, ODD_LAYOUT_TEST) == []
    [(line, message)] = import_findings(declared, path, misplaced)
    assert message.split(",")[0] == "third-party import `pytest` comes after local imports"
    assert conv(declared, "formatting.imports.order").params["first_party"] == "workflows"
    # ruff's isort says the same in [tool.ruff.lint.isort] (or the older [tool.ruff.isort]).
    for table in ("lint.isort", "isort"):
        ruff = f'[tool.ruff.lint]\nselect = ["I"]\n\n[tool.ruff.{table}]\nknown-first-party = ["workflows"]\n'
        assert import_findings(learn(files, tool_configs={"pyproject.toml": ruff}), path, ODD_LAYOUT_TEST) == []


def test_declared_source_roots_file_a_package_elsewhere_with_the_third_party() -> None:
    # cbor2: the package sits at the root, and isort's `src_paths = ["src"]` makes it third party:
    # isort writes a test's `from cbor2 import ...` beside `import pytest`. Resolved against the
    # tree, the import is the project's own; the declared roots win.
    files = [
        facts_of(f"shipyard/{package}/{noun}.py", module_source(package, noun, p * 20 + n))
        for p, package in enumerate(PACKAGES)
        for n, noun in enumerate(NOUNS)
    ]
    conftest = (
        "from shipyard.billing.ledger import Ledger\nimport pytest\n\n\n@pytest.fixture\ndef ledger() -> Ledger:\n"
    )
    conftest += "    return Ledger()\n"
    [resolved] = resolve_imports([*files, facts_of("tests/conftest.py", conftest)])[-1:]
    isort = '[tool.isort]\nprofile = "black"\n'

    def findings(config: str) -> list[str]:
        model = learn(files, tool_configs={"pyproject.toml": config})
        return [f.message.split(",")[0] for f in check(resolved, conftest, model) if f.rule.endswith("order")]

    assert findings(isort) == ["third-party import `pytest` comes after local imports"]
    assert findings(isort + 'src_paths = ["src"]\n') == []
    assert findings(isort + 'src_paths = ["src", "."]\n') == ["third-party import `pytest` comes after local imports"]
    # ruff's `src` reads the same.
    assert findings('[tool.ruff]\nsrc = ["src"]\n\n[tool.ruff.lint]\nselect = ["I"]\n') == []


# --- JavaScript style presets: the style a linter enforces without a rule of the repository's -----


def preset_repo(dirs: tuple[str, ...] = ("lib", "test")) -> list[FileFacts]:
    """20 CommonJS modules in each of ``dirs``, in single quotes, indented by 2 spaces."""
    return [facts_of(f"{d}/part{i}.js", js_module(i, "'")) for d in dirs for i in range(20)]


NEW_LINE = 'const DEFAULT_ENCODING = "utf8";\n'


def preset_quotes(model: ConventionModel, path: str = "lib/encoding.js") -> list[tuple[int, str]]:
    text = js_module(90, "'") + NEW_LINE
    return quote_findings(model, path, text)


KOA_PACKAGE = """{
  "name": "koa",
  "scripts": {"test": "node --test", "lint": "standard", "lint:fix": "standard --fix"},
  "devDependencies": {"snazzy": "^9.0.0", "standard": "^17.1.2", "supertest": "^7.1.1"}
}"""


def test_standard_run_by_a_script_declares_its_style() -> None:
    # koa: `"lint": "standard"` and no quotes or indent rule of its own.
    files = preset_repo()
    model = learn(files, tool_configs={"package.json": KOA_PACKAGE})
    # dotenv also lists `standard-version`, a release tool: no linter, nothing declared.
    release = (
        '{"name": "dotenv", "scripts": {"release": "standard-version"}, "devDependencies": {"standard-version": "9"}}'
    )
    releasing = learn(files, tool_configs={"package.json": release})

    quotes = conv(model, "formatting.quotes", "javascript")
    assert (quotes.choice, quotes.level, quotes.source) == ("single", "strict", "declared")
    [(line, message)] = preset_quotes(model)
    assert line == 8  # the new line
    assert message.endswith(
        'declared in package.json: package.json "scripts.lint": standard (standard: single quotes)'
        "; the code agrees: 160 of 160 javascript string literals (100%) use single quotes"
    )
    assert (
        conv(model, "formatting.indent.width", "javascript").choice,
        conv(model, "formatting.indent.width", "javascript").source,
    ) == ("2", "declared")
    assert conv(releasing, "formatting.quotes", "javascript").source == "learned"
    assert preset_quotes(releasing) == []


EXECA_PACKAGE = """{
  "name": "execa",
  "scripts": {"test": "npm run lint && npm run unit", "lint": "xo", "unit": "c8 --merge-async ava"},
  "devDependencies": {"ava": "^8.0.1", "xo": "^4.0.0"},
  "xo": {"rules": {"unicorn/no-empty-file": "off", "@stylistic/max-len": "off"}}
}"""


def test_xo_indents_with_tabs_unless_told_space() -> None:
    # execa, ky, got: xo run by a script, `space` unset: tabs.
    tabbed = read({"package.json": EXECA_PACKAGE})
    [xo] = tabbed.tools
    by_rule = {s.rule: s for s in xo.settings}
    assert (xo.tool, xo.languages) == ("xo", ("javascript", "typescript", "tsx"))
    assert by_rule["formatting.indent.unit"].choice == "tab"
    assert "formatting.indent.width" not in by_rule
    assert by_rule["formatting.quotes"].evidence == 'package.json "scripts.lint": xo (xo: single quotes)'
    # `"space": true` is 2 spaces, a number that many.
    spaced = settings({"package.json": EXECA_PACKAGE.replace('"xo": {', '"xo": {"space": true, ')})
    four = settings({"package.json": EXECA_PACKAGE.replace('"xo": {', '"xo": {"space": 4, ')})
    assert (spaced[("xo", "indent.unit")], spaced[("xo", "indent.width")]) == ("space", "2")
    assert four[("xo", "indent.width")] == "4"
    # xo's own `rules` win over its defaults.
    double = settings(
        {"package.json": EXECA_PACKAGE.replace('"rules": {', '"rules": {"@stylistic/quotes": ["error", "double"], ')}
    )
    assert double[("xo", "quotes")] == "double"


def test_xo_holds_a_new_line_to_tabs() -> None:
    files = [facts_of(f"lib/part{i}.js", js_module(i, "'").replace("  return", "\treturn")) for i in range(40)]
    model = learn(files, tool_configs={"package.json": EXECA_PACKAGE})

    unit = conv(model, "formatting.indent.unit", "javascript")
    assert (unit.choice, unit.level, unit.source) == ("tab", "strict", "declared")
    assert [line for line, _ in preset_quotes(model)] == [8]


PINO_ESLINT = """'use strict'

const { defineConfig, globalIgnores } = require('eslint/config')

module.exports = require('neostandard')({
  ignores: [...require('neostandard').resolveIgnoresFromGitignore(), 'lib/generated.js'],
  ts: true
})
"""
PINO_PACKAGE = '{"name": "pino", "scripts": {"lint": "eslint .", "test": "npm run lint && borp"}}'


def test_neostandard_called_by_an_eslint_flat_config() -> None:
    # pino, fast-json-stringify: `require('neostandard')({...})` with eslint run by `"lint"`.
    files = preset_repo()
    model = learn(files, tool_configs={"eslint.config.js": PINO_ESLINT, "package.json": PINO_PACKAGE})

    [(_, message)] = preset_quotes(model)
    assert message.endswith(
        'declared in eslint.config.js: eslint.config.js neostandard({ts: true}), run by package.json "scripts.lint":'
        " eslint . (neostandard: single quotes); the code agrees: 160 of 160 javascript string literals (100%) use"
        " single quotes"
    )
    # Its literal `ignores` are files the style does not reach.
    assert preset_quotes(model, "lib/generated.js") == []
    [eslint] = read({"eslint.config.js": PINO_ESLINT, "package.json": PINO_PACKAGE}).tools
    assert eslint.languages == ("javascript", "typescript")


def test_neostandard_without_style_or_without_eslint_run_declares_nothing() -> None:
    files = preset_repo()
    esm = "import neostandard from 'neostandard'\n\nexport default neostandard({ noStyle: true })\n"
    no_style = learn(files, tool_configs={"eslint.config.mjs": esm, "package.json": PINO_PACKAGE})
    unrun = read({"eslint.config.js": PINO_ESLINT, "package.json": '{"name": "pino", "scripts": {"test": "borp"}}'})
    # A rule of ours the config sets itself is its own; the file is code, its value not read.
    semi = (
        PINO_ESLINT.replace("module.exports", "const config =")
        + "config.push({ rules: { '@stylistic/quotes': ['error', 'double'] } })\n"
    )
    own = settings({"eslint.config.js": semi, "package.json": PINO_PACKAGE})

    assert conv(no_style, "formatting.quotes", "javascript").source == "learned"
    assert preset_quotes(no_style) == []
    assert unrun.tools == []
    assert unrun.notes == [
        "eslint.config.js: neostandard is not run by a package.json script; its style was not declared"
    ]
    assert ("eslint", "quotes") not in own
    assert own[("eslint", "indent.width")] == "2"


VALIDATOR_ESLINTRC = """{
  "extends": "airbnb-base",
  "parser": "babel-eslint",
  "rules": {"camelcase": 0, "linebreak-style": 0, "comma-dangle": [2, "always-multiline"]}
}"""
VALIDATOR_PACKAGE = '{"name": "validator", "scripts": {"lint": "eslint src test", "pretest": "npm run lint"}}'


def test_an_eslint_config_extending_airbnb_declares_its_style_where_eslint_runs() -> None:
    # validator.js: `extends: airbnb-base`, eslint run on src and test only.
    configs = read({".eslintrc.json": VALIDATOR_ESLINTRC, "package.json": VALIDATOR_PACKAGE})
    [eslint] = configs.tools
    by_rule = {s.rule: s for s in eslint.settings}

    assert eslint.scope == ("^src(?:/|$)", "^test(?:/|$)")
    assert (by_rule[LINE_LENGTH].choice, by_rule[LINE_LENGTH].code_only) == ("100", True)
    assert by_rule["formatting.quotes"].evidence == (
        '.eslintrc.json extends "airbnb-base", run by package.json "scripts.lint": eslint src test'
        " (airbnb-base: single quotes)"
    )
    assert "formatting.line_endings" not in by_rule  # its own `linebreak-style: 0` turns that off
    # Its own rule wins over the preset's.
    own = settings(
        {
            ".eslintrc.json": VALIDATOR_ESLINTRC.replace('"camelcase": 0', '"quotes": [2, "double"]'),
            "package.json": VALIDATOR_PACKAGE,
        }
    )
    assert own[("eslint", "quotes")] == "double"
    # eslint-config-prettier after it turns the style rules off: Prettier formats instead.
    prettier = settings(
        {
            ".eslintrc.json": VALIDATOR_ESLINTRC.replace('"airbnb-base"', '["airbnb-base", "prettier"]'),
            "package.json": VALIDATOR_PACKAGE,
        }
    )
    assert prettier == {}
    # Named, not run: its own rules stand as they did; the preset's are not declared.
    unrun = read(
        {
            ".eslintrc.json": '{"extends": "standard", "rules": {"indent": ["error", 4]}}',
            "package.json": '{"name": "v"}',
        }
    )
    assert [(s.rule, s.choice) for t in unrun.tools for s in t.settings] == [
        ("formatting.indent.unit", "space"),
        ("formatting.indent.width", "4"),
    ]


def test_airbnbs_max_len_passes_a_line_holding_a_string_however_long() -> None:
    # validator.js: ESLint's max-len with ignoreStrings skips every line with a string in it (a
    # 401-character table of ISO codes), and still reports a long line of code alone.
    files = [facts_of(f"src/lib/is{i}.js", js_module(i, "'")) for i in range(40)]
    model = learn(files, tool_configs={".eslintrc.json": VALIDATOR_ESLINTRC, "package.json": VALIDATOR_PACKAGE})
    table = "const codes = new Set([" + ", ".join(f"'C{n:03d}'" for n in range(40)) + "]);\n"
    code = "const total = " + " + ".join(f"value{n}" for n in range(20)) + ";\n"
    text = js_module(99, "'") + table + code

    found = [
        (f.start_line, f.level) for f in check(facts_of("src/lib/isNew.js", text), text, model) if f.rule == LINE_LENGTH
    ]
    assert found == [(text.count("\n"), "strict")]


def test_an_eslint_preset_holds_typescript_only_where_eslint_is_told_of_it() -> None:
    # pino (2023): `.eslintrc` extending standard, `eslint .` (ESLint 8 lints `.js` only), so its
    # `test/types/*.test-d.ts` keep their own 4-space indentation.
    package = '{"name": "pino", "scripts": {"lint": "eslint ."}}'
    [eslint] = read({".eslintrc": '{"extends": ["standard"]}', "package.json": package}).tools
    assert eslint.languages == ("javascript",)
    typed = '{"extends": ["standard"], "parser": "@typescript-eslint/parser"}'
    [eslint] = read({".eslintrc": typed, "package.json": package}).tools
    assert "typescript" in eslint.languages


def test_a_preset_holds_only_the_paths_its_linter_lints() -> None:
    files = preset_repo(("src", "test")) + [facts_of(f"scripts/tool{i}.js", js_module(i, '"')) for i in range(20)]
    model = learn(files, tool_configs={".eslintrc.json": VALIDATOR_ESLINTRC, "package.json": VALIDATOR_PACKAGE})

    assert [line for line, _ in preset_quotes(model, "src/encoding.js")] == [8]
    assert preset_quotes(model, "scripts/encoding.js") == []


# --- EditorConfig turning a setting off for some files ----------------------------------------------

QS_EDITORCONFIG = """root = true

[*]
indent_style = space
indent_size = 4
insert_final_newline = true
max_line_length = 180

[test/*]
max_line_length = off

[*.md]
max_line_length = off
"""


def qs_like_repo() -> list[FileFacts]:
    """qs: lib/ keeps its lines short, its tests hold 200-character expectations on one line."""
    files = [facts_of(f"lib/part{i}.js", js_module(i, "'")) for i in range(30)]
    long_case = "  t.deepEqual(qs.parse('" + "a[b]=c&" * 25 + "'), { a: { b: 'c' } });\n"
    files += [facts_of(f"test/case{i}.js", js_module(i, "'") + long_case) for i in range(20)]
    files += [facts_of(f"bench/part{i}.js", js_module(i, "'")) for i in range(5)]
    return files


def length_findings(model: ConventionModel, path: str) -> list[int]:
    text = js_module(90, "'") + "const DEFAULTS = { " + ", ".join(f"option{n}: {n}" for n in range(18)) + " };\n"
    assert 180 < len(text.splitlines()[-1]) < 300
    return [line for line, _ in long_line_findings(model, path, text)]


def test_a_file_editorconfig_turns_the_length_off_for_keeps_its_learned_habit() -> None:
    model = learn(qs_like_repo(), tool_configs={".editorconfig": QS_EDITORCONFIG})
    by_scope = {
        (c.scope.kind, c.scope.value): c
        for c in model.conventions
        if c.rule == LINE_LENGTH and c.language == "javascript"
    }

    declared = by_scope[("language", "javascript")]
    assert (declared.choice, declared.source, declared.level) == ("180", "declared", "strict")
    assert length_findings(model, "lib/format.js") == [8]
    # `[test/*] max_line_length = off`: the declared 180 does not reach test/, whose habit is learned.
    assert by_scope[("directory", "test")].source == "learned"
    assert length_findings(model, "test/format.js") == []
    # A directory no section turns off keeps the declared limit, as before.
    assert length_findings(model, "bench/format.js") == [8]


def test_one_file_editorconfig_turns_a_setting_off_for_is_exempt_from_it() -> None:
    # nanoid's `[nanoid.js] insert_final_newline = false`: its minified prebuild, one file of lib/.
    editorconfig = QS_EDITORCONFIG.replace(
        "[test/*]\nmax_line_length = off\n", "[lib/part3.js]\nmax_line_length = off\n"
    )
    model = learn(qs_like_repo(), tool_configs={".editorconfig": editorconfig})
    [length] = [
        c
        for c in model.conventions
        if c.rule == LINE_LENGTH and c.language == "javascript" and c.scope.kind == "language"
    ]

    assert length.params["exempt"] == "/lib/part3.js"
    assert length_findings(model, "lib/part3.js") == []
    assert length_findings(model, "lib/part4.js") == [8]
    # Without any section turning it off, test/ is held to the declared limit.
    plain = learn(
        qs_like_repo(), tool_configs={".editorconfig": QS_EDITORCONFIG.replace("[test/*]\nmax_line_length = off\n", "")}
    )
    assert length_findings(plain, "test/format.js") == [8]


# --- xo's unicorn/prevent-abbreviations: short forms the project's linter reports ----------------

KY_PACKAGE = """{
  "name": "ky",
  "scripts": {"test": "xo && npm run build && ava"},
  "devDependencies": {"ava": "^6.4.1", "xo": "^1.2.3"},
  "xo": {"rules": {"unicorn/filename-case": "off", "promise/prefer-await-to-then": "off"}}
}"""


def options_module(i: int) -> str:
    """A ky-like module that spells its words out (``options``, ``previous``, ``request``)."""
    return (
        f"export function merge{i}(request, options) {{\n"
        "\tconst mergedOptions = {...options};\n"
        "\tconst previousRequest = request;\n"
        "\treturn {mergedOptions, previousRequest};\n"
        "}\n"
    )


def options_repo() -> list[FileFacts]:
    return [facts_of(f"{d}/merge{i}.js", options_module(i)) for d in ("source", "test") for i in range(20)]


# A change's new module: `opts` and `prevHeaders` are names it binds; the rest is what xo leaves
# alone (an object key, a method, a shorthand destructuring, a default import by `require`).
NEW_OPTIONS = """import process from 'node:process';

const str = require('./string.js');

export function normalize(rawOptions) {
\tconst opts = {...rawOptions, retry: 2};
\tconst {res} = rawOptions;
\tconst prevHeaders = new Headers(opts.headers);
\treturn {opts, prevHeaders, res, str, env: process.env};
}

export class Client {
\tgetOpts() {
\t\treturn {obj: 1};
\t}
}
"""


def vocabulary_findings(
    model: ConventionModel, path: str = "source/normalize.js", text: str = NEW_OPTIONS, level: str = "strict"
) -> list[tuple[int, str, str, str | None]]:
    found = check(facts_of(path, text), text, model, prefs=CheckPrefs(level=level))
    return [(f.start_line, f.level, f.message, f.suggestion) for f in found if f.rule == "vocabulary.term"]


def test_xo_reports_the_short_forms_of_its_table_in_new_names_at_the_strict_level() -> None:
    # ky, got, p-queue: `xo` in `"test"`, xo 1.x, the rule on with xo's table.
    model = learn(options_repo(), tool_configs={"package.json": KY_PACKAGE})

    declared = conv(model, "vocabulary.term", "javascript")
    assert (declared.choice, declared.level, declared.source) == ("unicorn/prevent-abbreviations", "strict", "declared")
    found = vocabulary_findings(model)
    assert [(line, level, suggestion) for line, level, _, suggestion in found] == [
        (6, "strict", "options"),
        (8, "strict", "previousHeaders"),
    ]
    assert found[0][2] == (
        "`opts`: xo's `unicorn/prevent-abbreviations` replaces `opts` by `options`; rename to `options`"
        ' (declared in package.json: package.json "scripts.test": xo (xo: unicorn/prevent-abbreviations))'
    )
    # Two readings: the finding names both, and suggests no single rename.
    two = vocabulary_findings(model, text="export function fail(e) {\n\tthrow e;\n}\n")
    assert [(line, suggestion) for line, _, _, suggestion in two] == [(1, None)]
    assert "replaces `e` by `error` or `event`; rename to `error` or `event`" in two[0][2]
    # The linter's pragma is honoured as it is by xo.
    pragma = "\t// eslint-disable-next-line unicorn/prevent-abbreviations\n"
    disabled = NEW_OPTIONS.replace("\tconst opts", pragma + "\tconst opts")
    assert [line for line, *_ in vocabulary_findings(model, text=disabled)] == [9]


def test_without_xo_the_same_short_forms_are_the_learned_rule_held_loose() -> None:
    package = KY_PACKAGE.replace("xo && ", "")
    model = learn(options_repo(), tool_configs={"package.json": package})

    assert vocabulary_findings(model) == []
    loose = vocabulary_findings(model, level="loose")
    assert [(line, level) for line, level, _, _ in loose][:2] == [(6, "loose"), (8, "loose")]
    assert loose[0][2].startswith("`opts` says `opts` where the repository says `options`")


def test_xos_own_options_for_the_rule_allow_a_short_form() -> None:
    # `replacements: {"opts": false}` (the rule's options replace xo's; unicorn's defaults stay).
    allowing = KY_PACKAGE.replace(
        '"rules": {', '"rules": {"unicorn/prevent-abbreviations": ["error", {"replacements": {"opts": false}}], '
    )
    model = learn(options_repo(), tool_configs={"package.json": allowing})

    assert [(line, suggestion) for line, _, _, suggestion in vocabulary_findings(model)] == [(8, "previousHeaders")]
    # Allowed by name: not the learned rule's either.
    assert [line for line, *_ in vocabulary_findings(model, level="loose")] == [8]


def test_xo_overrides_turning_the_rule_off_for_tests_leave_them_to_the_learned_rule() -> None:
    # node-fetch's shape: the rule off for `test/**/*.js` in `overrides`.
    tests_off = KY_PACKAGE.replace(
        '"xo": {',
        '"xo": {"overrides": [{"files": "test/**/*.js", "rules": {"unicorn/prevent-abbreviations": "off"}}], ',
    )
    model = learn(options_repo(), tool_configs={"package.json": tests_off})

    assert vocabulary_findings(model, "test/normalize.js") == []
    learned = vocabulary_findings(model, "test/normalize.js", level="loose")
    assert [(line, level) for line, level, _, _ in learned][:2] == [(6, "loose"), (8, "loose")]
    assert [line for line, *_ in vocabulary_findings(model)] == [6, 8]


def test_xo_declares_no_short_forms_where_the_rule_does_not_run() -> None:
    def declared(package: str, extra: Mapping[str, str] | None = None) -> list[str]:
        configs = read({"package.json": package, **(extra or {})})
        return [s.choice for t in configs.tools for s in t.settings if s.rule == "vocabulary.term"]

    assert declared(KY_PACKAGE) == ["unicorn/prevent-abbreviations"]
    # debug: xo 0.23 predates the rule (xo turned it on in 0.28).
    assert declared(KY_PACKAGE.replace('"xo": "^1.2.3"', '"xo": "^0.23.0"')) == []
    # chalk in 2017: `"xo": "*"` installed the xo of its day, which had no such rule.
    assert declared(KY_PACKAGE.replace('"xo": "^1.2.3"', '"xo": "*"')) == []
    # Turned off, or down to a warning that does not fail the run.
    for level in ('"off"', "0", '["warn"]'):
        own = f'"rules": {{"unicorn/prevent-abbreviations": {level}, '
        assert declared(KY_PACKAGE.replace('"rules": {', own)) == []
    # xo's own flat config is code: one naming the rule is not read for it.
    flat = "export default [{rules: {'unicorn/prevent-abbreviations': 'off'}}];\n"
    assert declared(KY_PACKAGE, {"xo.config.js": flat}) == []
    # execa: xo 4 runs it under its new name.
    assert declared(KY_PACKAGE.replace('"xo": "^1.2.3"', '"xo": "^4.0.0"')) == ["unicorn/name-replacements"]


def test_xos_table_follows_its_release_line() -> None:
    def table(version: str) -> dict[str, str]:
        [xo] = read({"package.json": KY_PACKAGE.replace('"^1.2.3"', f'"{version}"')}).tools
        [names] = [s for s in xo.settings if s.rule == "vocabulary.term"]
        lines = dict(names.params)["replacements"].splitlines()
        return dict(line.split(" ", 1) for line in lines)

    current = table("^1.2.3")
    assert (current["opts"], current["res"], current["ret"], current["err"]) == (
        "options",
        "response result",
        "returnValue",
        "error",
    )
    assert "ctx" not in current  # unicorn's default, not in xo's table
    assert {"err", "whitelist"}.isdisjoint(table("^0.30.0"))
    assert table("^0.40.0")["whitelist"] == "allowList"
    assert table("^0.54.2")["whitelist"] == "include"  # chalk

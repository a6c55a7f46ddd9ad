"""Only what a change introduced: findings its base already had are set apart (engine/baseline.py).

Each test is shaped like a real change that was blamed for old code (issue #24): an
annotation-only edit, a pyupgrade sweep, a module split, a merge that touched old lines, a
rename; and each also checks that what is really new is still reported.
"""

from __future__ import annotations

import textwrap

from services.analyzer.engine import ConventionModel, Finding, learn
from services.analyzer.preferences import effective
from services.analyzer.review import Outcome, Target, review
from services.analyzer.state import LoadedRepo
from services.source.extract import extract
from services.source.imports import resolve_imports
from tests.analyzer.engine_factories import HELD_RAISED

ENTRY = LoadedRepo("r", "r", "", "", 0)


def _module(i: int) -> str:
    return (
        f'"""Records of kind {i}."""\n\nfrom __future__ import annotations\n\nimport logging\n\n'
        "log = logging.getLogger(__name__)\n\n\n"
        f"def parse_record_{i}(text: str) -> str:\n"
        '    """Parse one record."""\n'
        "    return text.strip()\n\n\n"
        f"def count_items_{i}(items: list[str]) -> int:\n"
        '    """Count the items."""\n'
        "    return len(items)\n"
    )


# Old code of the kind the real changes touched: undocumented, unannotated, typing's aliases.
LEGACY = '''\
"""Old helpers."""

from __future__ import annotations

from typing import List, Optional


def legacy_total(items):
    total = 0
    for item in items:
        total += item
    return total


def legacy_first(items: List[str]) -> Optional[str]:
    for item in items:
        return item
    return None


def format_label(name: str) -> str:
    """A label."""
    return name.title()
'''


def _model(extra: dict[str, str] | None = None) -> ConventionModel:
    files = {f"acme/kind{i}.py": _module(i) for i in range(30)}
    files["acme/legacy.py"] = LEGACY
    files.update(extra or {})
    facts = resolve_imports([extract(p, t.encode()) for p, t in files.items()])
    return learn(facts, thresholds=HELD_RAISED)  # line length as a repository raising it (earned.py)


MODEL = _model()


def _changed(base: str, head: str) -> set[int]:
    """Head lines a unified diff would mark as added (difflib, like git's -U0 hunks)."""
    import difflib

    out: set[int] = set()
    matcher = difflib.SequenceMatcher(a=base.split("\n"), b=head.split("\n"), autojunk=False)
    for tag, _a1, _a2, b1, b2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            out.update(range(b1 + 1, b2 + 1))
    return out


def _modified(path: str, base: str, head: str, *, old_path: str = "") -> Target:
    status = "renamed" if old_path else "modified"
    return Target(path, status, head.encode(), _changed(base, head), old_path=old_path, base=base.encode())


def _review(*targets: Target, model: ConventionModel = MODEL) -> Outcome:
    return review(ENTRY, model, list(targets), effective({}), max_bytes=1_000_000, change_level=False)


def _rules(findings: list[Finding]) -> list[tuple[str, int]]:
    return sorted((f.rule, f.start_line) for f in findings)


def test_an_annotation_only_edit_of_an_old_undocumented_function_blames_nothing() -> None:
    head = LEGACY.replace("def legacy_total(items):", "def legacy_total(items: list[int]) -> int:")
    out = _review(_modified("acme/legacy.py", LEGACY, head))

    assert out.findings == []
    assert _rules(out.preexisting) == [("documentation.docstring.function", 8)]
    assert all(f.preexisting for f in out.preexisting)


def test_the_same_edit_without_a_base_reports_it_as_before() -> None:
    head = LEGACY.replace("def legacy_total(items):", "def legacy_total(items: list[int]) -> int:")
    target = Target("acme/legacy.py", "modified", head.encode(), _changed(LEGACY, head))
    out = _review(target)

    assert _rules(out.findings) == [("documentation.docstring.function", 8)]
    assert out.preexisting == []
    assert not out.baseline


def test_a_pyupgrade_sweep_keeps_old_findings_old_and_a_new_function_is_still_reported() -> None:
    head = (
        LEGACY.replace("from typing import List, Optional\n", "")
        .replace("items: List[str]) -> Optional[str]:", "items: list[str]) -> str | None:")
        .replace("def legacy_total(items):", "def legacy_total(\n    items,\n):")
    )
    head += "\n\ndef brand_new(values):\n    return sorted(values)\n"
    out = _review(_modified("acme/legacy.py", LEGACY, head))

    new_line = head.split("\n").index("def brand_new(values):") + 1
    assert _rules(out.findings) == [
        ("documentation.docstring.function", new_line),
        ("typing.annotations.function", new_line),
    ]
    assert {(f.rule, f.symbol) for f in out.preexisting} >= {
        ("documentation.docstring.function", "legacy_total"),
        ("documentation.docstring.function", "legacy_first"),
    }


def test_a_function_moved_to_a_new_module_keeps_its_history() -> None:
    moved = LEGACY[LEGACY.index("def legacy_total") : LEGACY.index("def legacy_first")].rstrip() + "\n"
    left = LEGACY.replace(moved, "")
    new_module = '"""Totals."""\n\nfrom __future__ import annotations\n\n\n' + moved.replace(
        "def legacy_total(items):", "def legacy_total(items: list[int]) -> int:"
    )
    added = Target("acme/totals.py", "added", new_module.encode(), None)
    out = _review(_modified("acme/legacy.py", LEGACY, left), added)

    assert out.findings == []
    assert [(f.path, f.rule, f.symbol) for f in out.preexisting] == [
        ("acme/totals.py", "documentation.docstring.function", "legacy_total")
    ]


def test_a_module_deleted_in_a_split_still_gives_its_base() -> None:
    new_module = '"""Helpers, split."""\n\nfrom __future__ import annotations\n\n\n' + LEGACY.split("\n\n\n", 1)[1]
    new_module = new_module.replace("from typing import List, Optional\n", "")
    deleted = Target("acme/legacy.py", "deleted", base=LEGACY.encode())
    added = Target("acme/helpers/legacy.py", "added", new_module.encode(), None)
    out = _review(deleted, added)

    assert [f.rule for f in out.findings] == []
    assert {f.symbol for f in out.preexisting} == {"legacy_total", "legacy_first"}


def test_a_merge_that_edits_an_old_function_blames_only_what_the_branch_wrote() -> None:
    # The first-parent diff of a merge brings the branch's edits: a parameter added to an old
    # undocumented function, and a new helper written without a docstring.
    head = LEGACY.replace("def legacy_total(items):", "def legacy_total(items, start=0):").replace(
        "    total = 0\n", "    total = start\n"
    )
    head = head.replace(
        "def format_label",
        "def legacy_mean(items: list[int]) -> float:\n    return sum(items) / len(items)\n\n\ndef format_label",
    )
    out = _review(_modified("acme/legacy.py", LEGACY, head))

    assert [(f.rule, f.symbol) for f in out.findings] == [("documentation.docstring.function", "legacy_mean")]
    assert ("documentation.docstring.function", "legacy_total") in {(f.rule, f.symbol) for f in out.preexisting}


def test_a_renamed_function_keeps_its_docstring_history_but_a_new_camel_case_name_is_new() -> None:
    head = LEGACY.replace("def legacy_total(items):", "def legacyTotal(items):")
    out = _review(_modified("acme/legacy.py", LEGACY, head))

    assert _rules(out.findings) == [("naming.case.function", 8)]
    assert out.findings[0].suggestion == "legacy_total"
    assert sorted(f.rule for f in out.preexisting) == [
        "documentation.docstring.function",
        "typing.annotations.function",
    ]


def test_an_old_camel_case_name_moved_or_rebound_is_not_new_but_a_renamed_one_is() -> None:
    camel = LEGACY.replace("def legacy_total(items):", "def legacyTotal(items):")
    model = _model({"acme/legacy.py": camel})
    moved = camel.replace(
        "def format_label", "def legacyTotal2(items):\n    return legacyTotal(items)\n\n\ndef format_label"
    )
    moved = moved.replace("def legacyTotal(items):\n    total = 0", "def legacyTotal(items):\n    total = 0 + 0")
    out = _review(_modified("acme/legacy.py", camel, moved), model=model)
    assert [f.anchor for f in out.findings if f.rule == "naming.case.function"] == ["legacyTotal2"]
    assert "naming.case.function" not in {f.rule for f in out.preexisting}  # line 9 is not the name's line

    renamed = camel.replace("def legacyTotal(items):", "def legacySum(items):")
    out = _review(_modified("acme/legacy.py", camel, renamed), model=model)
    assert [(f.rule, f.anchor) for f in out.findings] == [("naming.case.function", "legacySum")]
    assert sorted(f.rule for f in out.preexisting) == [
        "documentation.docstring.function",
        "typing.annotations.function",
    ]


def test_a_second_print_in_a_function_that_had_one_is_new_the_old_one_is_not() -> None:
    base = LEGACY.replace("    total = 0\n", "    total = 0\n    print(total)\n")
    model = _model()
    head = base.replace("    print(total)\n", "    print( total )\n").replace(
        "    return total\n", "    print('done', total)\n    return total\n"
    )
    out = _review(_modified("acme/legacy.py", base, head), model=model)
    prints = [f for f in out.findings + out.preexisting if f.rule.startswith("idioms.")]
    assert [(f.start_line, f.preexisting) for f in sorted(prints, key=lambda f: f.start_line)] == [
        (10, True),
        (13, False),
    ]


def test_a_long_line_edited_but_still_long_is_old_a_new_long_line_is_new() -> None:
    long_call = "    return " + " + ".join(f"len(items[{i}])" for i in range(12)) + "\n"
    base = LEGACY.replace("    return total\n", long_call)
    head = (
        base.replace("len(items[0])", "len(items[0][:])")
        + "\n\n"
        + (
            'def format_many(names: list[str]) -> str:\n    """Labels."""\n'
            + long_call.replace("len(items", "len(names")
        )
    )
    out = _review(_modified("acme/legacy.py", base, head))

    lengths = sorted(
        (f.start_line, f.preexisting) for f in out.findings + out.preexisting if f.rule == "formatting.line_length"
    )
    assert lengths == [(12, True), (len(head.split("\n")) - 1, False)]


def test_moved_findings_keep_their_fingerprint_and_findings_are_deterministic() -> None:
    head = "\n\n" + LEGACY.replace("def legacy_total(items):", "def legacy_total(items: list[int]) -> int:")
    base_target = Target("acme/legacy.py", "modified", LEGACY.encode(), set(range(1, 40)))
    moved_target = Target("acme/legacy.py", "modified", head.encode(), set(range(1, 40)))
    before = {f.rule: f.fingerprint for f in _review(base_target).findings}
    after = {f.rule: f.fingerprint for f in _review(moved_target).findings}

    assert before["documentation.docstring.function"] == after["documentation.docstring.function"]
    again = _review(_modified("acme/legacy.py", LEGACY, textwrap.dedent(head)))
    assert again.preexisting == _review(_modified("acme/legacy.py", LEGACY, textwrap.dedent(head))).preexisting


def test_a_library_the_change_declares_in_the_manifest_it_edits_is_not_an_undeclared_dependency() -> None:
    # nox's "include time on longer runs": sessions.py imports humanize, which the same change adds
    # to pyproject.toml's dependencies; anyio adds winloop to its test extra beside the import.
    before = '[project]\nname = "nox"\ndependencies = [\n  "colorlog>=2.6.1",\n]\n'
    after = before.replace('  "colorlog>=2.6.1",\n', '  "colorlog>=2.6.1",\n  "humanize>=4",\n')
    files = {f"nox/kind{i}.py": _module(i) for i in range(40)}
    model = learn(
        resolve_imports([extract(p, t.encode()) for p, t in files.items()]),
        tool_configs={"pyproject.toml": before},
        thresholds=HELD_RAISED,
    )
    base = _module(3)
    head = base.replace("import logging\n", "import logging\n\nimport humanize\nimport plumbum\n")
    code = _modified("nox/kind3.py", base, head)
    manifest = Target("pyproject.toml", "modified", after.encode(), {5}, base=before.encode())

    assert _rules(_review(code, model=model).findings) == [
        ("dependencies.library.new", 7),
        ("dependencies.library.new", 8),
    ]
    # The manifest edit declares humanize; plumbum, declared nowhere, is still a new dependency.
    assert _rules(_review(code, manifest, model=model).findings) == [("dependencies.library.new", 8)]


def test_a_module_the_change_adds_is_the_repositorys_not_a_new_library() -> None:
    # filelock's fork tests import tests/fork_helpers.py, which the same change adds beside them.
    files = {f"nox/kind{i}.py": _module(i) for i in range(40)}
    model = learn(resolve_imports([extract(p, t.encode()) for p, t in files.items()]), thresholds=HELD_RAISED)
    test = "from fork_helpers import fork_process\nimport plumbum\n\n\ndef test_fork():\n    fork_process()\n"
    helper = '"""Fork helpers."""\n\n\ndef fork_process() -> int:\n    """Fork."""\n    return 0\n'
    new_test = Target("tests/test_fork.py", "added", test.encode(), set(range(1, 7)))
    new_helper = Target("tests/fork_helpers.py", "added", helper.encode(), set(range(1, 7)))

    assert _rules(_review(new_test, model=model).findings) == [
        ("dependencies.library.new", 1),
        ("dependencies.library.new", 2),
    ]
    assert _rules(_review(new_test, new_helper, model=model).findings) == [("dependencies.library.new", 2)]


def test_a_change_that_edits_its_tool_configuration_is_not_held_to_the_settings_it_replaces() -> None:
    # tenacity's "enable black": black's 88-character output, and the tox.ini it edits ignores E501.
    before = "[flake8]\nignore = W503\n"
    after = "[flake8]\nignore = W503,E501\n"
    files = {f"acme/kind{i}.py": _module(i) for i in range(30)}
    model = learn(resolve_imports([extract(p, t.encode()) for p, t in files.items()]), tool_configs={"tox.ini": before})
    base = _module(3)
    head = base + "\n\nLIMITS = {'connect': 10, 'read': 30, 'write': 30, 'pool': 5, 'retries': 3, 'total': 9}\n"
    assert len(head.rstrip("\n").rsplit("\n", 1)[1]) > 79
    code = _modified("acme/kind3.py", base, head)
    config = Target("tox.ini", "modified", after.encode(), {2}, base=before.encode())

    # flake8's 79 binds every line, declared at the parent: strict, as long as tox.ini is untouched.
    assert [f.rule for f in _review(code, model=model).findings] == ["formatting.line_length"]
    assert _review(code, config, model=model).findings == []
    # A tox.ini edit that sets nothing the rules read (a new env) leaves them judged.
    unrelated = Target(
        "tox.ini", "modified", (before + "[testenv]\ndeps = pytest\n").encode(), {3, 4}, base=before.encode()
    )
    assert [f.rule for f in _review(code, unrelated, model=model).findings] == ["formatting.line_length"]


BLACK_HOOKS = """\
repos:
  - repo: https://github.com/psf/black
    rev: 23.11.0
    hooks:
      - id: black
  - repo: https://github.com/pre-commit/mirrors-mypy
    rev: v1.7.1
    hooks:
      - id: mypy
"""
RUFF_HOOKS = """\
repos:
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.1.14
    hooks:
      - id: ruff
      - id: ruff-format
  - repo: https://github.com/pre-commit/mirrors-mypy
    rev: v1.8.0
    hooks:
      - id: mypy
"""


def test_a_change_that_swaps_its_hooks_is_not_held_to_the_linter_it_leaves_behind() -> None:
    # pytest-mock's "use ruff": the change replaces black's hook by ruff's and reformats the code
    # with ruff format; the [flake8] section in tox.ini (88) now binds nothing.
    tox = "[tox]\nenvlist = py312\n\n[flake8]\nmax-line-length = 88\n"
    files = {f"acme/kind{i}.py": _module(i) for i in range(30)}
    facts = resolve_imports([extract(p, t.encode()) for p, t in files.items()])
    model = learn(facts, tool_configs={"tox.ini": tox, ".pre-commit-config.yaml": BLACK_HOOKS})
    base = _module(3)
    head = base + "\n\nPATCHER = make_patcher(registry, module)  # type: acme.kind3.Patcher, see docs/patching.rst\n"
    assert len(head.rstrip("\n").rsplit("\n", 1)[1]) > 88
    code = _modified("acme/kind3.py", base, head)
    hooks = Target(".pre-commit-config.yaml", "modified", RUFF_HOOKS.encode(), {4, 5, 6}, base=BLACK_HOOKS.encode())
    bumped = BLACK_HOOKS.replace("23.11.0", "24.1.0")
    bump = Target(".pre-commit-config.yaml", "modified", bumped.encode(), {3}, base=BLACK_HOOKS.encode())

    assert [f.rule for f in _review(code, model=model).findings] == ["formatting.line_length"]
    assert _review(code, hooks, model=model).findings == []
    # A new revision of the same hooks moves no limit.
    assert [f.rule for f in _review(code, bump, model=model).findings] == ["formatting.line_length"]


def _js_module(i: int, extra: str = "") -> str:
    return (
        "'use strict'\n\n"
        "const debug = require('debug')('app')\n"
        "const vary = require('vary')\n\n"
        f"function handle{i} (res, field) {{\n"
        "  debug('vary %s', field)\n"
        "  vary(res, field)\n"
        "}\n\n"
        f"module.exports = handle{i}\n" + extra
    )


_PACKAGE = '{"name": "acme", "dependencies": {"debug": "^4.0.0", "vary": "^1.1.2"%s}}\n'


def _js_model() -> ConventionModel:
    files = {f"lib/handler{i}.js": _js_module(i) for i in range(40)}
    facts = resolve_imports([extract(p, t.encode()) for p, t in files.items()])
    return learn(facts, tool_configs={"package.json": _PACKAGE % ""}, thresholds=HELD_RAISED)


def test_a_library_the_change_adds_to_its_manifest_is_a_declared_dependency() -> None:
    # express's "Use mime-types for file to content type mapping": package.json gains the library
    # that lib/response.js now requires; koa once required `depd` without declaring it.
    model = _js_model()
    base = _js_module(3)
    head = _js_module(3, "\nconst encodeUrl = require('encodeurl')\nmodule.exports.encode = encodeUrl\n")
    code = _modified("lib/handler3.js", base, head)
    manifest = Target(
        "package.json",
        "modified",
        (_PACKAGE % ', "encodeurl": "^1.0.2"').encode(),
        {1},
        base=(_PACKAGE % "").encode(),
    )

    assert [f.rule for f in _review(code, model=model).findings] == ["dependencies.library.new"]
    assert _review(code, manifest, model=model).findings == []
    # A manifest edit that declares something else leaves the undeclared import reported.
    once = (_PACKAGE % ', "once": "1.4.0"').encode()
    other = Target("package.json", "modified", once, {1}, base=(_PACKAGE % "").encode())
    assert [f.rule for f in _review(code, other, model=model).findings] == ["dependencies.library.new"]


def test_a_change_that_converts_its_tests_to_another_runner_is_not_told_the_old_one() -> None:
    # pino's "Convert tests to node:test": each test file stops requiring tap and requires
    # node:test; the review has each file's base, as analyze_pr does.
    def tap_test(i: int) -> str:
        return (
            "'use strict'\n\nconst { test } = require('tap')\n\n"
            f"test('case {i}', async (t) => {{\n  t.ok(true)\n}})\n"
        )

    def node_test(i: int) -> str:
        return (
            "'use strict'\n\nconst test = require('node:test')\nconst assert = require('node:assert')\n\n"
            f"test('case {i}', async () => {{\n  assert.ok(true)\n}})\n"
        )

    files = {f"test/case{i}.test.js": tap_test(i) for i in range(30)}
    model = learn(resolve_imports([extract(p, t.encode()) for p, t in files.items()]), thresholds=HELD_RAISED)
    converted = _modified("test/case4.test.js", tap_test(4), node_test(4))
    new_file = Target("test/case99.test.js", "added", node_test(99).encode(), None)

    assert _review(converted, model=model).findings == []
    # A new test file written for the other runner, in a change that converts nothing, is reported.
    assert [f.rule for f in _review(new_file, model=model).findings] == ["dependencies.library.testing"]


def test_a_change_that_adds_an_editorconfig_section_is_not_held_to_the_settings_it_replaces() -> None:
    # nanoid's "Improve prebuild control": nanoid.js, the minified prebuild a script writes, loses
    # its final newline, and the same change's .editorconfig says so for that file.
    before = "root = true\n\n[*]\nindent_style = space\nindent_size = 2\ninsert_final_newline = true\n"
    after = before + "\n[nanoid.js]\ninsert_final_newline = false\n"
    files = {f"lib/part{i}.js": f"export const part{i} = (size) => size + {i}\n" for i in range(30)}
    model = learn(
        resolve_imports([extract(p, t.encode()) for p, t in files.items()]),
        tool_configs={".editorconfig": before},
        thresholds=HELD_RAISED,
    )
    base = "export let nanoid = (e = 21) => e\n"
    head = 'let a="useandom";export let nanoid=(e=21)=>{let t="";for(;e--;)t+=a[e];return t};'
    code = Target("nanoid.js", "modified", head.encode(), {1}, base=base.encode())
    config = Target(".editorconfig", "modified", after.encode(), {7, 8, 9}, base=before.encode())

    assert "formatting.final_newline" in [f.rule for f in _review(code, model=model).findings]
    assert "formatting.final_newline" not in [f.rule for f in _review(code, config, model=model).findings]
    # An .editorconfig edit that declares nothing our rules read leaves them judged.
    charset = Target(".editorconfig", "modified", (before + "charset = utf-8\n").encode(), {7}, base=before.encode())
    assert "formatting.final_newline" in [f.rule for f in _review(code, charset, model=model).findings]


# dateutil's tz.py before its PEP 8 cleanup: a bare `except:` in a repository where a few modules
# still have one (so that rule is not strict) and none catches `Exception`.
TZ_BASE = '''\
"""Time zones."""

from __future__ import annotations


def datetime_ambiguous(tz, dt):
    """Whether ``dt`` is ambiguous in ``tz``."""
    if tz is None:
        raise ValueError("no time zone")
    try:
        return tz.is_ambiguous(dt)
    except:
        pass
    return False
'''


def _compat(i: int) -> str:
    return (
        f'"""Compat {i}."""\n\n\ndef probe_{i}(value: str) -> None:\n'
        '    """Probe."""\n    try:\n        bool(value)\n    except:\n        pass\n'
    )


def test_a_bare_except_narrowed_to_except_exception_is_not_a_new_broad_catch() -> None:
    # dateutil cd27628 narrowed `except: pass` to `except Exception: pass`, where neither bare nor
    # silent handlers are strict (a few modules keep them) but `except Exception` is.
    model = _model({f"acme/compat{i}.py": _compat(i) for i in range(6)} | {"acme/tz.py": TZ_BASE})
    narrowed = TZ_BASE.replace("    except:\n", "    except Exception:\n")
    assert _review(Target("acme/tz.py", "modified", narrowed.encode(), {12}), model=model).findings != []
    out = _review(_modified("acme/tz.py", TZ_BASE, narrowed), model=model)
    assert out.findings == []
    assert [(f.rule, f.start_line) for f in out.preexisting] == [("idioms.broad_except", 12)]

    # A broad catch the change writes beside the narrowed one is its own.
    added = narrowed.replace(
        "    return False\n",
        "    try:\n        return dt.fold\n    except Exception:\n        pass\n    return False\n",
    )
    out = _review(_modified("acme/tz.py", TZ_BASE, added), model=model)
    assert [(f.rule, f.start_line) for f in out.findings] == [("idioms.broad_except", 16)]
    assert [(f.rule, f.start_line) for f in out.preexisting] == [("idioms.broad_except", 12)]


# babel's frontend.py: parse_mapping, undocumented in its types, with a doctest in its docstring.
FRONTEND_BASE = '''\
"""Frontends."""

from __future__ import annotations

from configparser import RawConfigParser


def parse_mapping(fileobj, filename=None):
    """Parse an extraction method mapping from a file-like object.

    >>> method_map, options_map = parse_mapping(buf)
    >>> len(method_map)
    4
    """
    extractors = {}
    method_map = []
    options_map = {}

    parser = RawConfigParser()
    parser.read_file(fileobj, filename)  # in file order

    for section in parser.sections():
        if section == 'extractors':
            extractors = dict(parser.items(section))
        else:
            method, pattern = (part.strip() for part in section.split(':', 1))
            method_map.append((pattern, method))
            options_map[pattern] = dict(parser.items(section))
    return method_map, options_map
'''


def test_a_function_renamed_behind_a_deprecated_wrapper_keeps_its_history() -> None:
    # babel d26a669: parse_mapping renamed parse_mapping_cfg, its doctest moved to the tests, the
    # old name kept as a wrapper that warns: the unannotated signature is the old function's.
    body = FRONTEND_BASE[FRONTEND_BASE.index("    extractors = {}") :]
    head = FRONTEND_BASE[: FRONTEND_BASE.index("def parse_mapping")] + (
        "def parse_mapping(fileobj, filename=None):\n"
        "    warnings.warn('use parse_mapping_cfg', DeprecationWarning, stacklevel=2)\n"
        "    return parse_mapping_cfg(fileobj, filename)\n\n\n"
        "def parse_mapping_cfg(fileobj, filename=None):\n"
        '    """Parse an extraction method mapping from a file-like object."""\n' + body
    )
    out = _review(_modified("acme/frontend.py", FRONTEND_BASE, head))
    assert [f for f in out.findings if f.rule.startswith("typing.")] == []
    assert ("typing.annotations.function", "parse_mapping_cfg") in {(f.rule, f.symbol) for f in out.preexisting}

    # A new function whose body is one short line is not vouched for by an old one's.
    short = head + "\n\ndef parse_other(fileobj, filename=None):\n    return parse_mapping_cfg(fileobj, filename)\n"
    out = _review(_modified("acme/frontend.py", FRONTEND_BASE, short))
    assert ("typing.annotations.function", "parse_other") in {(f.rule, f.symbol) for f in out.findings}


def _extension_tests(i: int) -> str:
    """A test module of Python-Markdown's tests/test_syntax/extensions/: single quotes throughout."""
    cases = "".join(
        f"    def test_case_{j}(self):\n"
        f"        self.assertMarkdownRenders('# Hd {j}', '<h1 id=\\'hd-{j}\\'>Hd {j}</h1>', extensions=['toc'])\n\n"
        for j in range(8)
    )
    head = f"'''Extension {i} tests.'''\n\nfrom markdown.test_tools import TestCase\n\n\n"
    return f"{head}class TestExt{i}(TestCase):\n{cases}"


def _legacy_tests(i: int) -> str:
    """An old unittest module at the top of tests/, double-quoted: no quote habit there."""
    cases = "".join(
        f"    def testCase{j}(self):\n"
        f'        md = markdown.Markdown(extensions=["toc"])\n'
        f'        self.assertEqual(md.convert("# Hd {j}"), "<h1>Hd {j}</h1>")\n\n'
        for j in range(8)
    )
    head = f'"""Legacy {i} tests."""\n\nimport unittest\n\nimport markdown\n\n\n'
    return f"{head}class TestLegacy{i}(unittest.TestCase):\n{cases}"


def test_tests_moved_into_a_directory_with_a_quote_habit_keep_their_history() -> None:
    # Python-Markdown e4ab4a6 moved the TOC tests from tests/test_extensions.py (no quote habit at
    # the top of tests/) into tests/test_syntax/extensions/test_toc.py (single quotes); the old
    # `permalink_title="PL"` came along, rewritten into assertMarkdownRenders calls.
    old_toc = (
        _legacy_tests(99)
        .replace("class TestLegacy99", "class TestTOC")
        .replace(
            'extensions=["toc"]',
            'extensions=[markdown.extensions.toc.TocExtension(\n            permalink=True, permalink_title="PL")]',
        )
    )
    files = {f"tests/test_syntax/extensions/test_ext{i}.py": _extension_tests(i) for i in range(8)}
    files |= {f"tests/test_legacy{i}.py": _legacy_tests(i) for i in range(4)}
    files |= {"tests/test_extensions.py": old_toc, "tests/test_syntax/extensions/test_toc.py": _extension_tests(42)}
    model = _model(files)
    toc_head = _extension_tests(42) + (
        "    def test_toc_permalink(self):\n"
        "        self.assertMarkdownRenders(\n"
        "            '# Hd 1',\n"
        "            '<h1 id=\"hd-1\">Hd 1</h1>',\n"
        '            extensions=[TocExtension(permalink=True, permalink_title="PL")]\n'
        "        )\n"
    )
    toc = _modified("tests/test_syntax/extensions/test_toc.py", _extension_tests(42), toc_head)
    left = old_toc[: old_toc.index("    def testCase1")]
    out = _review(toc, _modified("tests/test_extensions.py", old_toc, left), model=model)
    assert out.findings == []
    assert [(f.rule, f.path) for f in out.preexisting] == [
        ("formatting.quotes", "tests/test_syntax/extensions/test_toc.py")
    ]
    # Where it was, the old code was never flagged: only checked as the file it moved into is it.
    everywhere = set(range(1, old_toc.count("\n") + 2))
    assert (
        _review(Target("tests/test_extensions.py", "modified", old_toc.encode(), everywhere), model=model).findings
        == []
    )

    # The same line written by the change, with nothing moved out of another file, is new.
    out = _review(toc, model=model)
    assert [f.rule for f in out.findings] == ["formatting.quotes"]
    # And so is a literal the old file never held, written beside the moved ones.
    written = toc_head + '\n    def test_toc_title(self):\n        self.assertTitle(title="Contents")\n'
    toc = _modified("tests/test_syntax/extensions/test_toc.py", _extension_tests(42), written)
    out = _review(toc, _modified("tests/test_extensions.py", old_toc, left), model=model)
    assert [(f.rule, f.anchor) for f in out.findings] == [("formatting.quotes", "Contents")]
    assert [f.anchor for f in out.preexisting] == ["PL"]


def _single_quoted(i: int) -> str:
    """A module of mistune's src/ before its type-hint pull request: single quotes throughout."""
    lines = "".join(f"    hooks['before_{j}'] = markdown.get('hook_{j}', 'default')\n" for j in range(6))
    head = f"'''Plugin {i}.'''\n\n\ndef plugin_{i}(markdown: 'Markdown') -> None:\n"
    return f"{head}    '''Install.'''\n    hooks = {{}}\n{lines}"


def test_one_change_that_requotes_many_files_says_it_a_few_times_and_counts_the_rest() -> None:
    # mistune 29d3120: a contributor's type-hint pull request requoted every line it touched, in
    # 28 files; three findings a file made it 84. A change gets three of one rule, then a count.
    model = _model({f"acme/plugins/p{i}.py": _single_quoted(i) for i in range(20)})
    targets = []
    for i in range(5):
        base = _single_quoted(i)
        head = base.replace("'", '"').replace('"""', "'''")
        targets.append(_modified(f"acme/plugins/p{i}.py", base, head))
    out = _review(*targets, model=model)
    quotes = [f for f in out.findings if f.rule == "formatting.quotes"]
    total = 7 * len(targets)  # the signature and six hook lines of each file
    assert [f.path for f in quotes] == ["acme/plugins/p0.py"] * 3
    assert [f.more for f in quotes] == [0, 0, total - 3]
    assert quotes[-1].message.endswith(f"({total - 3} more in this change)")
    # Within one file the cap reads the same, and one file alone is a change of one file.
    alone = _review(targets[1], model=model).findings
    assert [f.more for f in alone if f.rule == "formatting.quotes"] == [0, 0, 4]


def test_a_package_the_change_adds_has_no_habits_of_the_root_yet() -> None:
    # immer's perf-testing/ arrived with its package.json and its scripts in one change: they are
    # a package of their own from that change on, not the root library's files.
    files = {f"lib/handler{i}.js": _js_module(i).replace(f"handle{i}", f"handleField{i}") for i in range(40)}
    facts = resolve_imports([extract(p, t.encode()) for p, t in files.items()])
    model = learn(facts, tool_configs={"package.json": _PACKAGE % ""}, thresholds=HELD_RAISED)
    script = "'use strict'\n\nfunction run_scenario (n) {\n  return n\n}\n\nmodule.exports = run_scenario\n"
    code = Target("perf-testing/profile.js", "added", script.encode(), set(range(1, 8)))
    manifest = Target(
        "perf-testing/package.json",
        "added",
        b'{"name": "acme-perf-testing", "private": true, "dependencies": {"mitata": "^1.0.34"}}\n',
        {1},
    )
    assert _rules(_review(code, model=model).findings) == [("naming.case.function", 3)]
    assert _review(code, manifest, model=model).findings == []
    # A package.json that only sets the directory's module type makes no package.
    marker = Target("perf-testing/package.json", "added", b'{"type": "module"}\n', {1})
    assert _rules(_review(code, marker, model=model).findings) == [("naming.case.function", 3)]


# A test module beside the library's code, in a repository whose tests live under tests/.
_BESIDE = "def test_render():\n    assert True\n\n\ndef test_escape():\n    assert True\n"
_LICENSE = "#\n# This file is part of acme released under the MIT license.\n# See the NOTICE for more information.\n\n"


def _placement_model() -> ConventionModel:
    test = "def test_send_{0}():\n    assert True\n"
    return _model({f"tests/test_client{i}.py": test.format(i) for i in range(40)} | {"acme/test_render.py": _BESIDE})


def _placement(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.path, f.rule) for f in findings if f.rule == "structure.tests.placement"]


def test_a_header_prepended_to_a_misplaced_test_leaves_its_placement_old() -> None:
    # gunicorn 95b7ffe ("prepare release") prepended a license header to every Python file,
    # example tests beside their app included: line 1 changed, the file's place did not.
    model = _placement_model()
    out = _review(_modified("acme/test_render.py", _BESIDE, _LICENSE + _BESIDE), model=model)
    assert _placement(out.findings) == []
    assert _placement(out.preexisting) == [("acme/test_render.py", "structure.tests.placement")]
    # A change that places a test there is still told: a new file, or one moved in from tests/.
    added = Target("acme/test_escape.py", "added", _BESIDE.encode(), None)
    assert _placement(_review(added, model=model).findings) == [("acme/test_escape.py", "structure.tests.placement")]
    moved = _modified("acme/test_client3.py", _BESIDE, _LICENSE + _BESIDE, old_path="tests/test_client3.py")
    assert _placement(_review(moved, model=model).findings) == [("acme/test_client3.py", "structure.tests.placement")]
    # So is one that moves a misplaced test to another misplaced path: the new path is the change's.
    moved = _modified("acme/render/test_render.py", _BESIDE, _LICENSE + _BESIDE, old_path="acme/test_render.py")
    assert _placement(_review(moved, model=model).findings) == [
        ("acme/render/test_render.py", "structure.tests.placement")
    ]


def test_a_library_the_changes_manifests_declare_is_no_new_dependency() -> None:
    # Python-Markdown adds importlib-metadata (for old interpreters) to setup.py's install_requires
    # in the commit whose util.py imports it; trio's commit adds a local pre-commit hook whose
    # environment (pyyaml) runs the new script importing yaml; gunicorn's adds docker test apps each
    # with the requirements.txt its container installs. An undeclared import is still new.
    module = "import os\n\n\ndef where(path):\n    return os.path.join(path, 'x')\n"
    files = [extract(f"markdown/m{i}.py", module.encode()) for i in range(30)]
    model = learn(resolve_imports(files), thresholds=HELD_RAISED)
    setup = "from setuptools import setup\n\nsetup(name='m', install_requires=[%s])\n"
    manifest = _modified("setup.py", setup % "", setup % "\"importlib-metadata>=4.4;python_version<'3.10'\"")
    util = _modified("markdown/m3.py", module, module + "\nimport importlib_metadata\nimport plumbum\n")
    found = [f.anchor for f in _review(util, model=model).findings if f.rule == "dependencies.library.new"]
    assert found == ["importlib_metadata", "plumbum"]
    found = [f.anchor for f in _review(util, manifest, model=model).findings if f.rule == "dependencies.library.new"]
    assert found == ["plumbum"]

    hook = (
        "repos:\n  - repo: local\n    hooks:\n      - id: sync\n        name: sync\n        language: python\n"
        "        entry: python markdown/_tools/sync.py\n        additional_dependencies: [pyyaml]\n"
    )
    script = "from yaml import load\n\n\ndef read(text):\n    return load(text)\n"
    sync = Target("markdown/_tools/sync.py", "added", script.encode(), set(range(1, 6)))
    assert [f.anchor for f in _review(sync, model=model).findings] == ["yaml"]
    config = Target(".pre-commit-config.yaml", "added", hook.encode(), set(range(1, 9)))
    assert _review(sync, config, model=model).findings == []

    app = "import blacksheep\nimport channels\n\n\nAPP = blacksheep.Application(channels)\n"
    app_target = Target("tests/docker/compat/blacksheep_app/app.py", "added", app.encode(), set(range(1, 6)))
    requirements = Target("tests/docker/compat/blacksheep_app/requirements.txt", "added", b"blacksheep>=2.0\n", {1})
    found = [f.anchor for f in _review(app_target, requirements, model=model).findings]
    assert found == ["channels"]

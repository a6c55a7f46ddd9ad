"""Inline suppressions: other tools' pragmas and `# codereview: ignore[...]` silence our findings too."""

from __future__ import annotations

from functools import cache

from services.analyzer.engine import ConventionModel, check, learn
from services.source.extract import extract
from services.source.facts import FileFacts
from tests.analyzer.engine_factories import HELD_RAISED
from tests.analyzer.service_corpus import NOUNS, PACKAGES, module_source


def facts_of(path: str, text: str) -> FileFacts:
    return extract(path, text.encode())


@cache
def python_model() -> ConventionModel:
    """45 real modules: snake_case, documented, annotated, 4-space indents, lines within 79."""
    files = [
        facts_of(f"app/{package}/{noun}.py", module_source(package, noun, p * 20 + n))
        for p, package in enumerate(PACKAGES)
        for n, noun in enumerate(NOUNS)
    ]
    return learn(files, thresholds=HELD_RAISED)  # line length and vocabulary as a repository raising them


def found(path: str, text: str) -> list[tuple[str, int]]:
    return sorted((f.rule, f.start_line) for f in check(facts_of(path, text), text, python_model()))


MODULE = '''"""Ledger exports."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def exportLedger(rows: list[str]) -> int:{pragma_def}
    """Write the rows out."""
    total = 0
    for row in rows:
        total += len(row)
    log.info("exported %d rows, a fairly long message that runs past the limit", total){pragma_long}
    return total
'''


def test_unsuppressed_module_has_the_two_findings_the_pragmas_target() -> None:
    text = MODULE.format(pragma_def="", pragma_long="")

    assert found("app/reports/ledger_export.py", text) == [
        ("formatting.line_length", 15),
        ("naming.case.function", 10),
    ]


def test_noqa_with_the_matching_code_silences_only_that_rule() -> None:
    text = MODULE.format(pragma_def="  # noqa: N802", pragma_long="  # noqa: E501")

    assert found("app/reports/ledger_export.py", text) == []


def test_noqa_with_an_unrelated_code_silences_nothing_of_ours() -> None:
    text = MODULE.format(pragma_def="  # noqa: ARG001", pragma_long="")

    assert ("naming.case.function", 10) in found("app/reports/ledger_export.py", text)


def test_bare_noqa_and_pylint_disable_silence_their_lines() -> None:
    text = MODULE.format(pragma_def="  # pylint: disable=invalid-name", pragma_long="  # noqa")

    assert found("app/reports/ledger_export.py", text) == []


def test_codereview_ignore_names_rules_or_prefixes() -> None:
    own = MODULE.format(pragma_def="  # codereview: ignore[naming]", pragma_long="  # codereview: ignore")
    other_rule = MODULE.format(pragma_def="  # codereview: ignore[formatting.line_length]", pragma_long="")

    assert found("app/reports/ledger_export.py", own) == []
    assert ("naming.case.function", 10) in found("app/reports/ledger_export.py", other_rule)


def test_codereview_ignore_next_line_covers_the_following_code_line() -> None:
    text = MODULE.format(pragma_def="", pragma_long="").replace(
        "\n\ndef exportLedger", "\n\n# codereview: ignore-next-line[naming.case.function]\ndef exportLedger"
    )

    assert [r for r, _ in found("app/reports/ledger_export.py", text)] == ["formatting.line_length"]


def test_a_line_long_only_because_of_its_pragma_is_not_long() -> None:
    # 77 characters of code, then a mypy pragma the type checker needs on this very line.
    line = '    names = sorted(store.items, key=lambda key: store.items[key]["name"])'
    text = MODULE.format(pragma_def="", pragma_long="").replace(
        "    return total\n", f"{line}  # type: ignore[index]\n    return total\n"
    )

    assert len(line) <= 79 < len(line + "  # type: ignore[index]")
    assert [r for r, _ in found("app/reports/ledger_export.py", text)] == [
        "formatting.line_length",
        "naming.case.function",
    ]  # the log line (15) is still long; the pragma line (16) is not


def test_fmt_off_region_silences_layout_but_not_naming() -> None:
    text = MODULE.format(pragma_def="", pragma_long="").replace(
        "def exportLedger", "# fmt: off\nTABLE = [\n  1, 0,\n  0, 1,\n]\n# fmt: on\n\n\ndef exportLedger"
    )

    assert [r for r, _ in found("app/reports/ledger_export.py", text)] == [
        "formatting.line_length",
        "naming.case.function",
    ]


def test_pragma_text_inside_a_string_is_not_a_pragma() -> None:
    text = MODULE.format(pragma_def="", pragma_long="").replace('"exported %d rows', '"# noqa exported %d rows')

    assert ("formatting.line_length", 15) in found("app/reports/ledger_export.py", text)


JS_MODULE = """import { parse } from "./parse.js";

export function loadRows(source) {
  const rows = parse(source);
  console.log(rows.length);%s
  return rows;
}
"""


def _js_model() -> ConventionModel:
    files = []
    for i in range(20):
        body = (
            f'import {{ helper{i} }} from "./helper{i}.js";\n\n'
            f"export function readItem{i}(value) {{\n"
            f"  const item = helper{i}(value);\n"
            f"  if (!item) {{\n    return null;\n  }}\n"
            f"  return item;\n}}\n"
        )
        files.append(facts_of(f"src/item{i}.js", body))
    return learn(files, thresholds=HELD_RAISED)  # line length and vocabulary as a repository raising them


def test_eslint_disable_line_and_next_line() -> None:
    model = _js_model()

    def rules(text: str) -> list[str]:
        return [f.rule for f in check(facts_of("src/rows.js", text), text, model)]

    plain = JS_MODULE % ""
    same_line = JS_MODULE % " // eslint-disable-line no-console"
    next_line = plain.replace("  console.log", "  // eslint-disable-next-line no-console\n  console.log")
    unrelated = JS_MODULE % " // eslint-disable-line max-len"

    assert rules(plain) == ["idioms.print"]
    assert rules(same_line) == []
    assert rules(next_line) == []
    assert rules(unrelated) == ["idioms.print"]

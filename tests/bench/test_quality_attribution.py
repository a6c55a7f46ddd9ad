"""bench.quality attribution: which findings of a planted variant the plant caused."""

from __future__ import annotations

from bench.quality.engines import F
from bench.quality.evaluate import _caused

_MESSAGE = "uses a bare `except:`; 56 of 58 python files (97%) never use a bare `except:`"


def _f(line: int, fingerprint: str, message: str = _MESSAGE) -> F:
    return F("idioms.bare_except", "idioms", "strict", line, line, fingerprint, message, "", 0.97, 58, "t.py")


def test_a_second_bare_except_in_another_function_is_caused_by_the_plant() -> None:
    # boltons' tests/test_tbutils.py has a bare except at line 29; the plant makes one at line 80.
    base = [_f(29, "fp-func1")]
    found = [_f(29, "fp-func1"), _f(80, "fp-func2")]
    assert [f.start_line for f in _caused(base, {"fp-func1"}, found, renames=False)] == [80]


def test_after_a_rename_a_finding_with_an_old_rule_and_message_is_old() -> None:
    # Renaming the enclosing function changes the old finding's fingerprint, not what it says.
    base = [_f(29, "fp-load_user")]
    found = [_f(29, "fp-loadUser")]
    assert _caused(base, {"fp-load_user"}, found, renames=True) == []

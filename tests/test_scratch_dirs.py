"""Scratch directories of a test session (embedded servers' data, a running system's logs) are
removed when the session passes and kept for a post-mortem when it fails: a green `make test`
leaves no ``cr-*`` folder in the temp directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT

pytest_plugins = ["pytester"]

INNER = """
from pathlib import Path

from tests.conftest import scratch_dir


def test_uses_a_scratch_dir() -> None:
    path = scratch_dir("cr-scratch-probe-")
    (path / "data").write_text("x")
    Path("{record}").write_text(str(path))
    assert {passes}
"""


@pytest.mark.parametrize("passes", [True, False])
def test_scratch_dirs_go_with_a_green_session_only(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, passes: bool
) -> None:
    record = pytester.path / "scratch.txt"
    pytester.makeconftest("from tests.conftest import pytest_sessionfinish, pytest_terminal_summary  # noqa: F401\n")
    pytester.makepyfile(test_inner=INNER.format(record=record, passes=passes))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    # In a subprocess: this session's own scratch list must not be the inner one's.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=int(passes), failed=int(not passes))
    scratch = Path(record.read_text())
    assert scratch.name.startswith("cr-scratch-probe-")
    assert scratch.exists() is not passes
    if not passes:
        assert f"kept for the post-mortem: {scratch}" in result.stdout.str()
        scratch.joinpath("data").unlink()
        scratch.rmdir()

"""The extractor over the real Python standard library: no exceptions, plausible totals."""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import pytest

from services.source.extract import extract
from services.source.imports import resolve_imports

STDLIB = Path(sys.base_prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"


@pytest.mark.skipif(not (STDLIB / "os.py").exists(), reason="no standard library sources")
def test_stdlib_top_level_modules() -> None:
    paths = sorted(STDLIB.glob("*.py"))
    assert len(paths) > 150
    facts = [extract(path.name, path.read_bytes()) for path in paths]
    skipped = collections.Counter(f.skipped for f in facts if f.skipped)
    assert sum(skipped.values()) <= 5, skipped  # a few generated/latin-1 files at most
    parsed = [f for f in facts if not f.skipped]
    kinds = collections.Counter(s.kind for f in parsed for s in f.symbols)
    assert kinds["module"] == len(parsed)
    assert kinds["function"] > 1500
    assert kinds["method"] > 3000
    assert kinds["class"] > 500
    assert kinds["constant"] > 500
    by_path = {f.path: f for f in parsed}
    os_names = {s.name for s in by_path["os.py"].symbols}
    assert {"makedirs", "walk", "fspath", "PathLike"} <= os_names
    assert by_path["os.py"].formatting.indent_width == 4  # type: ignore[union-attr]
    documented = sum(s.has_docstring for f in parsed for s in f.symbols if s.kind in ("function", "method"))
    assert documented > 2000
    roles = collections.Counter(i.role for f in parsed for i in f.identifiers)
    assert roles["parameter"] > 8000
    assert roles["variable"] > 8000
    assert roles["attribute"] > 1000
    groups = collections.Counter(imp.group for f in parsed for imp in f.imports)
    assert groups["stdlib"] > 1000
    statements = collections.Counter(s.kind for f in parsed for s in f.statements)
    assert statements["bare_except"] > 10
    assert statements["broad_except"] > 30  # handlers that re-raise are not counted
    # Seen as one repository, its modules import each other: os.py shadows the stdlib's os.
    resolved = {f.path: f for f in resolve_imports(facts)}
    assert any(imp.resolved_path == "os.py" for imp in resolved["shutil.py"].imports)

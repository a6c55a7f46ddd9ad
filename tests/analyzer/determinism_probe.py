"""Everything the engine says about a corpus of real files, as text (run as a module by the
determinism test, once per hash seed): each file's facts, the model learned from them, and
every finding of every file at both levels."""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

from services.analyzer.engine import CheckPrefs, check, encode_model, learn
from services.source.extract import extract
from services.source.imports import resolve_imports

SUFFIXES = frozenset({".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rs", ".java", ".rb", ".c", ".h"})


def corpus(root: Path, limit: int) -> list[Path]:
    """The first ``limit`` source files under ``root``, in path order."""
    return sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file())[:limit]


def report(root: Path, limit: int) -> str:
    data = {str(p.relative_to(root)): p.read_bytes() for p in corpus(root, limit)}
    facts = resolve_imports([extract(path, content) for path, content in data.items()])
    lines = [msgspec.json.encode(f).decode() for f in facts]
    model = learn(facts, repository="probe", commit="0" * 40)
    lines.append(encode_model(model).hex())
    for f in facts:
        text = data[f.path].decode("utf-8", "replace")
        for level in ("strict", "loose"):
            lines.extend(msgspec.json.encode(x).decode() for x in check(f, text, model, prefs=CheckPrefs(level=level)))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(report(Path(sys.argv[1]), int(sys.argv[2])))

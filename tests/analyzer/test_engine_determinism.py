"""Same input, same output: facts, model and findings of real files are byte-identical across
parses, processes and hash seeds (a dismissal sticks only if a finding keeps its id and line)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from services.source.extract import extract
from tests.analyzer.determinism_probe import corpus, report

ROOT = Path(__file__).resolve().parents[2]
STDLIB = Path(os.__file__).parent
# The first 600 files of the standard library in path order (packages such as asyncio, email,
# concurrent, ctypes and their tests): about 5 s per process.
LIMIT = 600


def _probe(seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(
        [sys.executable, "-m", "tests.analyzer.determinism_probe", str(STDLIB), str(LIMIT)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return done.stdout


def _first_difference(a: str, b: str) -> str:
    for index, (x, y) in enumerate(zip(a.splitlines(), b.splitlines(), strict=False)):
        if x != y:
            return f"line {index}:\n{x[:400]}\n{y[:400]}"
    return "lengths differ"


@pytest.mark.skipif(len(corpus(STDLIB, 200)) < 200, reason="no standard library sources")
def test_real_files_give_identical_output_in_processes_with_different_hash_seeds() -> None:
    one, two = _probe("1"), _probe("2")
    assert one.count("\n") > LIMIT  # facts of every file, the model and the findings
    assert '"rule":' in one  # findings were made, so their ids and lines are compared too
    assert one == two, _first_difference(one, two)
    assert report(STDLIB, LIMIT) == one, "this process disagrees with the probes"


@pytest.mark.skipif(len(corpus(STDLIB, 200)) < 200, reason="no standard library sources")
def test_parsing_the_same_file_again_gives_the_same_facts() -> None:
    # Each parse builds a new tree; the extractor once walked its captures in an order that
    # changed from tree to tree and kept whichever binding of a name came first.
    for path in corpus(STDLIB, 200)[::10]:
        data = path.read_bytes()
        assert extract(path.name, data) == extract(path.name, data), path

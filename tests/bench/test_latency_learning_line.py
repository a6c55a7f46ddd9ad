"""bench.latency reads each relearn from the analyzer's log line (pure, no services)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.latency.__main__ import learning_line, learning_run


def test_the_relearn_log_line_gives_the_facts_and_learners_counts_and_the_timings(tmp_path: Path) -> None:
    message = (
        "learned r-1 at c0ffee000000: 1651 files (1 decoded, 1650 kept, 0 removed; 1 observed, 1650 reused,"
        " 0 dropped), 716 conventions; ms facts=823.0 decode=46.5 inputs=106.3 learn=140.2 prepare=177.8"
    )
    log = tmp_path / "analyzer.log"
    log.write_text(json.dumps({"message": "other"}) + "\n" + json.dumps({"message": message}) + "\n")
    run = learning_run(log, "r-1", "c0ffee0000000000000000000000000000000001", timeout=5)
    assert run == {
        "decoded": 1,
        "kept": 1650,
        "removed": 0,
        "observed": 1,
        "reused": 1650,
        "dropped": 0,
        "facts": 823.0,
        "decode": 46.5,
        "inputs": 106.3,
        "learn": 140.2,
        "prepare": 177.8,
    }
    assert learning_line([run]).startswith(
        "learning after each re-index (median; files, then ms): decoded 1, kept 1650, removed 0, observed 1,"
        " reused 1650, dropped 0, decode 46.5"
    )

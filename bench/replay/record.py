"""``python -m bench.replay.record``: each rule's judged record on real changes, as the engine is now.

``services/analyzer/engine/earned.py`` holds a rule loose while its judged fair share on real
changes stays under one half. This reads one or more ``bench.replay --lift-held --out X.json``
runs (every held rule reviewed as if raised, so that its would-be strict findings are there to be
judged) and ``verdicts.tsv``, and prints per rule: the record over every repository of the runs,
the record on the out-of-sample sets alone (``--out-of-sample``: sets judged before anything was
tuned on them), whether ``earned.py`` holds the rule now, and what the bar says. The bar is
``verdicts.EARN_STRICT`` over at least ``MIN_JUDGED`` findings, met both pooled and, where it has
that many findings, out of sample: a record tuned on can look better than the rule is.

The table is read by an engineer who then edits ``earned.py`` by hand (its docstring says why it is
not computed at run time); nothing here is imported by the engine.
"""

from __future__ import annotations

import argparse
import json
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import repos
from bench.replay import verdicts

DECLARED = " (declared)"
MIN_JUDGED = 4  # 0 fair of 4 is the smallest record whose 95 % Wilson upper bound is under one half


@dataclass(frozen=True)
class Record:
    rule: str
    pooled: Counter[str]
    outside: Counter[str]  # the out-of-sample sets' part
    unjudged: int
    held: bool

    @staticmethod
    def _meets(c: Counter[str]) -> bool | None:
        n = sum(c.values())
        return None if n < MIN_JUDGED else c["fair"] / n >= verdicts.EARN_STRICT

    @property
    def decision(self) -> str:
        pooled, outside = self._meets(self.pooled), self._meets(self.outside)
        if self.unjudged:
            return "judge first"
        if pooled is None:
            return "too few judged"
        if pooled and outside is not False:
            return "earns strict"
        return "stays loose"


def kind(finding: dict[str, Any]) -> str:
    """The rule, told apart when a tool of the repository declares the convention: a declared
    convention stays strict whatever the learned rule's record (earned.py), so each has its own."""
    declared = "but declared in" in finding.get("message", "")
    return finding["rule"] + (DECLARED if declared else "")


def set_of() -> dict[str, str]:
    """Repository name -> its ``bench/corpora.toml`` set."""
    listed = tomllib.loads(repos.CORPORA.read_text())["repository"]
    return {e["name"]: e.get("set", "unseen") for e in listed}


def records(findings: list[dict[str, Any]], judged: list[verdicts.Verdict], outside: set[str]) -> list[Record]:
    from services.analyzer.engine.earned import held

    index = verdicts.Index(judged)
    sets = set_of()
    pooled: dict[str, Counter[str]] = defaultdict(Counter)
    part: dict[str, Counter[str]] = defaultdict(Counter)
    unjudged: Counter[str] = Counter()
    seen: set[tuple[str, str]] = set()
    for f in findings:
        rule = kind(f)
        key = (f["commit"], f["fingerprint"])
        if key in seen:  # the same finding in two runs counts once
            continue
        seen.add(key)
        v = index.get(f)
        if v is None:
            unjudged[rule] += 1
            continue
        pooled[rule][v.verdict] += 1
        if sets.get(f["repository"]) in outside:
            part[rule][v.verdict] += 1
    rules = sorted(set(pooled) | set(unjudged), key=lambda r: (-sum(pooled[r].values()), r))
    return [Record(r, pooled[r], part[r], unjudged[r], not r.endswith(DECLARED) and held(r) is not None) for r in rules]


def _cell(c: Counter[str]) -> str:
    n = sum(c.values())
    return f"{c['fair']}/{c['debatable']}/{c['unfair']}" + (f" {c['fair'] / n:.2f}" if n else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.replay.record", description=__doc__)
    ap.add_argument("runs", nargs="+", help="bench.replay --lift-held output files")
    ap.add_argument("--out-of-sample", default="", help="corpora.toml sets judged before any tuning on them")
    ap.add_argument("--verdicts", default=str(verdicts.VERDICTS))
    args = ap.parse_args(argv)
    findings = [f for run in args.runs for f in json.loads(Path(run).read_text())["findings_judged"]]
    outside = {s for s in args.out_of_sample.split(",") if s}
    rows = records(findings, verdicts.load(Path(args.verdicts)), outside)
    print(f"rule records (fair/debatable/unfair share): pooled, out of sample ({', '.join(sorted(outside)) or '-'})")
    print(f"{'rule':<38} {'pooled':>16} {'out of sample':>16} {'unjudged':>8}  {'now':<6} decision")
    for r in rows:
        now = "held" if r.held else "strict"
        print(f"{r.rule:<38} {_cell(r.pooled):>16} {_cell(r.outside):>16} {r.unjudged:>8}  {now:<6} {r.decision}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

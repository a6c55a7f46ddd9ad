"""Verdicts on the strict findings of real changes, read as a maintainer of each project would.

``verdicts.tsv`` (committed beside this module) holds one judged finding a line: repository,
commit, fingerprint, rule, path, the flagged line's text (whitespace-normalized, cut at 100
characters), verdict (``fair`` / ``debatable`` / ``unfair``) and a one-line reason. A finding is
matched by commit and fingerprint, or, when the fingerprint scheme changed, by commit, rule, path
and line text. A verdict is written once, from the diff and the file at that commit, before any
tuning that could make it go away, and never changed to improve a figure: a finding that goes
away just leaves the judged set, and a new one is listed as unjudged until someone reads it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VERDICTS = Path(__file__).resolve().parent / "verdicts.tsv"
KINDS = ("fair", "debatable", "unfair")
TARGET_FAIR = 0.60  # issue #24: of the strict findings on real changes, in each language
EARN_STRICT = 0.50  # a rule judged fair less often than this stays loose (docs/rules.md)
TEXT_CHARS = 100


@dataclass(frozen=True)
class Verdict:
    repository: str
    commit: str
    fingerprint: str
    rule: str
    path: str
    text: str
    verdict: str
    reason: str


def load(path: Path = VERDICTS) -> list[Verdict]:
    if not path.exists():
        return []
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) != 8 or cells[6] not in KINDS:
            raise ValueError(f"{path}:{n}: expected 8 tab-separated cells ending in a verdict {KINDS} and a reason")
        out.append(Verdict(*cells))
    return out


def line_of(finding: dict[str, Any], verdict: str = "", reason: str = "") -> str:
    """A verdicts.tsv line for ``finding`` (as bench.replay records it)."""
    cells = (
        finding["repository"],
        finding["commit"],
        finding["fingerprint"],
        finding["rule"],
        finding["path"],
        finding["text"][:TEXT_CHARS],
        verdict,
        reason,
    )
    return "\t".join(c.replace("\t", " ") for c in cells)


class Index:
    def __init__(self, judged: list[Verdict]) -> None:
        self.by_fp = {(v.commit, v.fingerprint): v for v in judged}
        self.by_text = {(v.commit, v.rule, v.path, v.text): v for v in judged}

    def get(self, f: dict[str, Any]) -> Verdict | None:
        hit = self.by_fp.get((f["commit"], f["fingerprint"]))
        if hit is None:
            hit = self.by_text.get((f["commit"], f["rule"], f["path"], f["text"][:TEXT_CHARS]))
        return hit


def _share(c: Counter[str]) -> str:
    n = sum(c.values())
    return f"{c['fair'] / n:.2f}" if n else "-"


def report(findings: list[dict[str, Any]], judged: list[Verdict], show_unjudged: int = 40) -> dict[str, Any]:
    """Print the fair share per rule, repository, language and overall; list unjudged findings."""
    index = Index(judged)
    by_rule: dict[str, Counter[str]] = defaultdict(Counter)
    by_repo: dict[str, Counter[str]] = defaultdict(Counter)
    by_lang: dict[str, Counter[str]] = defaultdict(Counter)
    unjudged = []
    for f in findings:
        v = index.get(f)
        if v is None:
            unjudged.append(f)
            continue
        lang = "python" if f["language"] == "python" else "javascript/typescript"
        for table, key in ((by_rule, f["rule"]), (by_repo, f["repository"]), (by_lang, lang)):
            table[key][v.verdict] += 1
    total: Counter[str] = Counter()
    for c in by_lang.values():
        total.update(c)
    print(f"\njudged strict findings ({VERDICTS.name}): fair / debatable / unfair, fair share")
    print(f"{'rule':<40} {'fair':>5} {'deb.':>5} {'unfair':>6} {'share':>6}")
    for rule in sorted(by_rule, key=lambda r: (-sum(by_rule[r].values()), r)):
        c = by_rule[rule]
        low = "  (under 0.50: should be loose)" if sum(c.values()) and c["fair"] / sum(c.values()) < EARN_STRICT else ""
        print(f"{rule:<40} {c['fair']:>5} {c['debatable']:>5} {c['unfair']:>6} {_share(c):>6}{low}")
    for name, table in (("repository", by_repo), ("language", by_lang)):
        print(f"{name:<40} {'fair':>5} {'deb.':>5} {'unfair':>6} {'share':>6}")
        for key in sorted(table):
            c = table[key]
            mark = ""
            if name == "language":
                met = sum(c.values()) and c["fair"] / sum(c.values()) >= TARGET_FAIR
                mark = f"  (target >= {TARGET_FAIR:.2f}: {'ok' if met else 'MISSED'})"
            print(f"{key[:39]:<40} {c['fair']:>5} {c['debatable']:>5} {c['unfair']:>6} {_share(c):>6}{mark}")
    print(f"{'all':<40} {total['fair']:>5} {total['debatable']:>5} {total['unfair']:>6} {_share(total):>6}")
    print(f"unjudged strict findings: {len(unjudged)} of {len(findings)} (a figure counts only once they are judged)")
    for f in unjudged[:show_unjudged]:
        print(f"    {f['repository']} {f['commit'][:12]} {f['path']}:{f['line']} {f['rule']}: {f['message'][:140]}")
    return {
        "judged": sum(total.values()),
        "unjudged": len(unjudged),
        "fair": total["fair"],
        "debatable": total["debatable"],
        "unfair": total["unfair"],
        "by_rule": {k: dict(v) for k, v in by_rule.items()},
        "by_repository": {k: dict(v) for k, v in by_repo.items()},
        "by_language": {k: dict(v) for k, v in by_lang.items()},
    }

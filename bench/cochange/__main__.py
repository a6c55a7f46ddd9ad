"""``python -m bench.cochange``: ROSE-style co-change replay on real release histories.

See ``bench/cochange/replay.py`` for the method and ``docs/review.md`` ("Co-change replay").
Zimmermann et al. (ICSE 2004) report a top-3 hit rate of 64% for ROSE in their setting. Also
reports the precision, recall and volume of the engine's co-change findings and the sweep the
co-change bars were chosen from.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from bench.cochange import corpus
from bench.cochange.replay import (
    BEFORE,
    COCHANGE_RULES,
    HISTORY_DEPTH,
    MAX_FILES_PER_COMMIT,
    MIN_SUPPORT,
    QUERIES,
    RANKINGS,
    ROUTINE_SHARE,
    SWEEP_COMMITS,
    SWEEP_CONFIDENCE,
    TOP_K,
    VIEWS,
    Precision,
    Replay,
    Tally,
    default_variant,
    judge,
    replay,
    sweep,
)
from services.analyzer.engine import cochange
from services.analyzer.engine.thresholds import LOOSE, STRICT

OUTPUT = corpus.WORK.parent / "cochange.json"
LABELS = {
    "all": "all suggestions",
    "engine": "engine (strict)",
    "engine-loose": "engine (loose)",
    "frequency": "most changed (baseline)",
}
VIEW_LABELS = {
    "all": "all changed files",
    "core": f"without every-release files (changed in >= {ROUTINE_SHARE:.0%} of the earlier commits)",
}


def _pct(value: float | None) -> str:
    return "    -" if value is None else f"{value:>5.0%}"


def _ci(t: Tally) -> str:
    ci = t.interval(3)
    return "" if ci is None else f"{ci[0]:.0%}-{ci[1]:.0%}"


def _table(replays: list[Replay], totals: dict[str, dict[str, dict[str, Tally]]]) -> None:
    names = [r.package for r in replays]
    for view in VIEWS:
        print(f"\n{VIEW_LABELS[view]}")
        print(f"{'query':<6}{'ranking':<25}{'queries':>8}{'answered':>9}", end="")
        print("".join(f"{'top-' + str(k):>7}" for k in TOP_K), end="")
        print(f"{'top-3 95% CI':>14}  " + "".join(f"{'top-3 ' + n:>{max(10, len(n) + 7)}}" for n in names))
        for kind in QUERIES:
            for ranking in RANKINGS:
                t = totals[view][kind][ranking]
                cells = "".join(f"{_pct(t.rate(t.hits[k])):>7}" for k in TOP_K)
                mine = [r.tallies[view][kind][ranking] for r in replays]
                per = "".join(
                    f"{_pct(m.rate(m.hits[3])) + f' /{m.queries:<3}':>{max(10, len(n) + 7)}}"
                    for m, n in zip(mine, names, strict=True)
                )
                answered = _pct(t.rate(t.answered))
                print(f"{kind:<6}{LABELS[ranking]:<25}{t.queries:>8}{answered:>9}{cells}{_ci(t):>14}  {per}")


PRECISION_VARIANTS = {
    "before": ("before (no lift bar, no routine rule)", BEFORE),
    "derived": ("now, commits derived from pairs", default_variant()),
    "exact": ("now, commits given (history document)", default_variant(exact=True)),
}


def _p(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _precision_table(snapshots: list) -> dict[str, object]:
    """Every co-change finding of one-file queries judged: did the named file change?"""
    print(
        "\nprecision of the findings (each changed file shown alone, the rest hidden; correct = the named"
        "\nfile changed in that commit; recall = hidden files named / hidden files; per commit = findings"
        " / commits)"
    )
    print(f"{'engine':<40}{'level':<8}{'rule':<18}{'findings':>9}{'precision':>10}{'95% CI':>12}", end="")
    print(f"{'recall':>8}{'per commit':>11}{'every-release':>14}")
    document: dict[str, object] = {}
    for key, (label, variant) in PRECISION_VARIANTS.items():
        for level in (STRICT, LOOSE):
            got = judge(snapshots, variant, level)
            document[f"{key}/{level}"] = {rule: t.summary() for rule, t in got.items()}
            for rule in (*COCHANGE_RULES, "any"):
                t: Precision = got[rule]
                if rule != "any" and not t.findings:
                    continue
                ci = t.interval()
                cis = "" if ci is None else f"{ci[0]:.2f}-{ci[1]:.2f}"
                print(
                    f"{label:<40}{level:<8}{rule.removeprefix('cochange.'):<18}{t.findings:>9}"
                    f"{_p(t.precision):>10}{cis:>12}{_p(t.recall, 3):>8}{_p(t.per_commit, 1):>11}"
                    f"{t.every_release:>14}"
                )
    print(
        "every-release = findings naming a file changed in >= 75% of the earlier commits; the confidence"
        "\ninterval treats findings as independent (they cluster by commit: read it as a lower bound of"
        " the uncertainty)."
    )
    return document


def _sweep_table(result: dict[str, list[dict[str, object]]]) -> None:
    head = "".join(f"{'commits>=' + str(n):>19}" for n in SWEEP_COMMITS)
    for rule, knob, label in (
        ("partner", "min_lift", "cochange.partner at strict, lift >="),
        ("routine", "routine_share", "cochange.routine at strict, partner's base rate >="),
    ):
        rows = result[rule]
        print(f"\nsweep: {label} (cells: precision / recall / findings)")
        for value in dict.fromkeys(r[knob] for r in rows):
            print(f"  {knob} {value:g}{'':<10}{head}")
            for conf in SWEEP_CONFIDENCE:
                cells = [r for r in rows if r[knob] == value and r["confidence"] == conf]
                text = "".join(
                    f"{_p(c['precision']) + ' / ' + _p(c['recall'], 3) + ' / ' + str(c['findings']):>19}" for c in cells
                )
                print(f"    confidence >= {conf:<4}{'':<6}{text}")
    print("\nsensitivity: strict findings by the history needed before base rates are used (cochange.MIN_HISTORY)")
    for r in result["min_history"]:
        cells = "  ".join(
            f"{rule.removeprefix('cochange.')}: {r[rule]['findings']} at {_p(r[rule]['precision'])}"  # type: ignore[index]
            f" ({r[rule]['every_release']} every-release)"  # type: ignore[index]
            for rule in COCHANGE_RULES
        )
        print(f"  min history {r['min_history']:>3} commits: {cells}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cochange", description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--warmup", type=float, default=0.3, help="share of the oldest commits only learned from")
    args, _unknown = parser.parse_known_args(argv)  # bench.run passes every benchmark the same flags

    started = time.perf_counter()
    corpora, problems = corpus.load()
    for problem in problems:
        print(f"co-change replay: {problem}")
    if not corpora:
        print("co-change replay skipped: no release history could be downloaded or found in the cache")
        OUTPUT.parent.mkdir(parents=True, exist_ok=True)
        OUTPUT.write_text(json.dumps({"skipped": True, "problems": problems}, indent=2) + "\n")
        return 0
    built = time.perf_counter()

    replays: list[Replay] = [replay(c.package, c.git_dir, warmup_share=args.warmup, seed=args.seed) for c in corpora]
    replayed = time.perf_counter()

    print(
        f"co-change replay (ROSE-style; Zimmermann et al. 2004 report 64% top-3): one commit per release,"
        f" learned from earlier commits only\n(max {MAX_FILES_PER_COMMIT} files per commit, min support"
        f" {MIN_SUPPORT}, as the indexer); warm-up {args.warmup:.0%}, seed {args.seed}"
    )
    for c, r in zip(corpora, replays, strict=True):
        sizes = r.sizes
        print(
            f"  {c.package} {c.versions[0]}..{c.versions[-1]}: {r.commits} commits, {r.considered} after"
            f" warm-up: {len(sizes)} evaluated, {r.too_small} with < 2 files, {r.too_large} with"
            f" > {MAX_FILES_PER_COMMIT}; changed files per evaluated commit: median"
            f" {statistics.median(sizes) if sizes else 0:g}, max {max(sizes, default=0)}"
            + (f"; missing releases: {', '.join(c.missing)}" if c.missing else "")
        )
    totals = {v: {q: {name: Tally() for name in RANKINGS} for q in QUERIES} for v in VIEWS}
    for r in replays:
        for view in VIEWS:
            for kind in QUERIES:
                for ranking in RANKINGS:
                    totals[view][kind][ranking].add(r.tallies[view][kind][ranking])
    _table(replays, totals)
    print(
        "\nquery: one = one changed file shown, the others hidden; half = half of them shown."
        "\nanswered = queries with any suggestion; top-k = a hidden file among the first k;"
        " per repository: top-3 / queries."
    )
    for r in replays:
        print(f"every-release files of {r.package} at its last commit: {', '.join(r.routine) or '-'}")
    snapshots = [s for r in replays for s in r.snapshots]
    precision = _precision_table(snapshots)
    swept = sweep(snapshots)
    _sweep_table(swept)
    print(
        f"engine as configured: lift >= {cochange.MIN_LIFT:g}, routine base rate >= {cochange.ROUTINE_SHARE:g},"
        f" base rates from >= {cochange.MIN_HISTORY} commits"
    )
    done = time.perf_counter()
    seconds = f"corpus ready in {built - started:.1f} s, replay {replayed - built:.1f} s"
    print(f"{seconds}, precision {done - replayed:.1f} s")

    document = {
        "method": {
            "warmup_share": args.warmup,
            "seed": args.seed,
            "max_files_per_commit": MAX_FILES_PER_COMMIT,
            "min_support": MIN_SUPPORT,
            "history_depth": HISTORY_DEPTH,
            "top_k": list(TOP_K),
            "every_release_share": ROUTINE_SHARE,
            "reference": "Zimmermann et al., ICSE 2004 (ROSE): 64% top-3 in their setting",
        },
        "corpora": [
            {
                "package": c.package,
                "versions": c.versions,
                "missing": c.missing,
                "commits": r.commits,
                "warmup": r.warmup,
                "evaluated_commits": len(r.sizes),
                "too_small": r.too_small,
                "too_large": r.too_large,
                "changed_files_median": statistics.median(r.sizes) if r.sizes else 0,
                "every_release_files": r.routine,
                "results": {
                    v: {q: {name: r.tallies[v][q][name].summary() for name in RANKINGS} for q in QUERIES} for v in VIEWS
                },
            }
            for c, r in zip(corpora, replays, strict=True)
        ],
        "total": {v: {q: {name: totals[v][q][name].summary() for name in RANKINGS} for q in QUERIES} for v in VIEWS},
        "precision": precision,
        "sweep": swept,
        "engine": {
            "min_lift": cochange.MIN_LIFT,
            "routine_share": cochange.ROUTINE_SHARE,
            "min_history": cochange.MIN_HISTORY,
        },
        "problems": problems,
        "seconds": {
            "corpus": round(built - started, 2),
            "replay": round(replayed - built, 2),
            "precision": round(done - replayed, 2),
        },
    }
    OUTPUT.write_text(json.dumps(document, indent=2) + "\n")
    print(f"wrote {OUTPUT.relative_to(corpus.ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``python -m bench.quality``: review-quality benchmark on real code (see README.md)."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter

from bench.quality.corpus import default_specs, load
from bench.quality.evaluate import RepoResult, Score, evaluate, noise, score
from bench.quality.sweep import PERMISSIVE, sweep
from services.analyzer.engine import DEFAULT_THRESHOLDS

FAMILIES = ("naming", "vocabulary", "formatting", "dependencies", "documentation", "idioms", "structure")
LEVELS = ("strict", "loose")


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "   -"


def _cells(by_level: dict[str, Score]) -> str:
    s, lo = by_level["strict"], by_level["loose"]
    return (
        f"{s.injected:>5}  {_ratio(s.correct, s.new):>6}  {_ratio(s.detected, s.injected):>6}"
        f"  {_ratio(lo.correct, lo.new):>6}  {_ratio(lo.detected, lo.injected):>6}"
    )


HEADER = "  inj  P(str)  R(str)  P(lse)  R(lse)"


def _total(scores: dict[str, Score]) -> Score:
    t = Score()
    for s in scores.values():
        t.add(s)
    return t


def report(results: list[RepoResult], seconds: float, verbose: bool) -> None:
    print("\nper repository (held-out files of all folds; P/R on planted violations;")
    print("                N = findings per 1,000 untouched held-out lines)")
    print(f"{'repository':<18}{HEADER}  N(str)  N(lse)  files  held   kloc")
    for name in dict.fromkeys(r.name for r in results):
        mine = [r for r in results if r.name == name]
        mine_total = {lv: _total(score(mine, lv)[1]) for lv in LEVELS}
        n = {lv: noise(mine, lv) for lv in LEVELS}
        kloc = sum(r.held_lines for r in mine) / 1000
        print(
            f"{name[:17]:<18}{_cells(mine_total)}  {n['strict']:>6.2f}  {n['loose']:>6.2f}"
            f"  {mine[0].files:>5} {sum(r.held for r in mine):>5} {kloc:>6.1f}"
        )
    kinds = {lv: score(results, lv)[0] for lv in LEVELS}
    families = {lv: score(results, lv)[1] for lv in LEVELS}
    print(f"\n{'family':<18}{HEADER}  N(str)  N(lse)")
    for family in FAMILIES:
        if family in families["strict"]:
            cells = _cells({lv: families[lv][family] for lv in LEVELS})
            n_strict, n_loose = (noise(results, lv, family=family) for lv in LEVELS)
            print(f"{family:<18}{cells}  {n_strict:>6.2f}  {n_loose:>6.2f}")
    overall = {lv: _total(families[lv]) for lv in LEVELS}
    print(f"{'OVERALL':<18}{_cells(overall)}  {noise(results, 'strict'):>6.2f}  {noise(results, 'loose'):>6.2f}")
    print(f"\n{'planted violation':<18}{HEADER}")
    for kind in sorted(kinds["strict"]):
        print(f"{kind:<18}{_cells({lv: kinds[lv][kind] for lv in LEVELS})}")
    renamed = sum(s.renamed for s in kinds["strict"].values())
    restored = sum(s.restored for s in kinds["strict"].values())
    latencies = sorted(x for r in results for x in r.latencies)
    p50 = statistics.median(latencies) * 1000 if latencies else 0.0
    p99 = latencies[int(0.99 * (len(latencies) - 1))] * 1000 if latencies else 0.0
    lines = sum(r.held_lines for r in results)
    top1 = _ratio(restored, renamed)
    print(f"\nidentifier suggestion top-1 accuracy (NATURALIZE-style, strict): {top1} of {renamed}")
    n_strict, n_loose = noise(results, "strict"), noise(results, "loose")
    print(f"noise over {lines} untouched held-out lines: {n_strict:.2f} strict, {n_loose:.2f} loose per 1,000")
    print(f"check latency per file (strict): p50 {p50:.3f} ms, p99 {p99:.3f} ms over {len(latencies)} files")
    big = max(results, key=lambda r: r.model_bytes)
    print(
        f"model codec (msgpack), largest model {big.name}: {big.model_bytes / 1024:.0f} KiB, "
        f"encode {big.codec_ms[0]:.1f} ms, decode {big.codec_ms[1]:.1f} ms"
    )
    print(f"learning: {sum(r.learn_seconds for r in results):.1f} s in total; benchmark run time {seconds:.0f} s")
    if verbose:
        rules = Counter(o.rule for r in results for o in r.noise if o.level == "strict")
        print("\nstrict noise by rule:", dict(rules.most_common(20)))
        for r in results:
            for line in r.noise_text[:30]:
                print("   ", r.name, line)
        print("\nstrict misses:")
        for r in results:
            for inj in r.injections:
                hits = [o for o in inj.findings if o.level == "strict"]
                if inj.kind != "control-untested" and not any(o.detects for o in hits):
                    got = ", ".join(f"{o.rule}/{o.level}/{o.share:.2f}/{o.count}" for o in inj.findings) or "nothing"
                    print(f"    {r.name} {inj.kind} {inj.where} -> {got}")
        print("\nwrong strict findings (caused by an injection, not on a line it touched):")
        for r in results:
            for inj in r.injections:
                for o in inj.findings:
                    if o.level == "strict" and not o.correct:
                        print(f"    {r.name} {inj.kind} {inj.where} -> {o.text}")
        print("\nsuggestion misses (strict detections that do not restore the original name):")
        for r in results:
            for inj in r.injections:
                hits = [o for o in inj.findings if o.level == "strict" and o.detects]
                if inj.renamed and hits and not any(o.restores for o in hits):
                    print(f"    {r.name} {inj.kind} {inj.where} -> {', '.join(o.suggestion for o in hits)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.quality", description=__doc__)
    ap.add_argument("--repos", default="", help="comma-separated substrings of repository names")
    ap.add_argument("--seed", default="bench-1")
    ap.add_argument("--holdout", type=float, default=0.10)
    ap.add_argument("--folds", type=int, default=3, help="independent hold-outs per repository")
    ap.add_argument("--verbose", action="store_true", help="print strict noise and misses")
    ap.add_argument("--sweep", action="store_true", help="score a grid of strict thresholds per family")
    args = ap.parse_args(argv)
    wanted = [w for w in args.repos.split(",") if w]
    start = time.perf_counter()
    results: list[RepoResult] = []
    thresholds = PERMISSIVE if args.sweep else DEFAULT_THRESHOLDS
    for spec in default_specs():
        if wanted and not any(w in spec.name for w in wanted):
            continue
        repo = load(spec)
        if repo is None:
            print(f"skipped {spec.name}: not available (npm pack failed or no files)", file=sys.stderr)
            continue
        for fold in range(args.folds):
            results.append(evaluate(repo, seed=f"{args.seed}-{fold}", holdout=args.holdout, thresholds=thresholds))
        print(f"  {spec.name}: {results[-1].files} files", file=sys.stderr)
    if args.sweep:
        sweep(results)
    else:
        report(results, time.perf_counter() - start, args.verbose)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
